package api

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/earshot-dev/earshot/store"
)

// OpenAIJobs is what the /v1 door needs beside Jobs and Uploads: to wait
// for a job to end, and to drop the upload a job was made from without
// recounting the account's storage (daemon.Daemon.WaitJob, DropUpload).
type OpenAIJobs interface {
	WaitJob(ctx context.Context, account, id string) (*store.Job, error)
	DropUpload(ctx context.Context, account, id string) error
}

// The OpenAI-compatible door (README.md, docs/PROTOCOL.md): the audio
// endpoints of OpenAI's API over earshot's pre-recorded jobs, for clients
// written against that API with their base URL pointed here.

// openAIKey is a /v1 request's API key: Authorization: Bearer KEY, as
// OpenAI's clients send it, else x-service-key.
func openAIKey(h *fasthttp.RequestHeader) string {
	if k, ok := bytes.CutPrefix(h.Peek(fasthttp.HeaderAuthorization), []byte("Bearer ")); ok {
		return string(bytes.TrimSpace(k))
	}
	return string(h.Peek(HeaderKey))
}

// v1Transcriptions is POST /v1/audio/transcriptions.
func (s *Server) v1Transcriptions(ctx *fasthttp.RequestCtx) { s.v1Audio(ctx, taskTranscribe) }

// v1Translations is POST /v1/audio/translations: into English.
func (s *Server) v1Translations(ctx *fasthttp.RequestCtx) { s.v1Audio(ctx, taskTranslate) }

// v1Audio answers a /v1/audio request with a pre-recorded job of the
// caller's account: the file stored as an upload (then its record
// dropped: the job keeps its own link to the audio), the job created
// through the same validation, quota and queue bound as POST
// /v2/pre-recorded, waited for (at most openai.timeout, or until the
// server stops), and its result written in the response format. With
// openai.keep_jobs false the job and its audio are deleted once answered.
func (s *Server) v1Audio(ctx *fasthttp.RequestCtx, task oaiTask) {
	// A refused request may leave its body partly unread: the connection
	// cannot carry another request after it.
	defer func() {
		if ctx.Response.StatusCode() >= 400 {
			refuseBody(ctx)
		}
	}()
	acct := account(ctx)
	req, up, err := s.readOpenAIRequest(ctx, task)
	if err != nil {
		s.failOpenAI(ctx, err)
		return
	}
	body, err := req.preRecordedBody(s.baseURL(ctx) + "/v2/files/" + up.ID)
	var job *store.Job
	if err == nil {
		job, err = s.svc.CreatePreRecorded(ctx, acct, requestID(ctx), body)
	}
	if err != nil {
		s.discardUpload(ctx, up.ID)
		s.failOpenAI(ctx, err)
		return
	}
	setAuditObject(ctx, job.ID)
	// The upload's record only: the job links the audio itself.
	if err := s.svc.DropUpload(context.WithoutCancel(ctx), acct, up.ID); err != nil {
		s.log.Error("drop the upload record of a /v1 job", "file_id", up.ID, "job_id", job.ID, "error", err)
	}
	if s.cfg.OpenAI.keepJobs() {
		ctx.Response.Header.Set("earshot-job-id", job.ID)
	} else {
		defer func() {
			err := s.svc.DeleteJob(context.WithoutCancel(ctx), acct, store.KindPreRecorded, job.ID)
			if err != nil && !errors.Is(err, store.ErrNotFound) {
				s.log.Error("delete a /v1 job (openai.keep_jobs false)", "job_id", job.ID, "error", err)
			}
		}()
	}
	wctx, cancel := context.WithTimeout(ctx, s.cfg.OpenAI.Timeout)
	done, err := s.svc.WaitJob(wctx, acct, job.ID)
	cancel()
	if err != nil {
		s.failOpenAI(ctx, err)
		return
	}
	t, err := transcriptOf(req, done)
	if err != nil {
		s.failOpenAI(ctx, err)
		return
	}
	s.writeOpenAIResult(ctx, req, t)
}

// oaiModel is one model of GET /v1/models.
type oaiModel struct {
	ID      string `json:"id"`
	Object  string `json:"object"`
	Created int64  `json:"created"`
	OwnedBy string `json:"owned_by"`
}

// modelsCreated is the created time of every listed model: when this
// door first served them (the day the door was added), fixed so that a
// listing does not change between restarts.
var modelsCreated = time.Date(2026, 11, 29, 0, 0, 0, 0, time.UTC).Unix()

func newOAIModel(name string) oaiModel {
	return oaiModel{ID: name, Object: "model", Created: modelsCreated, OwnedBy: "earshot"}
}

// v1Models is GET /v1/models: the model names a /v1 request may give.
func (s *Server) v1Models(ctx *fasthttp.RequestCtx) {
	list := struct {
		Object string     `json:"object"`
		Data   []oaiModel `json:"data"`
	}{Object: "list", Data: []oaiModel{}}
	for _, m := range openAIModels {
		list.Data = append(list.Data, newOAIModel(m.name))
	}
	s.writeJSON(ctx, fasthttp.StatusOK, list)
}

// v1Model is GET /v1/models/{model}.
func (s *Server) v1Model(ctx *fasthttp.RequestCtx) {
	name, _ := ctx.UserValue("model").(string)
	if _, ok := v2Model(name); !ok {
		s.failOpenAI(ctx, &fieldError{Kind: store.ErrNotFound, Param: "model", Code: "model_not_found",
			Msg: fmt.Sprintf("model: %q is not served here (see GET /v1/models)", truncateName(name))})
		return
	}
	s.writeJSON(ctx, fasthttp.StatusOK, newOAIModel(name))
}
