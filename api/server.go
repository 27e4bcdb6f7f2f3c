package api

import (
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"net"
	"runtime/debug"
	"strconv"
	"time"

	"github.com/fasthttp/router"
	"github.com/google/uuid"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/valyala/fasthttp"

	"github.com/earshot-dev/earshot/errcode"
	"github.com/earshot-dev/earshot/internal/acceptloop"
	"github.com/earshot-dev/earshot/store"
)

// timeFormat is how every date-time of the contract is written.
const timeFormat = "2006-01-02T15:04:05.000Z07:00"

// HeaderKey is the API key header (SPEC.md §5).
const HeaderKey = "x-service-key"

// Jobs is what the API needs of the job service (daemon.Daemon).
type Jobs interface {
	CreatePreRecorded(ctx context.Context, account, requestID string, body []byte) (*store.Job, error)
	Job(ctx context.Context, account string, kind store.Kind, id string) (*store.Job, error)
	EachJob(ctx context.Context, q store.ListQuery, fn func(*store.Job) bool) error
	DeleteJob(ctx context.Context, account string, kind store.Kind, id string) error
	OpenJobAudio(ctx context.Context, account string, kind store.Kind, id string) (store.BlobReader, string, error)
}

// Uploads is what the API needs for service-hosted files.
type Uploads interface {
	Upload(ctx context.Context, account, filename string, r io.Reader) (*store.Upload, error)
	OpenUpload(ctx context.Context, account, id string) (store.BlobReader, *store.Upload, error)
	DeleteUpload(ctx context.Context, account, id string) error
}

// Readiness reports whether the service can take work.
type Readiness interface {
	Ready() error
}

// Service is the job service the API fronts.
type Service interface {
	Keys
	Jobs
	Uploads
	Readiness
	Live
	Metrics
	Nodes
	OpenAIJobs
	Audit
}

// Server serves the /v2 API over fasthttp, and the operations endpoints
// either beside it or, with Config.SeparateOps, on their own listener.
type Server struct {
	cfg   Config
	svc   Service
	log   *slog.Logger
	srv   *fasthttp.Server
	ops   *fasthttp.Server // the operations endpoints alone; nil unless cfg.SeparateOps
	tls   *tls.Config      // nil: plain HTTP
	rm    *requestMetrics
	limit *rateLimiter // per-key request rate; nil: unlimited
	// refusedConns counts connections the guards closed, by reason.
	refusedConns *prometheus.CounterVec
	whip         WHIP // the WebRTC door, set by SetWHIP before Run; nil answers 404
}

