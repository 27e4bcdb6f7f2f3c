// Package ingest gets audio into earshot. This file declares the one door
// contract every live door (WebSocket, SIP, WebRTC) calls; the job
// service's live sessions (daemon/live) implement it. Conversion to 16 kHz
// mono, VAD and endpointing happen behind Session, never in a door.
package ingest

import (
	"context"
	"time"

	"github.com/earshot-dev/earshot/errcode"
	"github.com/earshot-dev/earshot/ingest/media"
	"github.com/earshot-dev/earshot/params"
)

// ErrAtCapacity is returned by OpenLive when no more live sessions can be
// opened; the job service's own ErrAtCapacity must match it with
// errors.Is, so a door maps it (SIP 503) without importing the service.
var ErrAtCapacity = errcode.ErrAtCapacity.Sub("ingest: at capacity", "")

// Session is one door's attachment to a live session, the same for every
// door. ID is the live job's id; Format is the audio the session was
// opened for (what Write takes; the WebRTC door negotiates its codec from
// it); Write takes raw audio in that format (any length; partial frames
// are carried to the next call); Stop ends the recording and finalises the
// job once (post-processing and callbacks follow), returning when it is
// stored, ctx bounding the post-processing (a door attached with a
// Listener, whose client hears the stop's acknowledgment and the end as
// messages, gets it back once the session has the stop, in line behind the
// audio written before it); Done is closed when the session has ended,
// however it ended; Err is then why it was ended from outside (its API key
// was revoked), nil when it ended on its own.
//
// An attachment lasts as long as the context it was opened or attached
// with: when that ends before Stop, the door has gone away and the session
// waits live.reconnect_grace for a new attachment before it finalises.
type Session interface {
	ID() string
	Format() media.Format
	Write(ctx context.Context, audio []byte) error
	Stop(ctx context.Context) error
	Done() <-chan struct{}
	Err() error
}

// Listener takes a session's server messages for a door that has a client
// reading them (the WebSocket). Send must not block: it returns false when
// the client cannot take the message now (it is dropped, and logged). Kick
// closes the client: a newer connection took the session over.
type Listener interface {
	Send(msg []byte) bool
	Kick()
}

// LiveRequest opens a live session from a door that has no HTTP request of
// its own (a SIP call). The job service implements
// OpenLive(ctx, LiveRequest) (Session, error); each door declares that
// one-method interface where it uses it.
type LiveRequest struct {
	// Account owns the job (a SIP route's account).
	Account string
	// Format is the audio the door will Write.
	Format media.Format
	// Options are the live options, as params.DecodeLiveOptions decoded
	// them (the audio format fields are Format's); the job service checks
	// their languages against its engines. It does not change them.
	Options *params.Live
	// Metadata is merged into the job's custom_metadata (call id, SIPREC
	// participants...); it must not be logged above debug.
	Metadata map[string]any
	// Source names the door ("sip") in post_session_metadata.
	Source string
}

// LiveCreated is a live session just created for a door to attach to
// (POST /v2/live): its job's id and creation time, the token of its
// WebSocket URL, and the base URL of the node that runs it in a cluster
// ("" on one box: the request's own). The job service's CreateLive
// returns it; the HTTP door declares that method where it uses it.
type LiveCreated struct {
	ID        string
	CreatedAt time.Time
	Token     string
	NodeURL   string
}
