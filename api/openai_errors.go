package api

import (
	"context"
	"errors"
	"strings"

	"github.com/valyala/fasthttp"

	"github.com/earshot-dev/earshot/errcode"
)

// errJobTimeout is returned when a /v1 request's job has not ended within
// openai.timeout: 503 (the job goes on; with openai.keep_jobs it stays in
// /v2/pre-recorded).
var errJobTimeout = errcode.ErrUnavailable.Sub("api: openai job not done within openai.timeout",
	"the transcription did not finish within openai.timeout; try again later")

// fieldError is a /v1 request field that is wrong: its status is its
// Kind's (400 unless said otherwise), and OpenAI's error body names the
// field as param.
//
// A failed job (jobFailure, api/openai_format.go) answers the status and
// message it stored.
type fieldError struct {
	Kind  error  // an errcode kind; nil is errcode.ErrInvalid
	Param string // the multipart field, as OpenAI names it
	Code  string // OpenAI's error code ("invalid_value", "model_not_found" ...)
	Msg   string // for the client, naming the field
}

func (e *fieldError) Error() string { return "openai: " + e.Msg }

// Unwrap returns the kind, so errcode.Status maps the error.
func (e *fieldError) Unwrap() error {
	if e.Kind == nil {
		return errcode.ErrInvalid
	}
	return e.Kind
}

// badField is a 400 naming param.
func badField(param, code, msg string) error {
	return &fieldError{Param: param, Code: code, Msg: msg}
}

// oaiError is OpenAI's error body: {"error": {message, type, param, code}}.
type oaiError struct {
	Error oaiErrorDetail `json:"error"`
}

type oaiErrorDetail struct {
	Message string  `json:"message"`
	Type    string  `json:"type"`
	Param   *string `json:"param"`
	Code    *string `json:"code"`
}

// openAIError maps err to the /v1 door's status and OpenAI's error body:
// the one mapping of this door (docs/PROTOCOL.md, OpenAI-compatible door).
// The status is errcode's, but a request the appliance cannot take (422
// on /v2: not audio, a language no engine serves) is 400 as OpenAI
// answers it. param names the field a client can fix: the multipart
// field of a fieldError, file for audio that is too large or not
// readable.
func openAIError(err error) (int, oaiErrorDetail) {
	st, msg := status(err)
	var param, code string
	var fe *fieldError
	var ve *errcode.ValidationError
	var jf *jobFailure
	switch {
	case errors.As(err, &jf):
		st, msg = jf.status, jf.msg
		if st < 400 { // not an error status: a record that lost it
			st = fasthttp.StatusInternalServerError
		}
	case errors.As(err, &fe):
		param, code, msg = fe.Param, fe.Code, fe.Msg
	case errors.As(err, &ve):
		msg = "invalid request: " + strings.Join(ve.Problems, "; ")
	case errors.Is(err, errcode.ErrUnauthorized):
		code, msg = "invalid_api_key", "missing or invalid API key (Authorization: Bearer KEY, or x-service-key)"
	case errors.Is(err, errcode.ErrRateLimited):
		code = "rate_limit_exceeded"
	case errors.Is(err, errcode.ErrQuota):
		code = "insufficient_quota"
	case errors.Is(err, errcode.ErrTooLarge):
		param, code = "file", "file_too_large"
	case errors.Is(err, errcode.ErrBadAudio):
		param, code = "file", "invalid_file_format"
	case errors.Is(err, errcode.ErrCannotServe):
		code = "invalid_value"
	}
	return openAIStatus(st, msg, param, code)
}

// openAIStatus is the /v1 status and body of an earshot status: 422 is
// 400; the type is invalid_request_error for the client's errors,
// requests for a rate limit (as OpenAI's), insufficient_quota for the
// storage quota, server_error for the appliance's.
func openAIStatus(st int, msg, param, code string) (int, oaiErrorDetail) {
	if st == fasthttp.StatusUnprocessableEntity {
		st = fasthttp.StatusBadRequest
	}
	typ := "invalid_request_error"
	switch {
	case st == fasthttp.StatusTooManyRequests:
		typ = "requests"
	case code == "insufficient_quota":
		typ = "insufficient_quota"
	case st >= 500:
		typ = "server_error"
	}
	d := oaiErrorDetail{Message: msg, Type: typ}
	if param != "" {
		d.Param = &param
	}
	if code != "" {
		d.Code = &code
	}
	return st, d
}

// failOpenAI writes OpenAI's error body for err. 5xx causes go to the log;
// their bodies say only what errcode lets the client see. An error the
// client cannot fix by retrying carries x-should-retry: false, which the
// official clients obey.
func (s *Server) failOpenAI(ctx *fasthttp.RequestCtx, err error) {
	switch {
	case errors.Is(err, context.DeadlineExceeded):
		err = errors.Join(errJobTimeout, err)
	case errors.Is(err, context.Canceled):
		err = errors.Join(errcode.ErrShuttingDown, err)
	}
	st, d := openAIError(err)
	s.writeOpenAIError(ctx, st, d, err)
}

// writeOpenAIError writes one error body (err, when not nil, is the cause
// logged for a 5xx).
func (s *Server) writeOpenAIError(ctx *fasthttp.RequestCtx, st int, d oaiErrorDetail, err error) {
	if st >= 500 && err != nil {
		s.log.Error("request failed", "path", string(ctx.Path()), "request_id", requestID(ctx), "status", st, "error", err)
	}
	if st != fasthttp.StatusTooManyRequests && st != fasthttp.StatusServiceUnavailable && st != fasthttp.StatusRequestTimeout {
		ctx.Response.Header.Set("x-should-retry", "false")
	}
	s.writeJSON(ctx, st, oaiError{Error: d})
}
