package llm

import (
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"time"
)

// Config selects the chat-completions server and bounds its use.
type Config struct {
	// URL is the API base, e.g. "http://gpu:8000/v1"; requests go to
	// URL + "/chat/completions". Required, http or https.
	URL string `yaml:"url"`
	// Model is the model name sent with each request. Required.
	Model string `yaml:"model"`
	// APIKey is sent as "Authorization: Bearer <key>" when set. Secret:
	// never logged (see LogValue).
	APIKey string `yaml:"api_key"`
	// Timeout bounds one attempt, headers and body. Default 60 s.
	Timeout time.Duration `yaml:"timeout"`
	// Retries is how many times a failed attempt (5xx, 429, connection
	// error, timeout) is repeated. Default 2; negative means none; at
	// most 10.
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

// Validate reports every problem at once, each naming its key.
func (c Config) Validate() error {
	var errs []error
	if u, err := url.Parse(c.URL); c.URL == "" || err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		errs = append(errs, fmt.Errorf("llm: url: %q is not an http(s) URL", c.URL))
	}
	if c.Model == "" {
		errs = append(errs, errors.New("llm: model: required"))
	}
	if c.Timeout <= 0 {
		errs = append(errs, fmt.Errorf("llm: timeout: %v not positive", c.Timeout))
	}
	if c.Retries > 10 {
		errs = append(errs, fmt.Errorf("llm: retries: %d > 10", c.Retries))
	}
	if c.Budget <= 0 {
		errs = append(errs, fmt.Errorf("llm: budget: %v not positive", c.Budget))
	}
	if c.Backoff < 0 {
		errs = append(errs, fmt.Errorf("llm: backoff: %v negative", c.Backoff))
	}
	if c.MaxResponseBytes < 1024 {
		errs = append(errs, fmt.Errorf("llm: max_response_bytes: %d < 1024", c.MaxResponseBytes))
	}
	if c.MaxInputChars < 1000 {
		errs = append(errs, fmt.Errorf("llm: max_input_chars: %d < 1000", c.MaxInputChars))
	}
	return errors.Join(errs...)
}

// LogValue prints the config with the API key redacted.
func (c Config) LogValue() slog.Value {
	key := ""
	if c.APIKey != "" {
		key = "REDACTED"
	}
	return slog.GroupValue(
		slog.String("url", c.URL), slog.String("model", c.Model), slog.String("api_key", key),
		slog.Duration("timeout", c.Timeout), slog.Int("retries", c.Retries), slog.Duration("budget", c.Budget))
}
