package diarization

import "errors"

var (
	// ErrNoAudio is returned by Diarize when the utterances must be
	// clustered by voice but no audio channel was given.
	ErrNoAudio = errors.New("diarization: no audio")
	// ErrChannel is returned by Diarize for an utterance whose channel has
	// no audio.
	ErrChannel = errors.New("diarization: utterance channel out of range")
	// ErrConfig is wrapped by Config.Validate and Diarize for an invalid
	// configuration.
	ErrConfig = errors.New("diarization: invalid config")
)
