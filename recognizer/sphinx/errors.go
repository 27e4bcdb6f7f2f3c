package sphinx

import "errors"

var (
	// ErrInit is returned by New when PocketSphinx rejects the
	// configuration or fails to load a model.
	ErrInit = errors.New("sphinx: decoder init failed")
	// ErrDecode is returned by Stream.Write and Stream.Finish when a
	// PocketSphinx call on the decoder reports failure.
	ErrDecode = errors.New("sphinx: decode failed")
)
