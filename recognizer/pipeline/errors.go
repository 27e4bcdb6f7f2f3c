package pipeline

import (
	"errors"
	"fmt"

	"github.com/earshot-dev/earshot/errcode"
)

// ErrEngineUnavailable is returned (wrapped in an *errcode.Error naming the
// engine) when a job's remote engine cannot be reached, times out or keeps
// failing: status 503.
var ErrEngineUnavailable = errcode.ErrEngineUnavailable.Sub("pipeline: engine unavailable", "")

// ErrEngineFailed is returned (wrapped in an *errcode.Error naming the
// engine) when a job's remote engine answers something that is not a
// transcription (malformed JSON, a 4xx): status 500 with that message.
var ErrEngineFailed = errcode.ErrEngineFailed.Sub("pipeline: engine failed", "")

// The client-facing reasons of unusable audio (uploaded, fetched or given
// to Transcriber.TranscribeFile).
const (
	// ReasonNotAudio is the message of audio that cannot be decoded
	// (errcode.ErrBadAudio).
	ReasonNotAudio = "audio: not a readable audio file"
	// ReasonTooLong is the message of audio over the duration limit
	// (errcode.ErrTooLarge); its verb takes the limit.
	ReasonTooLong = "audio: longer than the limit of %s"
	// ReasonTooManyChannels is the message of audio with more channels
	// than a job takes (errcode.ErrTooLarge); its verb takes the limit.
	ReasonTooManyChannels = "audio: more than %d channels"
	// ReasonTooMuchAudio is the message of audio whose channels would
	// decode to more than limits.max_decoded_bytes (errcode.ErrTooLarge);
	// its verb takes the limit as audio summed over channels.
	ReasonTooMuchAudio = "audio: duration times channels over the limit of %s of audio summed over its channels"
)

// errUnsupportedTypes is pii_redaction's error for entity types the
// appliance cannot detect (accepted, reported, not rejected: PROTOCOL.md).
var errUnsupportedTypes = errors.New("pii_redaction: entity types this appliance cannot detect")

// errAddonPanic is returned by an add-on run that panicked.
var errAddonPanic = errors.New("pipeline: add-on panicked")

// isEngineError reports whether err is a remote engine's failure
// (ErrEngineUnavailable or ErrEngineFailed).
func isEngineError(err error) bool {
	return errors.Is(err, ErrEngineUnavailable) || errors.Is(err, ErrEngineFailed)
}

// newError is a contract error of kind with a client-facing message.
func newError(kind, cause error, format string, a ...any) *errcode.Error {
	return &errcode.Error{Kind: kind, Msg: fmt.Sprintf(format, a...), Cause: cause}
}
