// Package daemon is the job service: the one service every door calls to
// create, read, list and delete jobs, uploads, keys and live sessions,
// which it keeps durable in the store, runs on its pre-recorded workers and
// the live sessions of package daemon/live, and stops in bounded stages.
//
// It owns the jobs' lifecycle (jobs.go, worker.go, fetch.go, crash.go),
// the store it opens (store.go), its blob files (audiofile.go), a
// cluster's heartbeats and the shared store as the live sessions use it
// (nodes.go, cluster_live.go), the staged shutdown (shutdown.go) and its Config (config.go: its keys and the
// sections of the modules it runs). The modules it runs beside its workers
// are packages of their own, each with its Config or inputs: the live
// sessions (daemon/live), the callback outbox (callback), audio_url
// downloads (ingest/fetch), retention (retention), the storage quota
// (quota), the admin socket (admin), the crash report (crash) and the
// metrics registry (metrics).
//
// Recognition itself (engines, routing, fallback, transcription, add-ons,
// the result object) is package recognizer/pipeline, which the daemon loads
// from its config (Config.Pipeline) and calls; the pipeline never imports
// the daemon. The doors and their configs (api, ingest/sip, ingest/webrtc)
// are outside it: app (Run) builds and runs them and holds their sections.
//
// Invariant: a job or upload is committed to the store before any caller sees
// success. The daemon imports neither the api package nor any door;
// cmd/earshotd joins them.
package daemon
