package llm

import (
	"errors"
	"log/slog"
	"time"

	"github.com/earshot-dev/earshot/config"
	"github.com/earshot-dev/earshot/recognizer/openai"
)

// Config selects the chat-completions server and bounds its use. It is the
// addons.llm section of the daemon's file as it stands: an empty URL means
// no backend (the add-ons that need one report 501 NotConfigured).
type Config struct {
	// Endpoint is the server (url, model, api_key) and its retry rule
	// (timeout, retries, backoff), as package openai defines them for
	// every OpenAI-compatible backend: requests go to url +
	// "/chat/completions"; an empty url means no backend, and model is
	// then required with it.
	openai.Endpoint `yaml:",inline"`
	// Budget bounds all requests of one add-on run on one job
	// (Translate, AnswerPrompts, AbstractiveSummary). Default 5 min.
	Budget time.Duration `yaml:"budget"`
	// MaxResponseBytes bounds a response body. Default 4 MiB.
	MaxResponseBytes int64 `yaml:"max_response_bytes"`
	// MaxInputChars bounds the transcript text put in one request; longer
	// input is split (translation, summary) or refused (prompts). Default
	// 48000 (about 12k tokens).
	MaxInputChars int `yaml:"max_input_chars"`
}

// SetDefaults fills zero fields with their defaults.
func (c *Config) SetDefaults() {
	c.Endpoint.SetDefaults()
	if c.Budget == 0 {
		c.Budget = 5 * time.Minute
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
	if c.URL == "" && (c.Model != "" || c.APIKey != "") {
		bad("url", "required when model or api_key is set")
	}
	errs = append(errs, c.Endpoint.Validate())
	if c.Budget <= 0 {
		bad("budget", "must be > 0, not %s", c.Budget)
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
