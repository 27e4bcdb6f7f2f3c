package sip

import (
	"errors"

	"github.com/earshot-dev/earshot/params"
)

// A route's live options are decoded once, when the configuration is
// loaded: SetDefaults (app.Config's, at load; New's own finds them
// decoded) calls decodeOptions, Validate reports what did not decode, and
// New hands the decoded value to every call of the route (call.go's
// ingest.LiveRequest.Options; the job service copies it before setting the
// call's format).

// errOptionsUndecoded is optionsErr's answer for a Route whose SetDefaults
// has not run.
var errOptionsUndecoded = errors.New("sip: route live options not decoded (SetDefaults)")

// options is what the file gave: live, else options, else nil.
func (r *Route) options() map[string]any {
	if r.Live != nil {
		return r.Live
	}
	return r.Options
}

// decodeOptions decodes the route's options into r.live (r.liveErr when
// they do not decode), once: a Route whose options are decoded keeps them.
func (r *Route) decodeOptions() {
	if r.live != nil || r.liveErr != nil {
		return
	}
	r.live, r.liveErr = params.DecodeLiveOptions(r.options())
}

// optionsErr is why the route's options did not decode, nil when they did.
func (r *Route) optionsErr() error {
	if r.live == nil && r.liveErr == nil {
		return errOptionsUndecoded
	}
	return r.liveErr
}
