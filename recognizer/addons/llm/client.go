package llm

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/earshot-dev/earshot/recognizer/openai"
)

// Client talks to one chat-completions server. It is safe for concurrent
// use.
type Client struct {
	cfg  Config
	http *openai.Client // the server, with the one retry rule
}

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
	return &Client{cfg: c, http: openai.NewClient(c.Endpoint, openai.Options{MaxResponseBytes: c.MaxResponseBytes})}, nil
}

// Close releases idle connections. It is idempotent; the client still
// works afterwards (it opens new connections).
func (c *Client) Close() error {
	return c.http.Close()
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
	data, attempts, err := c.http.Post(ctx, openai.Request{Path: "/chat/completions", ContentType: "application/json", Body: body})
	if err != nil {
		if ctx.Err() != nil {
			return "", ctxError(ctx)
		}
		if attempts > 1 {
			return "", fmt.Errorf("llm: %d attempts: %w", attempts, err)
		}
		return "", fmt.Errorf("llm: %w", err)
	}
	var r response
	if err := json.Unmarshal(data, &r); err != nil {
		return "", fmt.Errorf("%w: %w", ErrMalformed, err)
	}
	if len(r.Choices) == 0 || r.Choices[0].Message == nil || r.Choices[0].Message.Content == nil {
		return "", fmt.Errorf("%w: no choice with message content", ErrMalformed)
	}
	return strings.TrimSpace(*r.Choices[0].Message.Content), nil
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
