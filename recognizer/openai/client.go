package openai

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// Client posts to one Endpoint with the package's retry rule. Safe for
// concurrent use.
type Client struct {
	ep       Endpoint
	base     string // ep.URL without a trailing slash
	http     *http.Client
	maxBytes int64
}

// Options are the client's bounds beyond the Endpoint.
type Options struct {
	// MaxIdleConns bounds the idle connections kept to the server;
	// default 4.
	MaxIdleConns int
	// MaxResponseBytes bounds a response body; a longer 2xx body is
	// ErrBadResponse. Default 8 MiB.
	MaxResponseBytes int64
	// Transport, when not nil, carries the requests instead of a direct
	// TCP transport (tests over in-memory connections).
	Transport http.RoundTripper
}

// NewClient returns a client of ep (after its SetDefaults and Validate).
// It makes no connection; the transport dials directly (no proxy from the
// environment: the operator configures the URL).
func NewClient(ep Endpoint, o Options) *Client {
	if o.MaxIdleConns <= 0 {
		o.MaxIdleConns = 4
	}
	if o.MaxResponseBytes <= 0 {
		o.MaxResponseBytes = 8 << 20
	}
	var tr http.RoundTripper = &http.Transport{
		DialContext:           (&net.Dialer{Timeout: 10 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
		ForceAttemptHTTP2:     true,
		MaxIdleConns:          o.MaxIdleConns,
		MaxIdleConnsPerHost:   o.MaxIdleConns,
		IdleConnTimeout:       90 * time.Second,
		TLSHandshakeTimeout:   10 * time.Second,
		ExpectContinueTimeout: time.Second,
	}
	if o.Transport != nil {
		tr = o.Transport
	}
	return &Client{ep: ep, base: strings.TrimRight(ep.URL, "/"), http: &http.Client{Transport: tr}, maxBytes: o.MaxResponseBytes}
}

// Endpoint is the client's endpoint.
func (c *Client) Endpoint() Endpoint { return c.ep }

// Close releases idle connections. Idempotent; the client still works
// afterwards.
func (c *Client) Close() error {
	c.http.CloseIdleConnections()
	return nil
}

// Outcome is what one attempt says about the server's health.
type Outcome int

const (
	// Success: the server answered (any 2xx, or a 4xx it chose).
	Success Outcome = iota
	// Failure: unreachable, 408/429/5xx or too slow.
	Failure
	// Neutral: cancelled by the caller; says nothing.
	Neutral
)

// Attempts lets a caller gate and watch each attempt of a Post (a circuit
// breaker, a debug log).
type Attempts interface {
	// Allow is called before each attempt; an error ends the Post with
	// ErrUnavailable wrapping it.
	Allow() error
	// Done is called after each attempt Allow let through, with its
	// number (1-based), outcome and error; true stops retrying.
	Done(attempt int, o Outcome, err error) (stop bool)
}

// Request is one POST.
type Request struct {
	// Path is appended to the endpoint's URL ("/chat/completions").
	Path string
	// ContentType and Body are the request's.
	ContentType string
	Body        []byte
	// NoRetry makes one attempt whatever Endpoint.Retries says (partial
	// transcripts, which the next one replaces).
	NoRetry bool
	// Attempts, when not nil, gates and watches each attempt.
	Attempts Attempts
}

// Post sends r, retrying by the package's rule, and returns the 2xx body
// and the number of attempts made. ctx bounds the whole call; a cancelled
// ctx returns its cause.
func (c *Client) Post(ctx context.Context, r Request) (body []byte, attempts int, err error) {
	retries := c.ep.retries()
	if r.NoRetry {
		retries = 0
	}
	wait := c.ep.Backoff
	for attempt := 0; ; attempt++ {
		if r.Attempts != nil {
			if err := r.Attempts.Allow(); err != nil {
				return nil, attempts, fmt.Errorf("%w: %w", ErrUnavailable, err)
			}
		}
		attempts++
		data, retryAfter, out, err := c.attempt(ctx, r)
		stop := r.Attempts != nil && r.Attempts.Done(attempts, out, err)
		if err == nil {
			return data, attempts, nil
		}
		if out != Failure || errors.Is(err, ErrTimeout) || attempt >= retries || stop {
			return nil, attempts, err
		}
		t := time.NewTimer(max(wait, min(retryAfter, MaxRetryAfter)))
		wait *= 2
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return nil, attempts, fmt.Errorf("wait to retry: %w (after %w)", context.Cause(ctx), err)
		}
	}
}

// errAttemptTimeout is the cause of an attempt context that hit
// Endpoint.Timeout.
var errAttemptTimeout = errors.New("openai: attempt deadline")

// attempt makes one request and classifies its outcome.
func (c *Client) attempt(ctx context.Context, r Request) (data []byte, retryAfter time.Duration, out Outcome, err error) {
	actx, cancel := context.WithTimeoutCause(ctx, c.ep.Timeout, errAttemptTimeout)
	defer cancel()
	failed := func(action string, err error) ([]byte, time.Duration, Outcome, error) {
		switch {
		case ctx.Err() != nil:
			return nil, 0, Neutral, context.Cause(ctx)
		case actx.Err() != nil:
			return nil, 0, Failure, fmt.Errorf("%w after %v", ErrTimeout, c.ep.Timeout)
		}
		return nil, 0, Failure, fmt.Errorf("%s: %w: %w", action, ErrUnavailable, err)
	}
	req, err := http.NewRequestWithContext(actx, http.MethodPost, c.base+r.Path, bytes.NewReader(r.Body))
	if err != nil { // the URL was validated
		return nil, 0, Neutral, err
	}
	req.Header.Set("Content-Type", r.ContentType)
	req.Header.Set("Accept", "application/json")
	if c.ep.APIKey != "" {
		req.Header.Set("Authorization", "Bearer "+string(c.ep.APIKey))
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return failed("post", err)
	}
	defer resp.Body.Close()
	data, err = io.ReadAll(io.LimitReader(resp.Body, c.maxBytes+1))
	if err != nil {
		return failed("read response", err)
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		serr := &StatusError{StatusCode: resp.StatusCode, Message: errorMessage(data)}
		if Retryable(resp.StatusCode) {
			return nil, parseRetryAfter(resp.Header.Get("Retry-After")), Failure, serr
		}
		return nil, 0, Success, serr
	}
	if int64(len(data)) > c.maxBytes {
		return nil, 0, Success, fmt.Errorf("%w: %w over %d bytes", ErrBadResponse, ErrTooLarge, c.maxBytes)
	}
	return data, 0, Success, nil
}

// ErrTooLarge is wrapped (with ErrBadResponse) for a 2xx body over
// Options.MaxResponseBytes.
var ErrTooLarge = errors.New("openai: response too large")

// parseRetryAfter reads a Retry-After header given in seconds (RFC 9110
// §10.2.3; the HTTP-date form is ignored), capped at MaxRetryAfter.
func parseRetryAfter(v string) time.Duration {
	n, err := strconv.Atoi(strings.TrimSpace(v))
	if err != nil || n < 0 {
		return 0
	}
	return min(time.Duration(n)*time.Second, MaxRetryAfter)
}

// errorMessage extracts a short message from an error body: OpenAI's
// {"error": {"message": ...}}, FastAPI's {"detail": ...}, or the body's
// start, at most 200 bytes.
func errorMessage(body []byte) string {
	var e struct {
		Error  json.RawMessage `json:"error"`
		Detail json.RawMessage `json:"detail"`
	}
	msg := ""
	if json.Unmarshal(body, &e) == nil {
		var inner struct {
			Message string `json:"message"`
		}
		var s string
		switch {
		case json.Unmarshal(e.Error, &inner) == nil && inner.Message != "":
			msg = inner.Message
		case json.Unmarshal(e.Error, &s) == nil:
			msg = s
		case json.Unmarshal(e.Detail, &s) == nil:
			msg = s
		case len(e.Detail) > 0:
			msg = string(e.Detail)
		}
	}
	if msg == "" {
		msg = string(body)
	}
	msg = strings.ToValidUTF8(strings.Join(strings.Fields(msg), " "), "")
	const limit = 200
	if len(msg) > limit {
		cut := limit
		for cut > 0 && msg[cut]&0xC0 == 0x80 {
			cut--
		}
		msg = msg[:cut] + "..."
	}
	return msg
}
