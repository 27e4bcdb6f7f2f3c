// Package ingest gets audio into earshot. This file declares the one door
// contract every live door (WebSocket, SIP, WebRTC) calls; the daemon's job
// service implements it. Conversion to 16 kHz mono, VAD and endpointing
// happen behind Session, never in a door.
package ingest

import (
	"context"

	"github.com/earshot-dev/earshot/errcode"
)

// ErrAtCapacity is returned by OpenLive when no more live sessions can be
// opened; the daemon's own ErrAtCapacity must match it with errors.Is, so a
// door maps it (SIP 503) without importing the daemon.
var ErrAtCapacity = errcode.ErrAtCapacity.Sub("ingest: at capacity", "")

// Session is one live session as a door sees it. ID is the live job's id;
// Write takes raw audio in the session's negotiated format (any length;
// partial frames are carried to the next call); Stop ends the recording and
// finalises the job once (post-processing and callbacks follow); Done is
// closed when the session has ended, however it ended.
type Session interface {
	ID() string
	Write(ctx context.Context, audio []byte) error
	Stop(ctx context.Context) error
	Done() <-chan struct{}
}

// LiveRequest opens a live session from a door that has no HTTP request of
// its own (a SIP call). The daemon's job service implements
// OpenLive(ctx, LiveRequest) (Session, error); each door declares that
// one-method interface where it uses it.
type LiveRequest struct {
	// Account owns the job (a SIP route's account).
	Account string
	// Params are the live options as a POST /v2/live JSON body, validated
	// exactly like one; encoding, sample_rate and channels must describe
	// what the door will Write.
	Params []byte
	// Metadata is merged into the job's custom_metadata (call id, SIPREC
	// participants...); it must not be logged above debug.
	Metadata map[string]any
	// Source names the door ("sip", "webrtc") in post_session_metadata.
	Source string
}
