// Package webrtc is the browser door: WHIP (RFC 9725) ingest of Opus or
// G.711 audio into live sessions, with pion/webrtc.
//
// It owns one PeerConnection per live session: it negotiates only the codec
// the session was opened for (Opus for wav/pcm 16-bit 16000 Hz; PCMU for
// wav/ulaw and PCMA for wav/alaw, 8000 Hz; mono), gathers host candidates on
// a configured UDP port range before it answers (no trickle ICE), and
// passes every received G.711 payload to ingest.Session.Write as is, Opus
// decoded (ingest/codec, libopus) to 16 kHz PCM. It does not resample,
// detect speech or recognise: all of that happens behind the Session. It knows nothing of
// HTTP; api/whip.go maps its errors to statuses.
//
// Invariants: a session has at most one peer; the peer's recording ends
// exactly once (Session.Stop) when the resource is deleted, the connection
// fails or closes, or no RTP arrives for DisconnectGrace; a session that
// ends some other way closes its peer. Close closes every peer and waits
// for every goroutine the door started.
package webrtc
