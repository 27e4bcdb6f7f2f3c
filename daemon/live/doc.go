// Package live is the job service's live sessions: admission (capacity,
// per-account limits, storage quota), session tokens, the one door
// contract every door attaches through (ingest.Session: the WebSocket in
// api, SIP in ingest/sip, WHIP in ingest/webrtc), and each session from
// its creation to its stored result, with the batch pass that follows it
// and the recovery of sessions a restart interrupted.
//
// A session is a goroutine that owns its state (session.go). Doors,
// timeouts, DELETE and key revocation reach it through a bounded inbox of
// typed requests (requests.go); it writes the recording (recording.go),
// acknowledges audio, and hands the 16 kHz samples to a recogniser running
// on a goroutine of its own (recogniser.go), so a slow engine never delays
// the acknowledgments; its messages are typed structs (messages.go), and
// the callback deliveries one step of the session queues are committed
// together. No lock is held across an engine call, a remote request or a
// store commit.
//
// In a cluster (a Cluster in Deps: the shared store) a session is placed
// on a node with room, adopted there when its client connects, and ended
// by a survivor when its node stops (cluster.go); a goroutine of the
// session's appends its recording to the shared store while it runs
// (recording_sync.go), and while that store is away the session holds its
// callbacks and stores its end when it is back (outage.go).
//
// It depends on the job service and the shared store only through the
// interfaces it declares (Store, Recordings, Signals in service.go,
// Cluster in cluster.go) and on the recognition pipeline
// (recognizer/pipeline); it never imports package daemon nor a store
// implementation. In a cluster the job service hands it daemon/livepg's
// Cluster over store/postgres, which its cluster tests (package live_test)
// run too.
//
// Invariants: a session's job is committed (one store commit) before any
// door sees it; a session belongs to this node and to its goroutine until
// it has ended; it finalises exactly once, however it ends, and its end
// never overwrites a job that has ended already (another node's).
package live
