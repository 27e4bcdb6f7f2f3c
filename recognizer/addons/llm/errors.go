package llm

import (
	"errors"

	"github.com/earshot-dev/earshot/recognizer/openai"
)

// The errors of Complete and the add-on functions. The backend's are package
// openai's, which the speech and chat backends share, under this package's
// names.
var (
	// ErrBackend is returned (inside a *BackendError) when the server
	// answers with an HTTP error status after any retries.
	ErrBackend = openai.ErrStatus
	// ErrTimeout is returned when an attempt got no complete answer
	// within Config.Timeout (not retried), or when the job's Budget or
	// the caller's deadline ran out.
	ErrTimeout = openai.ErrTimeout
	// ErrUnavailable is returned when the server could not be reached
	// (connection refused, DNS, reset) or answered 408, 429 or 5xx after
	// any retries.
	ErrUnavailable = openai.ErrUnavailable
	// ErrMalformed is returned when a 2xx answer is not a chat completion
	// (bad JSON, no choices, over MaxResponseBytes) or does not follow the
	// requested format (a translation with the wrong number of lines).
	ErrMalformed = openai.ErrBadResponse
	// ErrTooLarge is returned by AnswerPrompts for a transcript longer
	// than Config.MaxInputChars.
	ErrTooLarge = errors.New("llm: input too large")
	// ErrInvalidConfig is returned by New for a Config that fails
	// Validate.
	ErrInvalidConfig = errors.New("llm: invalid config")
)

// BackendError is an HTTP error status from the server
// (openai.StatusError): errors.Is finds ErrBackend through it.
type BackendError = openai.StatusError
