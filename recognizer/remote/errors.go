package remote

import (
	"errors"
	"fmt"
)

var (
	// ErrUnavailable is returned by Stream.Finish and Engine.Translate when
	// the server cannot be reached (connection refused, reset, DNS),
	// answers 5xx, 429 or 408 on every attempt, or the circuit breaker is
	// open after repeated failures. The request may succeed later.
	ErrUnavailable = errors.New("remote: server unavailable")
	// ErrBadResponse is returned by Stream.Finish and Engine.Translate when
	// the server answers a non-retryable status (400, 401, 404, 413 ...;
	// the error is then a *StatusError carrying it) or a 2xx whose body is
	// not a verbose_json transcription.
	ErrBadResponse = errors.New("remote: bad response")
	// ErrTimeout is returned by Stream.Finish and Engine.Translate when one
	// request took longer than Config.Timeout. Timeouts are not retried
	// (a server that is too slow would only get more work) but count as a
	// failure for the circuit breaker.
	ErrTimeout = errors.New("remote: request timed out")
	// ErrTooLong is returned by Stream.Write and Engine.Translate when the
	// audio of one utterance would exceed MaxAudio.
	ErrTooLong = errors.New("remote: audio too long")
)

// StatusError is a non-2xx answer of the server. It unwraps to
// ErrUnavailable for retryable statuses (5xx, 429, 408) and to
// ErrBadResponse for the others, so callers branch with errors.Is and read
// the status with errors.As.
type StatusError struct {
	// StatusCode is the HTTP status the server answered.
	StatusCode int
	// Message is the server's error message (OpenAI's error.message, or
	// the start of the body), at most 200 bytes.
	Message string
}

func (e *StatusError) Error() string {
	if e.Message == "" {
		return fmt.Sprintf("remote: server answered status %d", e.StatusCode)
	}
	return fmt.Sprintf("remote: server answered status %d: %s", e.StatusCode, e.Message)
}

// Unwrap returns ErrUnavailable or ErrBadResponse (see StatusError).
func (e *StatusError) Unwrap() error {
	if retryableStatus(e.StatusCode) {
		return ErrUnavailable
	}
	return ErrBadResponse
}

// retryableStatus reports whether a status means "try again later".
func retryableStatus(code int) bool {
	return code >= 500 || code == 429 || code == 408
}
