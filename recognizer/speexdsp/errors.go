package speexdsp

import "errors"

var (
	// ErrInit is returned by New when SpeexDSP cannot create a state or
	// rejects a setting.
	ErrInit = errors.New("speexdsp: preprocessor init failed")
)
