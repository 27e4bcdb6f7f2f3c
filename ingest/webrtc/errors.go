package webrtc

import "errors"

// Errors of Offer and End; api/whip.go maps each to one HTTP status.
var (
	// ErrBadOffer is returned when the offer is not a usable SDP offer
	// (unparsable, too large, no ICE credentials or fingerprint).
	ErrBadOffer = errors.New("webrtc: bad sdp offer")
	// ErrNoCodec is returned when the offer has no audio in opus, PCMU or
	// PCMA, or not in the one the session was opened for.
	ErrNoCodec = errors.New("webrtc: offer has no audio codec the session takes")
	// ErrBadToken is returned when the bearer token is malformed or names
	// another session than the resource's.
	ErrBadToken = errors.New("webrtc: token does not name this session")
	// ErrFormat is returned when the session was opened for a format no
	// WebRTC codec fills: mono 8 kHz G.711 (wav/ulaw or wav/alaw, PCMU or
	// PCMA) or mono 16 kHz 16-bit wav/pcm (Opus, decoded by the door).
	ErrFormat = errors.New("webrtc: session format cannot be carried over webrtc")
	// ErrConnected is returned when the session already has a WebRTC peer.
	ErrConnected = errors.New("webrtc: session already has a webrtc peer")
	// ErrNoResource is returned when End names no active WHIP resource.
	ErrNoResource = errors.New("webrtc: no such whip resource")
	// ErrClosed is returned by Offer after Close.
	ErrClosed = errors.New("webrtc: door closed")
)
