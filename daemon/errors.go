package daemon

import (
	"fmt"

	"github.com/earshot-dev/earshot/errcode"
	"github.com/earshot-dev/earshot/recognizer/pipeline"
)

// The job service's errors are the kinds of package errcode (which holds
// their statuses and client messages, once) and the lower packages'
// sentinels derived from them (store.ErrNotFound, store.ErrUnauthorized,
// store.ErrNoSpace, params.ErrCannotServe, ingest.ErrAtCapacity): callers
// name those, not aliases here.

// newError is a job-service error whose message is written for the client
// and names the field it is about (errcode.Error).
func newError(kind, cause error, format string, a ...any) *errcode.Error {
	return &errcode.Error{Kind: kind, Msg: fmt.Sprintf(format, a...), Cause: cause}
}

// The client-facing reasons of unusable audio (uploaded or fetched).
const (
	reasonNotAudio = pipeline.ReasonNotAudio
	reasonQuota    = "storage quota of this account exceeded (limit %d bytes): delete files or jobs to free space"
)
