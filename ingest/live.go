// Package ingest gets audio into earshot. This file declares the one door
// contract every live door (WebSocket, SIP, WebRTC) calls; the daemon's job
// service implements it. Conversion to 16 kHz mono, VAD and endpointing
// happen behind Session, never in a door.
package ingest

import "context"

// Session is one live session as a door sees it. Write takes raw audio in
// the session's negotiated format (any length; partial frames are carried
// to the next call); Stop ends the recording and finalises the job once;
// Done is closed when the session has ended.
type Session interface {
	Write(ctx context.Context, audio []byte) error
	Stop(ctx context.Context) error
	Done() <-chan struct{}
}