// New builds a Server and loads its TLS pair; it binds and starts nothing.
func New(cfg Config, svc Service, logger *slog.Logger) (*Server, error) {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	tlsCfg, err := cfg.LoadTLS()
	if err != nil {
		return nil, err
	}
	s := &Server{cfg: cfg, svc: svc, log: logger, tls: tlsCfg, rm: newRequestMetrics(svc.Metrics()),
		limit: newRateLimiter(cfg.RequestsPerSecond, cfg.Burst)}
	s.refusedConns = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "earshot_http_connections_refused_total",
		Help: "HTTP connections closed on admission: per_ip (api.max_conns_per_ip), full (api.max_conns), pending_evicted (oldest unauthenticated one closed to admit another, api.max_pending_conns).",
	}, []string{"reason"})
	svc.Metrics().MustRegister(s.refusedConns)
	r := s.newRouter()
	if cfg.SeparateOps {
		ops := s.newRouter()
		s.opsRoutes(ops)
		s.ops = s.newHTTPServer(ops)
	} else {
		s.opsRoutes(r)
	}
	r.GET("/v2/engines", s.auth(s.listEngines))
	r.GET("/v2/openapi.json", s.openAPI)
	r.POST("/v2/upload", s.auth(s.audited(store.AuditUploadCreate, s.upload)))
	r.GET("/v2/files/{id}", s.auth(s.audited(store.AuditUploadRead, s.getUpload)))
	r.DELETE("/v2/files/{id}", s.auth(s.audited(store.AuditUploadDelete, s.deleteUpload)))
	r.POST("/v2/pre-recorded", s.auth(s.audited(store.AuditPreRecordedCreate, s.createPreRecorded)))
	r.GET("/v2/pre-recorded", s.auth(s.audited(store.AuditPreRecordedList, s.list(store.KindPreRecorded))))
	r.GET("/v2/pre-recorded/{id}", s.auth(s.audited(store.AuditPreRecordedRead, s.getJob(store.KindPreRecorded))))
	r.DELETE("/v2/pre-recorded/{id}", s.auth(s.audited(store.AuditPreRecordedDelete, s.deleteJob(store.KindPreRecorded))))
	r.GET("/v2/pre-recorded/{id}/file", s.auth(s.audited(store.AuditPreRecordedAudio, s.getJobFile(store.KindPreRecorded))))
	r.GET("/v2/pre-recorded/{id}/hold", s.auth(s.admin(s.getHold(store.KindPreRecorded))))
	r.POST("/v2/pre-recorded/{id}/hold", s.auth(s.audited(store.AuditPreRecordedHold, s.admin(s.setHold(store.KindPreRecorded, true)))))
	r.DELETE("/v2/pre-recorded/{id}/hold", s.auth(s.audited(store.AuditPreRecordedRelease, s.admin(s.setHold(store.KindPreRecorded, false)))))
	r.DELETE("/v2/transcription/{id}", s.auth(s.audited(store.AuditPreRecordedDelete, s.deleteTranscription)))
	r.POST("/v2/live", s.auth(s.audited(store.AuditLiveCreate, s.createLive)))
	r.GET("/v2/live", s.liveRoot)
	r.GET("/v2/live/{id}", s.auth(s.audited(store.AuditLiveRead, s.getJob(store.KindLive))))
	r.DELETE("/v2/live/{id}", s.auth(s.audited(store.AuditLiveDelete, s.deleteJob(store.KindLive))))
	r.GET("/v2/live/{id}/file", s.auth(s.audited(store.AuditLiveAudio, s.getJobFile(store.KindLive))))
	r.POST("/v2/live/{id}/pause", s.auth(s.audited(store.AuditLivePause, s.pauseLive(true))))
	r.POST("/v2/live/{id}/resume", s.auth(s.audited(store.AuditLiveResume, s.pauseLive(false))))
	r.GET("/v2/live/{id}/hold", s.auth(s.admin(s.getHold(store.KindLive))))
	r.POST("/v2/live/{id}/hold", s.auth(s.audited(store.AuditLiveHold, s.admin(s.setHold(store.KindLive, true)))))
	r.DELETE("/v2/live/{id}/hold", s.auth(s.audited(store.AuditLiveRelease, s.admin(s.setHold(store.KindLive, false)))))
	r.POST("/v2/live/{id}/whip", s.whipOffer)
	r.OPTIONS("/v2/live/{id}/whip", s.whipOptions("POST, OPTIONS"))
	r.DELETE("/v2/live/{id}/whip/{resource}", s.whipDelete)
	r.PATCH("/v2/live/{id}/whip/{resource}", s.whipPatch)
	r.OPTIONS("/v2/live/{id}/whip/{resource}", s.whipOptions("DELETE, PATCH, OPTIONS"))
	r.POST("/v1/audio/transcriptions", s.openAIAuth(s.audited(store.AuditPreRecordedCreate, s.v1Transcriptions)))
	r.POST("/v1/audio/translations", s.openAIAuth(s.audited(store.AuditPreRecordedCreate, s.v1Translations)))
	r.GET("/v1/models", s.openAIAuth(s.v1Models))
	r.GET("/v1/models/{model}", s.openAIAuth(s.v1Model))
	r.GET("/console", s.console)
	r.GET("/console/{file}", s.console)
	r.POST("/admin/keys", s.auth(s.audited(store.AuditKeyCreate, s.admin(s.createKey))))
	r.GET("/admin/keys", s.auth(s.admin(s.listKeys)))
	r.DELETE("/admin/keys/{id}", s.auth(s.audited(store.AuditKeyRevoke, s.admin(s.revokeKey))))
	r.GET("/admin/nodes", s.auth(s.admin(s.listNodes)))
	r.GET("/admin/audit", s.auth(s.audited(store.AuditRead, s.admin(s.listAudit))))
	s.srv = s.newHTTPServer(r)
	return s, nil
}

