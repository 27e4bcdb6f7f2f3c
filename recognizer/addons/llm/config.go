package llm

import (
	"errors"
	"log/slog"
	"net/url"
	"time"

	"github.com/earshot-dev/earshot/config"
)

// Config selects the chat-completions server and bounds its use. It is the
// addons.llm section of the daemon's file as it stands: an empty URL means
// no backend (the add-ons that need one report 501 NotConfigured).
type Config struct {
	// URL is the API base, e.g. "http://gpu:8000/v1"; requests go to
	// URL + "/chat/completions", http or https. Default "" (no backend).
	URL string `yaml:"url"`
	// Model is the model name sent with each request; required with URL.
	Model string `yaml:"model"`
	// APIKey is sent as "Authorization: Bearer <key>" when set. Secret:
	// never logged (see LogValue).
	APIKey config.Secret `yaml:"api_key"`
	// Timeout bounds one attempt, headers and body. Default 60 s.
	Timeout time.Duration `yaml:"timeout"`
	// Retries is how many times a failed attempt (5xx, 429, connection
	// error, timeout) is repeated, 0 to 10; -1 means never. Default 2.
	Retries int `yaml:"retries"`
	// Budget bounds all requests of one add-on run on one job
	// (Translate, AnswerPrompts, AbstractiveSummary). Default 5 min.
	Budget time.Duration `yaml:"budget"`
	// Backoff is the wait before the first retry, doubling after each.
	// Default 500 ms.
	Backoff time.Duration `yaml:"backoff"`
	// MaxResponseBytes bounds a response body. Default 4 MiB.
	MaxResponseBytes int64 `yaml:"max_response_bytes"`
	// MaxInputChars bounds the transcript text put in one request; longer
	// input is split (translation, summary) or refused (prompts). Default
	// 48000 (about 12k tokens).
	MaxInputChars int `yaml:"max_input_chars"`
}

// SetDefaults fills zero fields with their defaults.
func (c *Config) SetDefaults() {
	if c.Timeout == 0 {
		c.Timeout = 60 * time.Second
	}
	if c.Retries == 0 {
		c.Retries = 2
	}
	if c.Budget == 0 {
		c.Budget = 5 * time.Minute
	}
	if c.Backoff == 0 {
		c.Backoff = 500 * time.Millisecond
	}
	if c.MaxResponseBytes == 0 {
		c.MaxResponseBytes = 4 << 20
	}
	if c.MaxInputChars == 0 {
		c.MaxInputChars = 48000
	}
}

// Configured reports whether a backend is set.
func (c Config) Configured() bool { return c.URL != "" }

// Validate reports every problem at once, each a *config.Problem naming
// its key (relative to this section). A config without URL is valid (no
// backend) unless it sets model or api_key.
func (c Config) Validate() error {
	var errs []error
	bad := func(key, format string, a ...any) { errs = append(errs, config.Errorf(key, format, a...)) }
	if c.URL == "" {
		if c.Model != "" || c.APIKey != "" {
			bad("url", "required when model or api_key is set")
		}
	} else {
		if u, err := url.Parse(c.URL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			bad("url", "%q is not an http(s) URL", c.URL)
		}
		if c.Model == "" {
			bad("model", "required when url is set")
		}
	}
	if c.Timeout <= 0 {
		bad("timeout", "must be > 0, not %s", c.Timeout)
	}
	if c.Retries < -1 || c.Retries > 10 {
		bad("retries", "must be -1 (never) to 10, not %d", c.Retries)
	}
	if c.Budget <= 0 {
		bad("budget", "must be > 0, not %s", c.Budget)
	}
	if c.Backoff < 0 {
		bad("backoff", "must not be negative, not %s", c.Backoff)
	}
	if c.MaxResponseBytes < 1024 {
		bad("max_response_bytes", "must be at least 1024, not %d", c.MaxResponseBytes)
	}
	if c.MaxInputChars < 1000 {
		bad("max_input_chars", "must be at least 1000, not %d", c.MaxInputChars)
	}
	return errors.Join(errs...)
}

// LogValue prints the config with the API key redacted.
func (c Config) LogValue() slog.Value {
	return slog.GroupValue(
		slog.String("url", c.URL), slog.String("model", c.Model), slog.Any("api_key", c.APIKey),
		slog.Duration("timeout", c.Timeout), slog.Int("retries", c.Retries), slog.Duration("budget", c.Budget))
}
