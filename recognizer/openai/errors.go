package openai

import (
	"errors"
	"fmt"
)

var (
	// ErrUnavailable is returned when the server cannot be reached
	// (connection refused, reset, DNS), answers 408, 429 or 5xx on every
	// attempt, or the caller's Attempts refused an attempt (an open
	// circuit). The request may succeed later.
	ErrUnavailable = errors.New("openai: server unavailable")
	// ErrBadResponse is returned when the server answers a non-retryable
	// status (as a *StatusError) or a 2xx body the caller cannot use (over
	// the client's response bound here; the callers' parsers wrap it too).
	ErrBadResponse = errors.New("openai: bad response")
	// ErrTimeout is returned when an attempt took longer than
	// Endpoint.Timeout. Not retried.
	ErrTimeout = errors.New("openai: request timed out")
	// ErrStatus is returned (inside a *StatusError) for any non-2xx
	// answer, retryable or not.
	ErrStatus = errors.New("openai: error status")
)

// StatusError is a non-2xx answer of the server. It unwraps to ErrStatus
// and to ErrUnavailable for retryable statuses (5xx, 429, 408) or
// ErrBadResponse for the others, so callers branch with errors.Is and read
// the status with errors.As.
type StatusError struct {
	// StatusCode is the HTTP status the server answered.
	StatusCode int
	// Message is the server's error message (OpenAI's error.message,
	// FastAPI's detail, or the start of the body), at most 200 bytes.
	Message string
}

func (e *StatusError) Error() string {
	if e.Message == "" {
		return fmt.Sprintf("server answered status %d", e.StatusCode)
	}
	return fmt.Sprintf("server answered status %d: %s", e.StatusCode, e.Message)
}

// Unwrap returns ErrStatus and ErrUnavailable or ErrBadResponse.
func (e *StatusError) Unwrap() []error {
	if Retryable(e.StatusCode) {
		return []error{ErrStatus, ErrUnavailable}
	}
	return []error{ErrStatus, ErrBadResponse}
}

// Retryable reports whether a status means "try again later".
func Retryable(code int) bool {
	return code >= 500 || code == 429 || code == 408
}
