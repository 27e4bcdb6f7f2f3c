package sphinx

import "errors"

var (
	// ErrInit is returned by New when PocketSphinx rejects the
	// configuration or fails to load a model.
	ErrInit = errors.New("sphinx: decoder init failed")
	// ErrDecode is returned by Stream.Write and Stream.Finish when a
	// PocketSphinx call on the decoder reports failure.
	ErrDecode = errors.New("sphinx: decode failed")
	// ErrVocabulary is returned by Engine.NewStream when PocketSphinx
	// refuses a stream's vocabulary (a word it cannot add, a language
	// model it cannot build); the decoder is then replaced.
	ErrVocabulary = errors.New("sphinx: vocabulary not applied")
)
