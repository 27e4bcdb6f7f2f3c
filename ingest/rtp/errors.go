package rtp

import "errors"

var (
	// ErrNoPorts is returned by Ports.Listen when every port pair of the
	// range is in use or cannot be bound.
	ErrNoPorts = errors.New("rtp: no free port pair")

	// ErrTimeout is returned by Receiver.Run when no RTP arrived on any
	// stream for the configured timeout while the call was not on hold.
	ErrTimeout = errors.New("rtp: inactivity timeout")
)
