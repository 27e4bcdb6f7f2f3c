package params

import (
	"fmt"

	"github.com/earshot-dev/earshot/errcode"
)

// ErrCannotServe is returned (inside an *errcode.Error whose Msg names the
// field and is shown to the client) for a well-formed request that this
// appliance cannot serve: the contract's 422.
var ErrCannotServe = errcode.ErrCannotServe.Sub("cannot serve", "")

// ValidationError is returned for a malformed request: the contract's 400.
// Problems has one entry per offending field, each starting with the field's
// JSON path ("sample_rate must be one of 8000, 16000, 32000, 44100, 48000").
type ValidationError = errcode.ValidationError

// cannotServe is the 422 for one field: its message, naming the field, is
// the client's.
func cannotServe(format string, a ...any) error {
	return &errcode.Error{Kind: ErrCannotServe, Msg: fmt.Sprintf(format, a...)}
}