// newRouter is a router with this API's 404, 405 and panic handling.
func (s *Server) newRouter() *router.Router {
	r := router.New()
	r.RedirectTrailingSlash = false
	r.RedirectFixedPath = false
	r.SaveMatchedRoutePath = true
	r.NotFound = func(ctx *fasthttp.RequestCtx) {
		s.fail(ctx, fmt.Errorf("route %s: %w", ctx.Path(), store.ErrNotFound))
	}
	r.MethodNotAllowed = func(ctx *fasthttp.RequestCtx) {
		s.writeJSON(ctx, fasthttp.StatusMethodNotAllowed, errorBody{
			Timestamp: time.Now().UTC().Format(timeFormat), Path: string(ctx.Path()),
			RequestID: requestID(ctx), StatusCode: 405, Message: "method not allowed",
		})
	}
	r.PanicHandler = func(ctx *fasthttp.RequestCtx, v any) {
		s.log.Error("handler panicked", "path", string(ctx.Path()), "panic", v, "stack", string(debug.Stack()))
		s.fail(ctx, fmt.Errorf("panic: %v", v))
	}
	return r
}

// opsRoutes adds the operations endpoints (no key): /healthz, /readyz,
// /metrics.
func (s *Server) opsRoutes(r *router.Router) {
	r.GET("/healthz", s.healthz)
	r.GET("/metrics", s.rm.handler)
	r.GET("/readyz", s.readyz)
}

// newHTTPServer is the fasthttp server of one listener. Its ReadTimeout is
// the header timeout; once the headers are in, bodyLimits gives the
// request its body read and answer write time. Connection counts are the
// connGuard's (Run wraps the listener); MaxConnsPerIP stays 0 because
// fasthttp's counts IPv4 only and would hide the guarded conn from the
// handlers.
func (s *Server) newHTTPServer(r *router.Router) *fasthttp.Server {
	cfg := s.cfg
	return &fasthttp.Server{
		Handler:        s.withRequestID(r.Handler),
		Name:           "earshot",
		ReadTimeout:    cfg.HeaderTimeout,
		HeaderReceived: s.bodyLimits,
		ErrorHandler:   s.readError,
		WriteTimeout:   cfg.WriteTimeout,
		IdleTimeout:    cfg.IdleTimeout,
		MaxConnsPerIP:  0,
		// Request line and headers must fit in ReadBufferSize (larger ones
		// get 431). 8 KiB, as nginx's large header buffers: a long list
		// query or id is answered, not cut off.
		ReadBufferSize:               8 << 10,
		Concurrency:                  cfg.MaxConns,
		MaxRequestBodySize:           int(cfg.MaxUploadBytes + 1<<20),
		StreamRequestBody:            true,
		DisablePreParseMultipartForm: true,
		NoDefaultContentType:         true,
		CloseOnShutdown:              true,
		Logger:                       fasthttpLogger{s.log},
	}
}

// bodyLimits bounds a request once its headers are read. fasthttp reads
// the first 8 KiB of a body before the handler runs: that read gets
// bodyRateGrace plus the time for 8 KiB at Config.MinBodyBytesPerSecond;
// the handler's clientBody then holds the rest to the minimum rate within
// bodyTimeout. Answers get Config.WriteTimeout with an x-service-key
// (audio downloads), else Config.HeaderTimeout.
func (s *Server) bodyLimits(h *fasthttp.RequestHeader) fasthttp.RequestConfig {
	const preRead = 8 << 10
	read := min(s.bodyTimeout(h), bodyRateGrace+time.Duration(preRead*float64(time.Second)/float64(s.cfg.MinBodyBytesPerSecond)))
	write := s.cfg.HeaderTimeout
	if keyed(h) {
		write = s.cfg.WriteTimeout
	}
	return fasthttp.RequestConfig{ReadTimeout: read, WriteTimeout: write}
}

// bodyTimeout is how long a request body may take in all: with an
// x-service-key Config.ReadTimeout (uploads); without one (probes,
// console, WebSocket and WHIP, or a refusal to come)
// Config.HeaderTimeout, so a client without a key cannot hold a
// connection by trickling a body.
func (s *Server) bodyTimeout(h *fasthttp.RequestHeader) time.Duration {
	if keyed(h) {
		return s.cfg.ReadTimeout
	}
	return s.cfg.HeaderTimeout
}

// keyed reports whether a request carries an API key: x-service-key, or
// on the /v1 door Authorization (openAIKey).
func keyed(h *fasthttp.RequestHeader) bool {
	return len(h.Peek(HeaderKey)) > 0 ||
		bytes.HasPrefix(h.RequestURI(), []byte("/v1/")) && len(h.Peek(fasthttp.HeaderAuthorization)) > 0
}

