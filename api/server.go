package api

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"runtime/debug"
	"time"

	"github.com/fasthttp/router"
	"github.com/google/uuid"
	"github.com/valyala/fasthttp"

	"github.com/earshot-dev/earshot/daemon"
	"github.com/earshot-dev/earshot/store"
)

// timeFormat is how every date-time of the contract is written.
const timeFormat = "2006-01-02T15:04:05.000Z07:00"

// HeaderKey is the API key header (SPEC.md §5).
const HeaderKey = "x-service-key"

// Jobs is what the API needs of the job service (daemon.Daemon).
type Jobs interface {
	Authenticate(key string) (account string, err error)
	CreatePreRecorded(ctx context.Context, account, requestID string, body []byte) (*store.Job, error)
	Job(ctx context.Context, account string, kind store.Kind, id string) (*store.Job, error)
	ListJobs(ctx context.Context, q store.ListQuery) ([]*store.Job, error)
	DeleteJob(ctx context.Context, account string, kind store.Kind, id string) error
	OpenJobAudio(ctx context.Context, account string, kind store.Kind, id string) (*os.File, string, error)
}

// Uploads is what the API needs for service-hosted files.
type Uploads interface {
	Upload(ctx context.Context, account, filename string, r io.Reader) (*store.Upload, error)
	OpenUpload(ctx context.Context, account, id string) (*os.File, *store.Upload, error)
}

// Readiness reports whether the service can take work.
type Readiness interface {
	Ready() error
}

// Service is the job service the API fronts.
type Service interface {
	Jobs
	Uploads
	Readiness
	Live
	Metrics
}

// Server serves the /v2 API over fasthttp.
type Server struct {
	cfg  Config
	svc  Service
	log  *slog.Logger
	srv  *fasthttp.Server
	rm   *requestMetrics
	whip WHIP // the WebRTC door, set by SetWHIP before Run; nil answers 404
}

// New builds a Server; it binds and starts nothing.
func New(cfg Config, svc Service, logger *slog.Logger) *Server {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	s := &Server{cfg: cfg, svc: svc, log: logger, rm: newRequestMetrics(svc.Metrics())}
	r := router.New()
	r.RedirectTrailingSlash = false
	r.RedirectFixedPath = false
	r.SaveMatchedRoutePath = true
	r.GET("/healthz", s.healthz)
	r.GET("/metrics", s.rm.handler)
	r.GET("/readyz", s.readyz)
	r.GET("/v2/engines", s.auth(s.listEngines))
	r.POST("/v2/upload", s.auth(s.upload))
	r.GET("/v2/files/{id}", s.auth(s.getUpload))
	r.POST("/v2/pre-recorded", s.auth(s.createPreRecorded))
	r.GET("/v2/pre-recorded", s.auth(s.list(store.KindPreRecorded)))
	r.GET("/v2/pre-recorded/{id}", s.auth(s.getJob(store.KindPreRecorded)))
	r.DELETE("/v2/pre-recorded/{id}", s.auth(s.deleteJob(store.KindPreRecorded)))
	r.GET("/v2/pre-recorded/{id}/file", s.auth(s.getJobFile(store.KindPreRecorded)))
	r.DELETE("/v2/transcription/{id}", s.auth(s.deleteTranscription))
	r.POST("/v2/live", s.auth(s.createLive))
	r.GET("/v2/live", s.liveRoot)
	r.GET("/v2/live/{id}", s.auth(s.getJob(store.KindLive)))
	r.DELETE("/v2/live/{id}", s.auth(s.deleteJob(store.KindLive)))
	r.GET("/v2/live/{id}/file", s.auth(s.getJobFile(store.KindLive)))
	r.POST("/v2/live/{id}/whip", s.whipOffer)
	r.OPTIONS("/v2/live/{id}/whip", s.whipOptions("POST, OPTIONS"))
	r.DELETE("/v2/live/{id}/whip/{resource}", s.whipDelete)
	r.PATCH("/v2/live/{id}/whip/{resource}", s.whipPatch)
	r.OPTIONS("/v2/live/{id}/whip/{resource}", s.whipOptions("DELETE, PATCH, OPTIONS"))
	r.GET("/console", s.console)
	r.GET("/console/{file}", s.console)
	r.NotFound = func(ctx *fasthttp.RequestCtx) {
		s.fail(ctx, fmt.Errorf("route %s: %w", ctx.Path(), daemon.ErrNotFound))
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
	s.srv = &fasthttp.Server{
		Handler:                      s.withRequestID(r.Handler),
		Name:                         "earshot",
		ReadTimeout:                  cfg.ReadTimeout,
		WriteTimeout:                 cfg.WriteTimeout,
		IdleTimeout:                  cfg.IdleTimeout,
		MaxConnsPerIP:                0,
		Concurrency:                  cfg.MaxConns,
		MaxRequestBodySize:           int(cfg.MaxUploadBytes + 1<<20),
		StreamRequestBody:            true,
		DisablePreParseMultipartForm: true,
		NoDefaultContentType:         true,
		CloseOnShutdown:              true,
		Logger:                       fasthttpLogger{s.log},
	}
	return s
}

// Run serves on ln until ctx ends, then stops accepting and waits for
// in-flight requests (bounded by the server's timeouts).
func (s *Server) Run(ctx context.Context, ln net.Listener) error {
	errc := make(chan error, 1)
	go func() { errc <- s.srv.Serve(ln) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	err := s.srv.ShutdownWithContext(sctx)
	<-errc
	return err
}

type ctxKey int

const keyRequestID ctxKey = iota

func (s *Server) withRequestID(h fasthttp.RequestHandler) fasthttp.RequestHandler {
	return func(ctx *fasthttp.RequestCtx) {
		ctx.SetUserValue(keyRequestID, uuid.NewString())
		start := time.Now()
		h(ctx)
		s.rm.observe(ctx)
		if s.log.Enabled(context.Background(), slog.LevelDebug) {
			s.log.Debug("request", "method", string(ctx.Method()), "path", string(ctx.Path()),
				"status", ctx.Response.StatusCode(), "elapsed_ms", time.Since(start).Milliseconds(),
				"request_id", requestID(ctx), "remote_addr", ctx.RemoteAddr().String())
		}
	}
}

func requestID(ctx *fasthttp.RequestCtx) string {
	id, _ := ctx.UserValue(keyRequestID).(string)
	return id
}

type ctxAccount struct{}

// auth checks x-service-key and records the account for the handler.
func (s *Server) auth(h fasthttp.RequestHandler) fasthttp.RequestHandler {
	return func(ctx *fasthttp.RequestCtx) {
		acct, err := s.svc.Authenticate(string(ctx.Request.Header.Peek(HeaderKey)))
		if err != nil {
			s.fail(ctx, err)
			return
		}
		ctx.SetUserValue(ctxAccount{}, acct)
		h(ctx)
	}
}

func account(ctx *fasthttp.RequestCtx) string {
	a, _ := ctx.UserValue(ctxAccount{}).(string)
	return a
}

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
