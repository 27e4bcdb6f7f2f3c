// Package webrtc is the browser door: WHIP (RFC 9725) ingest of G.711 audio
// into live sessions, with pion/webrtc.
//
// It owns one PeerConnection per live session: it negotiates only PCMU or
// PCMA (whichever the session was opened for: wav/ulaw or wav/alaw, 8000 Hz,
// mono), gathers host candidates on a configured UDP port range before it
// answers (no trickle ICE), and passes every received RTP payload to
// ingest.Session.Write as is. It does not decode, resample, detect speech or
// recognise: all of that happens behind the Session. It knows nothing of
// HTTP; api/whip.go maps its errors to statuses.
//
// Invariants: a session has at most one peer; the peer's recording ends
// exactly once (Session.Stop) when the resource is deleted, the connection
// fails or closes, or no RTP arrives for DisconnectGrace; a session that
// ends some other way closes its peer. Close closes every peer and waits
// for every goroutine the door started.
package webrtc
