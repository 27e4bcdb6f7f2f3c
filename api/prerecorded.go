package api

import (
	"bytes"
	"fmt"
	"io"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/earshot-dev/earshot/errcode"
	"github.com/earshot-dev/earshot/params"
	"github.com/earshot-dev/earshot/store"
)

// readJSON reads a JSON request body: a Content-Type other than
// application/json (when one is given) is a 400, then as readBody.
func (s *Server) readJSON(ctx *fasthttp.RequestCtx) ([]byte, error) {
	if ct := ctx.Request.Header.ContentType(); len(ct) > 0 && !bytes.HasPrefix(bytes.ToLower(ct), []byte("application/json")) {
		return nil, errBadRequest("body: Content-Type must be application/json")
	}
	return s.readBody(ctx)
}

// readBody reads a request body, at most MaxBodyBytes.
func (s *Server) readBody(ctx *fasthttp.RequestCtx) ([]byte, error) {
	limit := s.cfg.MaxBodyBytes
	if n := ctx.Request.Header.ContentLength(); n > int(limit) {
		refuseBody(ctx)
		return nil, fmt.Errorf("%w: body of %d bytes > limit %d", errcode.ErrTooLarge, n, limit)
	}
	var buf bytes.Buffer
	body := s.newClientBody(ctx)
	n, err := io.Copy(&buf, io.LimitReader(body, limit+1))
	if err != nil {
		return nil, body.blame(errBadRequest("body: could not be read"))
	}
	if n > limit {
		refuseBody(ctx)
		return nil, fmt.Errorf("%w: body over limit %d", errcode.ErrTooLarge, limit)
	}
	return buf.Bytes(), nil
}

// Draining a refused body: at most refusedDrainBytes, for at most
// refusedDrainTime.
const (
	refusedDrainBytes = 4 << 20
	refusedDrainTime  = 2 * time.Second
)

// refuseBody ends the connection after this response, whose request body
// may be partly unread. It first reads and drops what the client is still
// sending, within bounds: closing a socket with unread data makes the
// kernel reset the connection, and the reset can destroy the error
// response before the client reads it (net/http's server drains likewise).
func refuseBody(ctx *fasthttp.RequestCtx) {
	ctx.SetConnectionClose()
	body := ctx.RequestBodyStream()
	if body == nil || ctx.Request.Header.ContentLength() == 0 {
		return
	}
	if c := ctx.Conn(); c != nil {
		c.SetReadDeadline(time.Now().Add(refusedDrainTime))
	}
	io.CopyN(io.Discard, body, refusedDrainBytes)
}

func (s *Server) createPreRecorded(ctx *fasthttp.RequestCtx) {
	body, err := s.readJSON(ctx)
	if err != nil {
		s.fail(ctx, err)
		return
	}
	job, err := s.svc.CreatePreRecorded(ctx, account(ctx), requestID(ctx), body)
	if err != nil {
		s.fail(ctx, err)
		return
	}
	setAuditObject(ctx, job.ID)
	s.writeJSON(ctx, fasthttp.StatusCreated, struct {
		ID        string `json:"id"`
		ResultURL string `json:"result_url"`
	}{job.ID, s.baseURL(ctx) + "/v2/pre-recorded/" + job.ID})
}

func pathID(ctx *fasthttp.RequestCtx) string {
	id, _ := ctx.UserValue("id").(string)
	return id
}

func (s *Server) getJob(kind store.Kind) fasthttp.RequestHandler {
	return func(ctx *fasthttp.RequestCtx) {
		job, err := s.svc.Job(ctx, account(ctx), kind, pathID(ctx))
		if err != nil {
			s.fail(ctx, err)
			return
		}
		s.writeJSON(ctx, fasthttp.StatusOK, newJobRecord(job))
	}
}

func (s *Server) deleteJob(kind store.Kind) fasthttp.RequestHandler {
	return func(ctx *fasthttp.RequestCtx) {
		if err := s.svc.DeleteJob(ctx, account(ctx), kind, pathID(ctx)); err != nil {
			s.fail(ctx, err)
			return
		}
		ctx.SetStatusCode(fasthttp.StatusAccepted)
	}
}

// deleteTranscription is the deprecated DELETE /v2/transcription/{id}: any
// kind; 403 for an id that cannot be one (SPEC.md 4.4).
func (s *Server) deleteTranscription(ctx *fasthttp.RequestCtx) {
	id := pathID(ctx)
	if !params.ValidID(id) {
		s.fail(ctx, fmt.Errorf("id %q: %w", id, errcode.ErrInvalidID))
		return
	}
	if err := s.svc.DeleteJob(ctx, account(ctx), "", id); err != nil {
		s.fail(ctx, err)
		return
	}
	ctx.SetStatusCode(fasthttp.StatusAccepted)
}

func (s *Server) getJobFile(kind store.Kind) fasthttp.RequestHandler {
	return func(ctx *fasthttp.RequestCtx) {
		f, ctype, err := s.svc.OpenJobAudio(ctx, account(ctx), kind, pathID(ctx))
		if err != nil {
			s.fail(ctx, err)
			return
		}
		st, err := f.Stat()
		if err != nil {
			f.Close()
			s.fail(ctx, err)
			return
		}
		ctx.SetContentType(ctype)
		ctx.SetBodyStream(f, int(st.Size())) // fasthttp closes f
	}
}
