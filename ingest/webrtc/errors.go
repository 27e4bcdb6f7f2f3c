package webrtc

import (
	"fmt"

	"github.com/earshot-dev/earshot/errcode"
)

// Errors of Offer and End. Each is derived from one of the contract's
// kinds (package errcode), which holds its HTTP status; the WHIP handler
// in api only passes them on.
var (
	// ErrBadOffer is returned (inside an *errcode.ValidationError naming
	// "sdp") when the offer is not a usable SDP offer (unparsable, too
	// large, no ICE credentials or fingerprint): 400.
	ErrBadOffer = errcode.ErrInvalid.Sub("webrtc: bad sdp offer", "")
	// ErrNoCodec is returned when the offer has no audio in opus, PCMU or
	// PCMA, or not in the one the session was opened for: 406.
	ErrNoCodec = errcode.ErrNotAcceptable.Sub("webrtc: offer has no audio codec the session takes",
		"webrtc: offer has no audio codec the session takes")
	// ErrBadToken is returned when the bearer token is malformed or names
	// another session than the resource's: 401.
	ErrBadToken = errcode.ErrUnauthorized.Sub("webrtc: token does not name this session",
		"webrtc: token does not name this session")
	// ErrFormat is returned when the session was opened for a format no
	// WebRTC codec fills: mono 8 kHz G.711 (wav/ulaw or wav/alaw, PCMU or
	// PCMA) or mono 16 kHz 16-bit wav/pcm (Opus, decoded by the door): 422.
	ErrFormat = errcode.ErrCannotServe.Sub("webrtc: session format cannot be carried over webrtc",
		"webrtc: session format cannot be carried over webrtc")
	// ErrConnected is returned when the session already has a WebRTC peer: 409.
	ErrConnected = errcode.ErrConflict.Sub("webrtc: session already has a webrtc peer",
		"webrtc: session already has a webrtc peer: DELETE its WHIP resource first")
	// ErrNoResource is returned when End names no active WHIP resource: 404.
	ErrNoResource = errcode.ErrNotFound.Sub("webrtc: no such whip resource", "webrtc: no such whip resource")
	// ErrClosed is returned by Offer after Close: 503.
	ErrClosed = errcode.ErrShuttingDown.Sub("webrtc: door closed", "")
)

// badOffer is ErrBadOffer as the contract's 400 naming the sdp field.
func badOffer(format string, a ...any) error {
	return &errcode.ValidationError{Problems: []string{"sdp: " + fmt.Sprintf(format, a...)}, Cause: ErrBadOffer}
}

// refuse is an error of kind whose client message is the kind's text and
// the detail.
func refuse(kind *errcode.Kind, format string, a ...any) error {
	return &errcode.Error{Kind: kind, Msg: kind.Error() + ": " + fmt.Sprintf(format, a...)}
}
