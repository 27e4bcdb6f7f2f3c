package remote

import (
	"errors"

	"github.com/earshot-dev/earshot/recognizer/openai"
)

// The errors of Stream.Finish and Engine.Translate: package openai's, which
// the speech and chat backends share, under this package's names.
var (
	// ErrUnavailable is returned when the server cannot be reached
	// (connection refused, reset, DNS), answers 5xx, 429 or 408 on every
	// attempt, or the circuit breaker is open after repeated failures. The
	// request may succeed later.
	ErrUnavailable = openai.ErrUnavailable
	// ErrBadResponse is returned when the server answers a non-retryable
	// status (400, 401, 404, 413 ...; the error is then a *StatusError
	// carrying it) or a 2xx whose body is not a verbose_json transcription.
	ErrBadResponse = openai.ErrBadResponse
	// ErrTimeout is returned when one request took longer than
	// Config.Timeout. Timeouts are not retried (a server that is too slow
	// would only get more work) but count as a failure for the circuit
	// breaker.
	ErrTimeout = openai.ErrTimeout
	// ErrTooLong is returned by Stream.Write and Engine.Translate when the
	// audio of one utterance would exceed MaxAudio.
	ErrTooLong = errors.New("remote: audio too long")
)

// StatusError is a non-2xx answer of the server (openai.StatusError): it
// unwraps to ErrUnavailable for retryable statuses (5xx, 429, 408) and to
// ErrBadResponse for the others.
type StatusError = openai.StatusError