// readError answers a request fasthttp could not read, with the
// contract's error body: 431 for headers over the read buffer, 413 for a
// body over the server's bound, 408 when the header (or body) did not
// arrive within its timeout, else 400.
func (s *Server) readError(ctx *fasthttp.RequestCtx, err error) {
	status, msg := fasthttp.StatusBadRequest, "malformed request"
	var small *fasthttp.ErrSmallBuffer
	var ne net.Error
	switch {
	case errors.As(err, &small):
		status, msg = fasthttp.StatusRequestHeaderFieldsTooLarge, "request headers too large"
	case errors.Is(err, fasthttp.ErrBodyTooLarge):
		status, msg = fasthttp.StatusRequestEntityTooLarge, "request too large"
	case errors.As(err, &ne) && ne.Timeout():
		status, msg = fasthttp.StatusRequestTimeout, "request not received in time"
	}
	s.writeJSON(ctx, status, errorBody{
		Timestamp: time.Now().UTC().Format(timeFormat), Path: string(ctx.Path()),
		RequestID: uuid.NewString(), StatusCode: status, Message: msg,
	})
}

// guard wraps ln in a connGuard with this server's connection bounds, over
// an accept loop that waits out accept errors (descriptors exhausted for a
// moment) instead of ending the server.
func (s *Server) guard(ln net.Listener) net.Listener {
	return newConnGuard(s.cfg.MaxConns, s.cfg.MaxPendingConns, s.cfg.MaxConnsPerIP, s.refusedConns).listener(acceptloop.New(ln, "api", s.log))
}

// Run serves the API on ln (HTTPS when Config.TLSCert is set) until ctx
// ends, then stops accepting and waits for in-flight requests, at most
// Config.ShutdownTimeout. Live WebSockets are not requests in flight: their
// sessions end in the daemon's live stage, which closes them.
func (s *Server) Run(ctx context.Context, ln net.Listener) error {
	ln = s.guard(ln)
	if s.tls != nil {
		ln = tls.NewListener(ln, s.tls)
	}
	return serve(ctx, s.srv, ln, s.cfg.ShutdownTimeout)
}

// RunOps serves the operations endpoints alone on ln, plain HTTP, as Run
// does; with Config.SeparateOps false they are on Run's listener and
// RunOps returns ErrNoOpsListener.
func (s *Server) RunOps(ctx context.Context, ln net.Listener) error {
	if s.ops == nil {
		return ErrNoOpsListener
	}
	return serve(ctx, s.ops, s.guard(ln), s.cfg.ShutdownTimeout)
}

func serve(ctx context.Context, srv *fasthttp.Server, ln net.Listener, grace time.Duration) error {
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.Background(), grace)
	defer cancel()
	err := srv.ShutdownWithContext(sctx)
	<-errc
	return err
}

type ctxKey int

const keyRequestID ctxKey = iota

// withRequestID gives each request its id, counts it and logs it once:
// at info, or at debug for the operations endpoints (probe noise). The
// line has no query string (the live WebSocket's carries its token, list
// filters carry custom_metadata) and names the key by its id only.
func (s *Server) withRequestID(h fasthttp.RequestHandler) fasthttp.RequestHandler {
	return func(ctx *fasthttp.RequestCtx) {
		ctx.SetUserValue(keyRequestID, uuid.NewString())
		start := time.Now()
		gc := guardedOf(ctx.Conn())
		if gc != nil {
			gc.setBusy(true)
		}
		h(ctx)
		if gc != nil {
			gc.setBusy(false)
		}
		s.rm.observe(ctx)
		route, _ := ctx.UserValue(router.MatchedRoutePathParam).(string)
		level := slog.LevelInfo
		switch route {
		case "/healthz", "/readyz", "/metrics":
			level = slog.LevelDebug
		}
		if !s.log.Enabled(context.Background(), level) {
			return
		}
		attrs := []slog.Attr{
			slog.String("method", string(ctx.Method())),
			slog.String("route", route),
			slog.String("path", string(ctx.Path())),
			slog.Int("status", ctx.Response.StatusCode()),
			slog.Int64("elapsed_ms", time.Since(start).Milliseconds()),
			slog.Int64("bytes", responseBytes(ctx)),
			slog.String("request_id", requestID(ctx)),
			slog.String("remote_addr", ctx.RemoteAddr().String()),
		}
		if id := keyID(ctx); id != "" {
			attrs = append(attrs, slog.String("account_id", id))
		}
		s.log.LogAttrs(context.Background(), level, "request", attrs...)
	}
}

