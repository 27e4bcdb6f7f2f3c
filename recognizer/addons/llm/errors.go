package llm

import (
	"errors"
	"fmt"
)

var (
	// ErrBackend is returned (inside a *BackendError) when the server
	// answers with an HTTP error status after any retries.
	ErrBackend = errors.New("llm: backend error")
	// ErrTimeout is returned when an attempt got no complete answer
	// within Config.Timeout and no retry was left, or when the job's
	// Budget or the caller's deadline ran out.
	ErrTimeout = errors.New("llm: timeout")
	// ErrUnavailable is returned when the server could not be reached
	// (connection refused, DNS, reset) after any retries.
	ErrUnavailable = errors.New("llm: backend unavailable")
	// ErrMalformed is returned when a 2xx answer is not a chat completion
	// (bad JSON, no choices, over MaxResponseBytes) or does not follow the
	// requested format (a translation with the wrong number of lines).
	ErrMalformed = errors.New("llm: malformed response")
	// ErrTooLarge is returned by AnswerPrompts for a transcript longer
	// than Config.MaxInputChars.
	ErrTooLarge = errors.New("llm: input too large")
	// ErrInvalidConfig is returned by New for a Config that fails
	// Validate.
	ErrInvalidConfig = errors.New("llm: invalid config")
)

// BackendError is an HTTP error status from the server. It unwraps to
// ErrBackend.
type BackendError struct {
	StatusCode int
	// Message is the server's error message (OpenAI-style
	// {"error":{"message"}} or the start of the body), at most 200 bytes.
	Message string
}

func (e *BackendError) Error() string {
	if e.Message == "" {
		return fmt.Sprintf("llm: backend status %d", e.StatusCode)
	}
	return fmt.Sprintf("llm: backend status %d: %s", e.StatusCode, e.Message)
}

// Unwrap makes errors.Is(err, ErrBackend) true.
func (e *BackendError) Unwrap() error { return ErrBackend }
