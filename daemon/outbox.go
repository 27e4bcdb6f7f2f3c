package daemon

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/earshot-dev/earshot/ingest/media"
	"github.com/earshot-dev/earshot/params"
	"github.com/earshot-dev/earshot/store"
)

// Callback headers. The signature is hex HMAC-SHA256 of the body under the
// account's callback secret; the delivery id stays the same across retries
// so receivers can drop duplicates.
const (
	HeaderSignature = "x-earshot-signature"
	HeaderDelivery  = "x-earshot-delivery"
)

// outboxBatch bounds how many deliveries are attempted at once.
const outboxBatch = 8

// newCallbackClient builds the outbox's HTTP client: it dials through the
// same deny list as audio_url fetches (fetch.deny) with the exceptions of
// callbacks.allow, ignores proxy environment variables, and never follows
// a redirect (a 3xx is the receiver's answer: the signed body is never
// replayed to another address).
func newCallbackClient(cfg Config) *http.Client {
	g := media.Guard{Deny: cfg.Fetch.Deny, Allow: cfg.Callbacks.Allow}
	return &http.Client{
		Timeout: cfg.Callbacks.Timeout,
		Transport: &http.Transport{
			Proxy:               nil,
			DialContext:         g.Dialer(cfg.Callbacks.Timeout).DialContext,
			ForceAttemptHTTP2:   true,
			TLSHandshakeTimeout: cfg.Callbacks.Timeout,
			MaxIdleConns:        outboxBatch,
			IdleConnTimeout:     30 * time.Second,
		},
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
}

// callbackBody is the JSON body of every callback (PROTOCOL.md).
type callbackBody struct {
	ID      string `json:"id"`
	Event   string `json:"event"`
	Payload any    `json:"payload"`
}

// callbackDeliveries returns the outbox entries a finished pre-recorded job
// owes, to be committed with the job's new state.
func (d *Daemon) callbackDeliveries(j *store.Job, event string, payload any) ([]*store.Delivery, error) {
	var p params.PreRecorded
	if err := json.Unmarshal(j.Params, &p); err != nil {
		return nil, fmt.Errorf("decode stored params: %w", err)
	}
	url, method, ok := p.CallbackTarget()
	if !ok {
		return nil, nil
	}
	body, err := json.Marshal(callbackBody{ID: j.ID, Event: event, Payload: payload})
	if err != nil {
		return nil, err
	}
	return []*store.Delivery{{JobID: j.ID, Account: j.Account, URL: url, Method: method, Body: body}}, nil
}

// runOutbox delivers pending callbacks until ctx ends, retrying with
// exponential backoff; nothing is lost across restarts because every
// delivery is a store record until it succeeds or expires.
func (d *Daemon) runOutbox(ctx context.Context) error {
	log := d.log.With("component", "outbox")
	for {
		due, err := d.db.ClaimDeliveries(time.Now(), outboxBatch)
		if err != nil {
			log.Error("read outbox", "error", err)
		}
		var g errgroup.Group
		for _, del := range due {
			g.Go(func() error {
				d.attempt(ctx, del)
				return nil
			})
		}
		g.Wait()
		if ctx.Err() != nil {
			return nil
		}
		if len(due) == outboxBatch {
			continue
		}
		wait := time.Minute
		if next, ok, err := d.db.NextDelivery(); err == nil && ok {
			wait = min(max(time.Until(next), 0), time.Minute)
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil
		case <-d.outboxWake:
			t.Stop()
		case <-t.C:
		}
	}
}

// attempt makes one delivery attempt and records its outcome.
func (d *Daemon) attempt(ctx context.Context, del *store.Delivery) {
	log := d.log.With("component", "outbox", "job_id", del.JobID)
	status, err := d.send(ctx, del)
	if ctx.Err() != nil {
		return // shutting down: the record stays due
	}
	switch {
	case err == nil && status >= 200 && status < 300:
		if err := d.db.DeleteDelivery(del.ID); err != nil {
			log.Error("delete delivery", "error", err)
		}
		d.metrics.callbackAttempts.WithLabelValues("delivered").Inc()
		log.Info("callback delivered", "status", status, "attempts", del.Attempts+1)
		return
	case errors.Is(err, media.ErrDenied):
		// Deterministic for the address it resolved to: not retried.
		d.metrics.callbackAttempts.WithLabelValues("refused").Inc()
		log.Warn("callback refused: destination denied by fetch.deny (add it to callbacks.allow to permit it)", "error", err)
		if err := d.db.DeleteDelivery(del.ID); err != nil {
			log.Error("delete delivery", "error", err)
		}
		return
	case err == nil && status >= 300 && status < 400:
		d.metrics.callbackAttempts.WithLabelValues("refused").Inc()
		log.Warn("callback answered a redirect; redirects are not followed, not retried", "status", status)
		if err := d.db.DeleteDelivery(del.ID); err != nil {
			log.Error("delete delivery", "error", err)
		}
		return
	case err == nil && status >= 400 && status < 500 && status != 429:
		d.metrics.callbackAttempts.WithLabelValues("refused").Inc()
		log.Warn("callback refused; not retried", "status", status)
		if err := d.db.DeleteDelivery(del.ID); err != nil {
			log.Error("delete delivery", "error", err)
		}
		return
	}
	reason := fmt.Sprintf("status %d", status)
	if err != nil {
		reason = err.Error()
	}
	if time.Since(del.CreatedAt) > d.cfg.Callbacks.MaxAge {
		d.metrics.callbackAttempts.WithLabelValues("expired").Inc()
		log.Error("callback expired undelivered", "attempts", del.Attempts+1, "error", reason)
		if err := d.db.DeleteDelivery(del.ID); err != nil {
			log.Error("delete delivery", "error", err)
		}
		return
	}
	d.metrics.callbackAttempts.WithLabelValues("retry").Inc()
	next := time.Now().Add(d.backoff(del.Attempts))
	log.Warn("callback failed; will retry", "attempts", del.Attempts+1, "error", reason, "retry_at", next)
	if err := d.db.RescheduleDelivery(del.ID, next, reason); err != nil {
		log.Error("reschedule delivery", "error", err)
	}
}

// backoff doubles from MinBackoff per attempt up to MaxBackoff.
func (d *Daemon) backoff(attempts int) time.Duration {
	b := d.cfg.Callbacks.MinBackoff
	for range min(attempts, 40) {
		b *= 2
		if b >= d.cfg.Callbacks.MaxBackoff {
			return d.cfg.Callbacks.MaxBackoff
		}
	}
	return b
}

func (d *Daemon) send(ctx context.Context, del *store.Delivery) (int, error) {
	secret, err := d.db.CallbackSecret(del.Account)
	if err != nil {
		return 0, err
	}
	mac := hmac.New(sha256.New, secret)
	mac.Write(del.Body)
	ctx, cancel := context.WithTimeout(ctx, d.cfg.Callbacks.Timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, del.Method, del.URL, bytes.NewReader(del.Body))
	if err != nil {
		return 0, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "earshot")
	req.Header.Set(HeaderSignature, hex.EncodeToString(mac.Sum(nil)))
	req.Header.Set(HeaderDelivery, del.ID)
	resp, err := d.client.Do(req)
	if err != nil {
		return 0, err
	}
	resp.Body.Close()
	return resp.StatusCode, nil
}
