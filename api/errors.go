package api

import (
	"encoding/json"
	"errors"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/earshot-dev/earshot/errcode"
)

// ErrNoOpsListener is returned by RunOps when the operations endpoints are
// served on the main listener (Config.SeparateOps false). The door's
// request errors are errcode's kinds, named where they are declared
// (errcode.ErrNotAdmin, errcode.ErrRateLimited, errcode.ErrBodyTimeout).
var ErrNoOpsListener = errors.New("api: operations endpoints are on the main listener")

// status maps err to its HTTP status and client message (errcode, the one
// mapping of every door's errors).
func status(err error) (int, string) {
	return errcode.Status(err), errcode.Message(err)
}

// errorBody is the contract's error body (SPEC.md §7).
type errorBody struct {
	Timestamp        string   `json:"timestamp"`
	Path             string   `json:"path"`
	RequestID        string   `json:"request_id"`
	StatusCode       int      `json:"statusCode"`
	Message          string   `json:"message"`
	ValidationErrors []string `json:"validation_errors,omitempty"`
}

// fail writes the error body for err, mapping it to a status once, here.
// 5xx causes go to the log; their bodies say only "internal error".
func (s *Server) fail(ctx *fasthttp.RequestCtx, err error) {
	status, msg := status(err)
	body := errorBody{
		Timestamp:  time.Now().UTC().Format(timeFormat),
		Path:       string(ctx.Path()),
		RequestID:  requestID(ctx),
		StatusCode: status,
		Message:    msg,
	}
	var ve *errcode.ValidationError
	if errors.As(err, &ve) {
		body.ValidationErrors = ve.Problems
		if body.ValidationErrors == nil {
			body.ValidationErrors = []string{}
		}
	}
	if status >= 500 {
		s.log.Error("request failed", "path", body.Path, "request_id", body.RequestID, "status", status, "error", err)
	}
	s.writeJSON(ctx, status, body)
}

// errBadRequest is a 400 for one field.
func errBadRequest(problems ...string) error {
	return &errcode.ValidationError{Problems: problems}
}

func (s *Server) writeJSON(ctx *fasthttp.RequestCtx, status int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		s.log.Error("encode response", "error", err)
		status, b = 500, []byte(`{"message":"internal error"}`)
	}
	ctx.SetStatusCode(status)
	ctx.SetContentType("application/json")
	ctx.SetBody(b)
}