// responseBytes is the size of the response body (0 for a hijacked
// WebSocket).
func responseBytes(ctx *fasthttp.RequestCtx) int64 {
	if ctx.Response.IsBodyStream() {
		return int64(max(ctx.Response.Header.ContentLength(), 0))
	}
	return int64(len(ctx.Response.Body()))
}

func requestID(ctx *fasthttp.RequestCtx) string {
	id, _ := ctx.UserValue(keyRequestID).(string)
	return id
}

// ctxAPIKey holds the authenticated store.Key of a request.
type ctxAPIKey struct{}

// auth checks x-service-key, then the key's request rate, and records the
// key for the handler.
func (s *Server) auth(h fasthttp.RequestHandler) fasthttp.RequestHandler {
	return s.authenticate(h, func(h *fasthttp.RequestHeader) string { return string(h.Peek(HeaderKey)) }, s.fail)
}

// openAIAuth is auth for the /v1 door: the key from Authorization: Bearer
// or x-service-key (openAIKey), refusals in OpenAI's error shape.
func (s *Server) openAIAuth(h fasthttp.RequestHandler) fasthttp.RequestHandler {
	return s.authenticate(h, openAIKey, s.failOpenAI)
}

// authenticate checks the key key reads from the request, then the key's
// request rate, then that the key holds the scopes of the route
// (routeScopes), and records the key for the handler; fail answers a
// refusal.
func (s *Server) authenticate(h fasthttp.RequestHandler, key func(*fasthttp.RequestHeader) string, fail func(*fasthttp.RequestCtx, error)) fasthttp.RequestHandler {
	return func(ctx *fasthttp.RequestCtx) {
		k, err := s.svc.AuthenticateKey(key(&ctx.Request.Header))
		if err != nil {
			fail(ctx, err)
			// A body sent with a wrong key is not read for ReadTimeout.
			refuseBody(ctx)
			return
		}
		trustConn(ctx)
		ctx.SetUserValue(ctxAPIKey{}, k)
		if ok, wait := s.limit.allow(k.ID); !ok {
			ctx.Response.Header.Set("Retry-After", strconv.FormatInt(int64(math.Ceil(wait.Seconds())), 10))
			fail(ctx, fmt.Errorf("key %s: %w", k.ID, errcode.ErrRateLimited))
			return
		}
		if err := needScopes(ctx, k); err != nil {
			fail(ctx, err)
			refuseBody(ctx)
			return
		}
		h(ctx)
	}
}

// authKey is the request's authenticated key (zero before auth).
func authKey(ctx *fasthttp.RequestCtx) store.Key {
	k, _ := ctx.UserValue(ctxAPIKey{}).(store.Key)
	return k
}

func account(ctx *fasthttp.RequestCtx) string { return authKey(ctx).Account }

func keyID(ctx *fasthttp.RequestCtx) string { return authKey(ctx).ID }

func (s *Server) healthz(ctx *fasthttp.RequestCtx) {
	s.writeJSON(ctx, 200, map[string]string{"status": "ok"})
}

func (s *Server) readyz(ctx *fasthttp.RequestCtx) {
	if err := s.svc.Ready(); err != nil {
		s.log.Warn("not ready", "error", err)
		s.writeJSON(ctx, 503, map[string]string{"status": "not ready"})
		return
	}
	s.writeJSON(ctx, 200, map[string]string{"status": "ready"})
}

// baseURL is {base_url}: the configured public URL, else scheme + Host.
func (s *Server) baseURL(ctx *fasthttp.RequestCtx) string {
	if s.cfg.PublicURL != "" {
		return s.cfg.PublicURL
	}
	scheme := "http"
	if ctx.IsTLS() {
		scheme = "https"
	}
	return scheme + "://" + string(ctx.Host())
}

type fasthttpLogger struct{ l *slog.Logger }

func (f fasthttpLogger) Printf(format string, args ...any) {
	f.l.Debug("fasthttp", "msg", fmt.Sprintf(format, args...))
}
