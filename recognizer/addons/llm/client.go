package llm

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// Client talks to one chat-completions server. It is safe for concurrent
// use.
type Client struct {
	cfg      Config
	endpoint string
	http     *http.Client
}

// maxRetryAfter caps a server's Retry-After.
const maxRetryAfter = 30 * time.Second

// New validates c (zero fields take their defaults) and returns a client.
// It does no I/O.
func New(c Config) (*Client, error) {
	c.SetDefaults()
	if err := c.Validate(); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInvalidConfig, err)
	}
	if !c.Configured() {
		return nil, fmt.Errorf("%w: url: required", ErrInvalidConfig)
	}
	tr := &http.Transport{
		Proxy:               http.ProxyFromEnvironment,
		MaxIdleConnsPerHost: 4,
		IdleConnTimeout:     90 * time.Second,
		TLSHandshakeTimeout: 10 * time.Second,
	}
	return &Client{
		cfg:      c,
		endpoint: strings.TrimRight(c.URL, "/") + "/chat/completions",
		http:     &http.Client{Transport: tr},
	}, nil
}

// Close releases idle connections. It is idempotent; the client still
// works afterwards (it opens new connections).
func (c *Client) Close() error {
	c.http.CloseIdleConnections()
	return nil
}

// WithBudget returns ctx bounded by Config.Budget, for one add-on run on
// one job; the add-on functions apply it themselves.
func (c *Client) WithBudget(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeoutCause(ctx, c.cfg.Budget, fmt.Errorf("%w: job budget %v used up", ErrTimeout, c.cfg.Budget))
}

type message struct {
	Role    string `json:"role"`
	Content string `json:"content"`
}

type request struct {
	Model       string    `json:"model"`
	Messages    []message `json:"messages"`
	Temperature float64   `json:"temperature"`
	Stream      bool      `json:"stream"`
}

type response struct {
	Choices []struct {
		Message *struct {
			Content *string `json:"content"`
		} `json:"message"`
	} `json:"choices"`
}

// Complete sends one chat completion with an optional system message and
// a user message and returns the first choice's content (trimmed). See the
// package comment for retries and errors; a cancelled ctx returns its
// error, an expired one wraps ErrTimeout.
func (c *Client) Complete(ctx context.Context, system, user string) (string, error) {
	var msgs []message
	if system != "" {
		msgs = append(msgs, message{"system", system})
	}
	msgs = append(msgs, message{"user", user})
	body, err := json.Marshal(request{Model: c.cfg.Model, Messages: msgs})
	if err != nil {
		return "", fmt.Errorf("llm: encode request: %w", err)
	}
	wait := c.cfg.Backoff
	for attempt := 0; ; attempt++ {
		out, retryAfter, err := c.attempt(ctx, body)
		if err == nil {
			return out, nil
		}
		if ctx.Err() != nil {
			return "", ctxError(ctx)
		}
		if retryAfter < 0 || attempt >= c.cfg.Retries {
			if attempt > 0 {
				return "", fmt.Errorf("llm: %d attempts: %w", attempt+1, err)
			}
			return "", err
		}
		d := max(wait, retryAfter)
		wait *= 2
		t := time.NewTimer(d)
		select {
		case <-ctx.Done():
			t.Stop()
			return "", ctxError(ctx)
		case <-t.C:
		}
	}
}

// ctxError maps an ended caller context to the package's errors.
func ctxError(ctx context.Context) error {
	cause := context.Cause(ctx)
	if errors.Is(cause, ErrTimeout) {
		return cause
	}
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return fmt.Errorf("%w: %w", ErrTimeout, cause)
	}
	return fmt.Errorf("llm: %w", cause)
}

// attempt makes one request. retryAfter is negative when the error is
// not worth retrying, else the least wait the server asked for.
func (c *Client) attempt(ctx context.Context, body []byte) (_ string, retryAfter time.Duration, _ error) {
	actx, cancel := context.WithTimeout(ctx, c.cfg.Timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(actx, http.MethodPost, c.endpoint, bytes.NewReader(body))
	if err != nil {
		return "", -1, fmt.Errorf("llm: new request: %w", err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	if c.cfg.APIKey != "" {
		req.Header.Set("Authorization", "Bearer "+string(c.cfg.APIKey))
	}
	resp, err := c.http.Do(req)
	if err != nil {
		if ctx.Err() == nil && actx.Err() != nil {
			return "", 0, fmt.Errorf("llm: post %s: no answer within %v: %w", c.endpoint, c.cfg.Timeout, ErrTimeout)
		}
		return "", 0, fmt.Errorf("llm: %w: %w", ErrUnavailable, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, c.cfg.MaxResponseBytes+1))
	if err != nil {
		if ctx.Err() == nil && actx.Err() != nil {
			return "", 0, fmt.Errorf("llm: read %s: no answer within %v: %w", c.endpoint, c.cfg.Timeout, ErrTimeout)
		}
		return "", 0, fmt.Errorf("llm: read %s: %w: %w", c.endpoint, ErrUnavailable, err)
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		e := &BackendError{StatusCode: resp.StatusCode, Message: errorMessage(data)}
		if resp.StatusCode == http.StatusTooManyRequests || resp.StatusCode >= 500 {
			return "", retryAfterHeader(resp.Header.Get("Retry-After")), e
		}
		return "", -1, e
	}
	if int64(len(data)) > c.cfg.MaxResponseBytes {
		return "", -1, fmt.Errorf("%w: response over %d bytes", ErrMalformed, c.cfg.MaxResponseBytes)
	}
	var r response
	if err := json.Unmarshal(data, &r); err != nil {
		return "", -1, fmt.Errorf("%w: %w", ErrMalformed, err)
	}
	if len(r.Choices) == 0 || r.Choices[0].Message == nil || r.Choices[0].Message.Content == nil {
		return "", -1, fmt.Errorf("%w: no choice with message content", ErrMalformed)
	}
	return strings.TrimSpace(*r.Choices[0].Message.Content), 0, nil
}

// errorMessage extracts an OpenAI-style error message, or the start of
// the body, at most 200 bytes.
func errorMessage(data []byte) string {
	var e struct {
		Error struct {
			Message string `json:"message"`
		} `json:"error"`
	}
	msg := strings.TrimSpace(string(data))
	if json.Unmarshal(data, &e) == nil && e.Error.Message != "" {
		msg = e.Error.Message
	}
	if len(msg) > 200 {
		msg = msg[:200]
	}
	return strings.ToValidUTF8(msg, "")
}

// retryAfterHeader parses Retry-After in seconds, capped at 30 s.
func retryAfterHeader(v string) time.Duration {
	s, err := strconv.Atoi(strings.TrimSpace(v))
	if err != nil || s < 0 {
		return 0
	}
	return min(time.Duration(s)*time.Second, maxRetryAfter)
}
