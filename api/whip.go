package api

import (
	"context"
	"mime"
	"strings"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/earshot-dev/earshot/errcode"
	"github.com/earshot-dev/earshot/store"
)

// WHIP is the browser door (ingest/webrtc.Door) as the API calls it.
type WHIP interface {
	Offer(ctx context.Context, sessionID, token, from string, sdp []byte) (answer []byte, resource string, err error)
	End(ctx context.Context, sessionID, resource string) error
}

// SetWHIP gives the server its WebRTC door; call it before Run. Without
// one, the WHIP routes answer 404.
func (s *Server) SetWHIP(w WHIP) { s.whip = w }

// whipOffer is POST /v2/live/{id}/whip (RFC 9725 §4.2): the body is an SDP
// offer, the bearer is the session token of the session's WebSocket URL;
// the answer is 201 with the SDP answer and the resource's Location.
func (s *Server) whipOffer(ctx *fasthttp.RequestCtx) {
	whipCORS(ctx)
	if s.whip == nil {
		s.fail(ctx, store.ErrNotFound)
		return
	}
	mt, _, err := mime.ParseMediaType(string(ctx.Request.Header.ContentType()))
	if err != nil || mt != "application/sdp" {
		s.failStatus(ctx, fasthttp.StatusUnsupportedMediaType, "Content-Type must be application/sdp (RFC 9725)")
		return
	}
	tok, ok := bearer(ctx)
	if !ok {
		ctx.Response.Header.Set("WWW-Authenticate", `Bearer realm="earshot"`)
		s.failStatus(ctx, fasthttp.StatusUnauthorized, "Authorization: Bearer <session token> is required (the token of the session's WebSocket URL)")
		return
	}
	body, err := s.readBody(ctx)
	if err != nil {
		s.fail(ctx, err)
		return
	}
	id := pathID(ctx)
	answer, res, err := s.whip.Offer(ctx, id, tok, ctx.RemoteAddr().String(), body)
	if err != nil {
		s.whipFail(ctx, err)
		return
	}
	ctx.Response.Header.Set("Location", "/v2/live/"+id+"/whip/"+res)
	ctx.SetStatusCode(fasthttp.StatusCreated)
	ctx.SetContentType("application/sdp")
	ctx.SetBody(answer)
}

// whipDelete is DELETE on a WHIP resource (RFC 9725 §4.3): it ends the
// recording, which then finalises as any live job. The resource id, known
// only to the client that made the offer, authorises it.
func (s *Server) whipDelete(ctx *fasthttp.RequestCtx) {
	whipCORS(ctx)
	if s.whip == nil {
		s.fail(ctx, store.ErrNotFound)
		return
	}
	res, _ := ctx.UserValue("resource").(string)
	if err := s.whip.End(ctx, pathID(ctx), res); err != nil {
		s.whipFail(ctx, err)
		return
	}
	ctx.SetStatusCode(fasthttp.StatusOK)
}

// whipPatch answers PATCH (trickle ICE, ICE restart) with 405, as RFC 9725
// §4.3.1 allows for a server that supports neither.
func (s *Server) whipPatch(ctx *fasthttp.RequestCtx) {
	whipCORS(ctx)
	ctx.Response.Header.Set("Allow", "DELETE, OPTIONS")
	s.failStatus(ctx, fasthttp.StatusMethodNotAllowed, "trickle ICE and ICE restarts are not supported: send a complete offer")
}

// whipOptions answers a CORS preflight, or a plain OPTIONS (RFC 9725
// §4.4) with what the endpoint accepts.
func (s *Server) whipOptions(allow string) fasthttp.RequestHandler {
	return func(ctx *fasthttp.RequestCtx) {
		whipCORS(ctx)
		h := &ctx.Response.Header
		if len(ctx.Request.Header.Peek("Access-Control-Request-Method")) > 0 {
			h.Set("Access-Control-Allow-Methods", allow)
			h.Set("Access-Control-Allow-Headers", "Authorization, Content-Type, If-Match")
			h.Set("Access-Control-Max-Age", "86400")
		}
		h.Set("Allow", allow)
		if strings.HasPrefix(allow, "POST") {
			h.Set("Accept-Post", "application/sdp")
		}
		ctx.SetStatusCode(fasthttp.StatusNoContent)
	}
}

// whipCORS lets pages of any origin use WHIP: the session token, not a
// cookie, authorises, and clients must read Location.
func whipCORS(ctx *fasthttp.RequestCtx) {
	h := &ctx.Response.Header
	h.Set("Access-Control-Allow-Origin", "*")
	h.Set("Access-Control-Expose-Headers", "Location, Link, Accept-Post, ETag")
}

// bearer is the token of an "Authorization: Bearer" header.
func bearer(ctx *fasthttp.RequestCtx) (string, bool) {
	scheme, tok, ok := strings.Cut(string(ctx.Request.Header.Peek("Authorization")), " ")
	tok = strings.TrimSpace(tok)
	return tok, ok && strings.EqualFold(scheme, "Bearer") && tok != ""
}

// whipFail answers an error of the door or the job service (a bad or
// expired token: 401, an ended session: 404, capacity: 503) with its
// contract status (package errcode holds each); a 401 says how to
// authenticate (RFC 6750 section 3).
func (s *Server) whipFail(ctx *fasthttp.RequestCtx, err error) {
	if errcode.Status(err) == fasthttp.StatusUnauthorized {
		ctx.Response.Header.Set("WWW-Authenticate", `Bearer realm="earshot", error="invalid_token"`)
	}
	s.fail(ctx, err)
}

// failStatus writes the contract's error body with a status the job
// service's mapping does not produce.
func (s *Server) failStatus(ctx *fasthttp.RequestCtx, status int, msg string) {
	s.writeJSON(ctx, status, errorBody{
		Timestamp: time.Now().UTC().Format(timeFormat), Path: string(ctx.Path()),
		RequestID: requestID(ctx), StatusCode: status, Message: msg,
	})
}
