package callback

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"golang.org/x/sync/errgroup"

	"github.com/earshot-dev/earshot/ingest/media"
	"github.com/earshot-dev/earshot/store"
)

// batch bounds how many deliveries are attempted at once.
const batch = 8

// Store is what the outbox needs of the store (store.Store has it).
type Store interface {
	ClaimDeliveries(now time.Time, limit int) ([]*store.Delivery, error)
	NextDelivery() (time.Time, bool, error)
	RescheduleDelivery(id string, next time.Time, lastErr string) error
	DeleteDelivery(id string) error
	CallbackSecret(account string) ([]byte, error)
}

// Outbox delivers the store's pending callbacks: New, then Run until its
// context ends, or Shutdown to stop after delivering what is due.
type Outbox struct {
	cfg      Config
	db       Store
	log      *slog.Logger
	client   *http.Client
	attempts *prometheus.CounterVec

	wake     chan struct{} // cap 1: a delivery was enqueued
	draining chan struct{} // closed by Shutdown: deliver what is due, then return
	abort    chan struct{} // closed when Shutdown's ctx ends: cancel the attempts in flight
	stopped  chan struct{} // closed when Run returns
	once     sync.Once     // closes draining
	abortMu  sync.Once     // closes abort
}

// New builds the outbox; it starts nothing. cfg must have passed Validate
// (with Deny joined in); log may be nil.
func New(cfg Config, db Store, log *slog.Logger) *Outbox {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Outbox{
		cfg: cfg, db: db, log: log, client: newClient(cfg),
		attempts: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "earshot_callback_attempts_total", Help: "Callback delivery attempts by outcome (delivered, retry, refused, expired).",
		}, []string{"outcome"}),
		wake: make(chan struct{}, 1), draining: make(chan struct{}), abort: make(chan struct{}), stopped: make(chan struct{}),
	}
}

// Collectors are the outbox's Prometheus series.
func (o *Outbox) Collectors() []prometheus.Collector { return []prometheus.Collector{o.attempts} }

// Wake tells the outbox a delivery was enqueued; it never blocks.
func (o *Outbox) Wake() {
	select {
	case o.wake <- struct{}{}:
	default:
	}
}

