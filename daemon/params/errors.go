package params

import (
	"errors"
	"strings"
)

// ErrCannotServe is returned (wrapped, with a message naming the field) for
// a well-formed request that this appliance cannot serve: the contract's 422.
var ErrCannotServe = errors.New("cannot serve")

// ValidationError is returned for a malformed request: the contract's 400.
// Problems has one entry per offending field, each starting with the field's
// JSON path ("sample_rate must be one of 8000, 16000, 32000, 44100, 48000").
type ValidationError struct {
	Problems []string
}

func (e *ValidationError) Error() string {
	return "invalid request: " + strings.Join(e.Problems, "; ")
}
