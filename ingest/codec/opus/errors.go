package opus

import "errors"

var (
	// ErrInit is returned by NewDecoder for a rate or channel count libopus
	// does not take, or when it cannot create a state.
	ErrInit = errors.New("opus: decoder init failed")
	// ErrPacket is returned by Decode for a payload libopus refuses
	// (corrupt, or longer than the output can hold).
	ErrPacket = errors.New("opus: bad packet")
	// ErrClosed is returned by a Decoder used after Close.
	ErrClosed = errors.New("opus: decoder closed")
)
