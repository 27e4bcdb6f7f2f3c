package api

import (
	"errors"
	"fmt"
	"io"
	"mime"
	"mime/multipart"

	"github.com/valyala/fasthttp"

	"github.com/earshot-dev/earshot/errcode"
	"github.com/earshot-dev/earshot/store"
)

// uploadField is the multipart field that carries the audio (PROTOCOL.md).
const uploadField = "audio"

// maxSkippedParts bounds the non-audio parts an upload may carry.
const maxSkippedParts = 16

type audioMetadata struct {
	ID               string  `json:"id"`
	Filename         string  `json:"filename"`
	Extension        string  `json:"extension"`
	Size             int64   `json:"size"`
	AudioDuration    float64 `json:"audio_duration"`
	NumberOfChannels int     `json:"number_of_channels"`
}

// upload streams the multipart field "audio" to disk (never whole in
// memory) and answers {audio_url, audio_metadata}.
func (s *Server) upload(ctx *fasthttp.RequestCtx) {
	// A refused upload may leave its body partly unread: the connection
	// cannot carry another request after it.
	defer func() {
		if ctx.Response.StatusCode() >= 400 {
			refuseBody(ctx)
		}
	}()
	if n := ctx.Request.Header.ContentLength(); n > int(s.cfg.MaxUploadBytes)+64<<10 {
		s.fail(ctx, fmt.Errorf("%w: upload of %d bytes > limit %d", errcode.ErrTooLarge, n, s.cfg.MaxUploadBytes))
		return
	}
	mt, mp, err := mime.ParseMediaType(string(ctx.Request.Header.ContentType()))
	if err != nil || mt != "multipart/form-data" || mp["boundary"] == "" {
		s.fail(ctx, errBadRequest("body: Content-Type must be multipart/form-data with a boundary"))
		return
	}
	body := s.newClientBody(ctx)
	mr := multipart.NewReader(body, mp["boundary"])
	for range maxSkippedParts + 1 {
		part, err := mr.NextPart()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			s.fail(ctx, errBadRequest("body: malformed multipart body"))
			return
		}
		if part.FormName() != uploadField {
			part.Close()
			continue
		}
		// The filename is stored and copied into every job naming the
		// upload: refused when long, before the audio is read.
		if name := part.FileName(); len(name) > store.MaxFilenameBytes {
			part.Close()
			s.fail(ctx, errBadRequest(fmt.Sprintf("audio.filename must be at most %d bytes, not %d", store.MaxFilenameBytes, len(name))))
			return
		}
		up, err := s.svc.Upload(ctx, account(ctx), part.FileName(), part)
		part.Close()
		if err != nil {
			s.fail(ctx, body.blame(err))
			return
		}
		setAuditObject(ctx, up.ID)
		s.writeJSON(ctx, fasthttp.StatusOK, struct {
			AudioURL      string        `json:"audio_url"`
			AudioMetadata audioMetadata `json:"audio_metadata"`
		}{
			AudioURL: s.baseURL(ctx) + "/v2/files/" + up.ID,
			AudioMetadata: audioMetadata{
				ID: up.ID, Filename: up.Filename, Extension: up.Extension, Size: up.Size,
				AudioDuration: up.AudioDuration, NumberOfChannels: up.Channels,
			},
		})
		return
	}
	s.fail(ctx, errBadRequest("audio is required: a multipart file field named \"audio\""))
}

// getUpload serves a service-hosted file to its owner.
func (s *Server) getUpload(ctx *fasthttp.RequestCtx) {
	f, up, err := s.svc.OpenUpload(ctx, account(ctx), pathID(ctx))
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
	ctype := mime.TypeByExtension("." + up.Extension)
	if ctype == "" {
		ctype = "application/octet-stream"
	}
	ctx.SetContentType(ctype)
	ctx.SetBodyStream(f, int(st.Size()))
}

// deleteUpload is DELETE /v2/files/{id}: 202 with an empty body, as every
// DELETE (PROTOCOL.md); 401 for another account's file, 404 for an unknown
// or already deleted one.
func (s *Server) deleteUpload(ctx *fasthttp.RequestCtx) {
	if err := s.svc.DeleteUpload(ctx, account(ctx), pathID(ctx)); err != nil {
		s.fail(ctx, err)
		return
	}
	ctx.SetStatusCode(fasthttp.StatusAccepted)
}