// newClient builds the outbox's HTTP client: it dials through the same
// deny list as audio_url fetches (fetch.deny) with the exceptions of
// callbacks.allow, ignores proxy environment variables, and never follows
// a redirect (a 3xx is the receiver's answer: the signed body is never
// replayed to another address).
func newClient(cfg Config) *http.Client {
	g := media.Guard{Deny: cfg.Deny, Allow: cfg.Allow}
	return &http.Client{
		Timeout: cfg.Timeout,
		Transport: &http.Transport{
			Proxy:               nil,
			DialContext:         g.Dialer(cfg.Timeout).DialContext,
			ForceAttemptHTTP2:   true,
			TLSHandshakeTimeout: cfg.Timeout,
			MaxIdleConns:        batch,
			IdleConnTimeout:     30 * time.Second,
		},
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
}

// Run delivers pending callbacks until ctx ends or Shutdown has delivered
// what was due, retrying with exponential backoff; nothing is lost across
// restarts because every delivery is a store record until it succeeds or
// expires. An attempt cut short (ctx ended, or Shutdown's ctx) leaves its
// record leased and then due again. Run returns nil once its attempts
// have stopped.
func (o *Outbox) Run(ctx context.Context) error {
	defer close(o.stopped)
	// Attempts run until ctx ends or Shutdown gives up on them.
	actx, cancel := context.WithCancel(ctx)
	var watch sync.WaitGroup
	defer watch.Wait()
	watch.Go(func() {
		select {
		case <-o.abort:
			cancel()
		case <-actx.Done():
		}
	})
	defer cancel() // ends the watcher before Wait
	for {
		n := o.pass(actx)
		if actx.Err() != nil {
			return nil
		}
		select {
		case <-o.draining:
			if n == 0 {
				return nil // nothing was due: delivered
			}
			continue
		default:
		}
		if n == batch {
			continue
		}
		wait := time.Minute
		if next, ok, err := o.db.NextDelivery(); err == nil && ok {
			wait = min(max(time.Until(next), 0), time.Minute)
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil
		case <-o.draining:
			t.Stop()
		case <-o.wake:
			t.Stop()
		case <-t.C:
		}
	}
}

// Shutdown makes Run deliver what is due now (not waiting for later
// retries) and return. When ctx ends first, the attempts in flight are
// cancelled (their records stay leased, then due again after the restart)
// and Shutdown returns ctx's error once Run has returned. Call it while Run
// runs.
func (o *Outbox) Shutdown(ctx context.Context) error {
	o.once.Do(func() { close(o.draining) })
	select {
	case <-o.stopped:
		return nil
	case <-ctx.Done():
		o.abortMu.Do(func() { close(o.abort) })
		<-o.stopped
		return ctx.Err()
	}
}

// pass claims up to a batch of due deliveries and attempts them, returning
// how many it claimed.
func (o *Outbox) pass(ctx context.Context) int {
	due, err := o.db.ClaimDeliveries(time.Now(), batch)
	if err != nil {
		o.log.Error("read outbox", "error", err)
	}
	var g errgroup.Group
	for _, del := range due {
		g.Go(func() error {
			o.attempt(ctx, del)
			return nil
		})
	}
	g.Wait()
	return len(due)
}

// attempt makes one delivery attempt and records its outcome.
func (o *Outbox) attempt(ctx context.Context, del *store.Delivery) {
	log := o.log.With("job_id", del.JobID)
	status, err := o.send(ctx, del)
	if ctx.Err() != nil {
		return // shutting down: the record stays leased, then due
	}
	switch {
	case err == nil && status >= 200 && status < 300:
		o.delete(log, del)
		o.attempts.WithLabelValues("delivered").Inc()
		log.Info("callback delivered", "status", status, "attempts", del.Attempts+1)
		return
	case errors.Is(err, media.ErrDenied):
		// Deterministic for the address it resolved to: not retried.
		o.attempts.WithLabelValues("refused").Inc()
		log.Warn("callback refused: destination denied by fetch.deny (add it to callbacks.allow to permit it)", "error", err)
		o.delete(log, del)
		return
	case err == nil && status >= 300 && status < 400:
		o.attempts.WithLabelValues("refused").Inc()
		log.Warn("callback answered a redirect; redirects are not followed, not retried", "status", status)
		o.delete(log, del)
		return
	case err == nil && status >= 400 && status < 500 && status != 429:
		o.attempts.WithLabelValues("refused").Inc()
		log.Warn("callback refused; not retried", "status", status)
		o.delete(log, del)
		return
	}
	reason := fmt.Sprintf("status %d", status)
	if err != nil {
		reason = err.Error()
	}
	if time.Since(del.CreatedAt) > o.cfg.MaxAge {
		o.attempts.WithLabelValues("expired").Inc()
		log.Error("callback expired undelivered", "attempts", del.Attempts+1, "error", reason)
		o.delete(log, del)
		return
	}
	o.attempts.WithLabelValues("retry").Inc()
	next := time.Now().Add(o.backoff(del.Attempts))
	log.Warn("callback failed; will retry", "attempts", del.Attempts+1, "error", reason, "retry_at", next)
	if err := o.db.RescheduleDelivery(del.ID, next, reason); err != nil {
		log.Error("reschedule delivery", "error", err)
	}
}

func (o *Outbox) delete(log *slog.Logger, del *store.Delivery) {
	if err := o.db.DeleteDelivery(del.ID); err != nil {
		log.Error("delete delivery", "error", err)
	}
}

// backoff doubles from MinBackoff per attempt up to MaxBackoff.
func (o *Outbox) backoff(attempts int) time.Duration {
	b := o.cfg.MinBackoff
	for range min(attempts, 40) {
		b *= 2
		if b >= o.cfg.MaxBackoff {
			return o.cfg.MaxBackoff
		}
	}
	return b
}

func (o *Outbox) send(ctx context.Context, del *store.Delivery) (int, error) {
	secret, err := o.db.CallbackSecret(del.Account)
	if err != nil {
		return 0, err
	}
	ctx, cancel := context.WithTimeout(ctx, o.cfg.Timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, del.Method, del.URL, bytes.NewReader(del.Body))
	if err != nil {
		return 0, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "earshot")
	req.Header.Set(HeaderTimedSignature, Sign(secret, time.Now(), del.Body))
	if o.cfg.bodySignature() {
		mac := hmac.New(sha256.New, secret)
		mac.Write(del.Body)
		req.Header.Set(HeaderSignature, hex.EncodeToString(mac.Sum(nil)))
	}
	req.Header.Set(HeaderDelivery, del.ID)
	resp, err := o.client.Do(req)
	if err != nil {
		return 0, err
	}
	resp.Body.Close()
	return resp.StatusCode, nil
}
