package remote

import (
	"errors"
	"log/slog"
	"net/url"
	"slices"
	"time"

	"github.com/earshot-dev/earshot/config"
)

// Defaults and limits of Config.
const (
	DefaultName            = "remote"
	DefaultCapacity        = 4
	DefaultTimeout         = 60 * time.Second
	DefaultRetries         = 2
	DefaultBreakerFailures = 5
	DefaultBreakerCooldown = 30 * time.Second
	DefaultPartialInterval = time.Second

	// MaxCapacity bounds Config.Capacity.
	MaxCapacity = 1024
	// MaxRetries bounds Config.Retries.
	MaxRetries = 10
	// MaxPromptBytes bounds Config.Prompt (Whisper reads at most 224
	// prompt tokens; longer prompts only cost upload time).
	MaxPromptBytes = 4096
	// MaxAudio bounds the audio of one utterance (one request): 10 minutes
	// is 19.2 MB of WAV, under the 25 MB upload limit of the OpenAI API
	// and of servers that copy it.
	MaxAudio = 10 * time.Minute
	// firstBackoff is the wait before the first retry; it doubles per retry.
	firstBackoff = 200 * time.Millisecond
)

// Config says where the transcription server is and how hard to use it.
// The zero value plus URL, Model and SetDefaults is a working
// configuration.
type Config struct {
	// Name identifies the engine in logs and job metadata. Default
	// "remote".
	Name string `yaml:"name"`
	// URL is the server's API base, http or https, to which
	// "/audio/transcriptions" is appended (e.g. http://gpu-box:8000/v1).
	// Required.
	URL string `yaml:"url"`
	// Model is sent as the "model" field (e.g. "whisper-1",
	// "Systran/faster-whisper-large-v3"). Required.
	Model string `yaml:"model"`
	// APIKey is sent as "Authorization: Bearer <key>" when set. Never
	// logged (Config.LogValue redacts it).
	APIKey config.Secret `yaml:"api_key"`
	// Languages lists the SPEC.md §2.6 codes the server serves. Default
	// (empty): every code of §2.6.
	Languages []string `yaml:"languages"`
	// Capacity is the number of streams (and Translate calls) open at
	// once, 1..1024, and so of concurrent requests: NewStream waits for a
	// free slot. Default 4.
	Capacity int `yaml:"capacity"`
	// Timeout bounds one request, upload to last byte of the answer.
	// Default 60s.
	Timeout time.Duration `yaml:"timeout"`
	// Retries is how many times a request is retried after a connection
	// error or a 5xx/429/408 answer, with backoff doubling from 200ms
	// (or the server's Retry-After, up to 10s), 0..10. Default (0) 2;
	// negative means no retries.
	Retries int `yaml:"retries"`
	// BreakerFailures is the number of consecutive failed attempts that
	// opens the circuit. Default 5.
	BreakerFailures int `yaml:"breaker_failures"`
	// BreakerCooldown is how long the open circuit fails requests fast
	// with ErrUnavailable before one probe request is let through.
	// Default 30s.
	BreakerCooldown time.Duration `yaml:"breaker_cooldown"`
	// PartialInterval is the least time between two partial-result
	// requests of one stream; each re-sends the utterance so far, so it
	// multiplies server load. Default (0) 1s; negative disables partials.
	PartialInterval time.Duration `yaml:"partial_interval"`
	// Prompt is sent as the "prompt" field of every request (custom
	// vocabulary, spelling hints), at most 4096 bytes. Default none.
	Prompt string `yaml:"prompt"`
}

// SetDefaults fills zero fields with their defaults.
func (c *Config) SetDefaults() {
	if c.Name == "" {
		c.Name = DefaultName
	}
	if len(c.Languages) == 0 {
		c.Languages = SpecLanguages()
	}
	if c.Capacity == 0 {
		c.Capacity = DefaultCapacity
	}
	if c.Timeout == 0 {
		c.Timeout = DefaultTimeout
	}
	if c.Retries == 0 {
		c.Retries = DefaultRetries
	}
	if c.BreakerFailures == 0 {
		c.BreakerFailures = DefaultBreakerFailures
	}
	if c.BreakerCooldown == 0 {
		c.BreakerCooldown = DefaultBreakerCooldown
	}
	if c.PartialInterval == 0 {
		c.PartialInterval = DefaultPartialInterval
	}
}

// Validate reports every problem at once, each naming its key. It does no
// I/O: the server is first contacted by the first request.
func (c Config) Validate() error {
	var errs []error
	add := func(key, format string, args ...any) {
		errs = append(errs, config.Errorf(key, format, args...))
	}
	if c.Name == "" {
		add("name", "empty")
	}
	if c.URL == "" {
		add("url", "empty")
	} else if u, err := url.Parse(c.URL); err != nil {
		add("url", "%v", err)
	} else if u.Scheme != "http" && u.Scheme != "https" || u.Host == "" {
		add("url", "%q is not an http or https URL with a host", c.URL)
	} else if u.User != nil {
		add("url", "credentials in the URL; use api_key")
	} else if u.RawQuery != "" || u.Fragment != "" {
		add("url", "%q has a query or fragment", c.URL)
	}
	if c.Model == "" {
		add("model", "empty")
	}
	for i, l := range c.Languages {
		if !slices.Contains(specLanguages, l) {
			add("languages", "item %d: %q is not a language code of the contract", i, l)
		} else if slices.Contains(c.Languages[:i], l) {
			add("languages", "item %d: %q repeated", i, l)
		}
	}
	if c.Capacity < 1 || c.Capacity > MaxCapacity {
		add("capacity", "%d not in 1..%d", c.Capacity, MaxCapacity)
	}
	if c.Timeout <= 0 {
		add("timeout", "%v not positive", c.Timeout)
	}
	if c.Retries > MaxRetries {
		add("retries", "%d > %d", c.Retries, MaxRetries)
	}
	if c.BreakerFailures < 1 {
		add("breaker_failures", "%d < 1", c.BreakerFailures)
	}
	if c.BreakerCooldown <= 0 {
		add("breaker_cooldown", "%v not positive", c.BreakerCooldown)
	}
	if len(c.Prompt) > MaxPromptBytes {
		add("prompt", "%d bytes > limit %d", len(c.Prompt), MaxPromptBytes)
	}
	return errors.Join(errs...)
}

// LogValue implements slog.LogValuer: every field, with the API key
// replaced by REDACTED (or empty when unset).
func (c Config) LogValue() slog.Value {
	return slog.GroupValue(
		slog.String("name", c.Name),
		slog.String("url", c.URL),
		slog.String("model", c.Model),
		slog.Any("api_key", c.APIKey),
		slog.Int("languages", len(c.Languages)),
		slog.Int("capacity", c.Capacity),
		slog.Duration("timeout", c.Timeout),
		slog.Int("retries", c.Retries),
		slog.Int("breaker_failures", c.BreakerFailures),
		slog.Duration("breaker_cooldown", c.BreakerCooldown),
		slog.Duration("partial_interval", c.PartialInterval),
		slog.Int("prompt_bytes", len(c.Prompt)),
	)
}

// retries is the number of retries after the first attempt.
func (c Config) retries() int { return max(c.Retries, 0) }

// partialsEnabled reports whether streams make partial requests.
func (c Config) partialsEnabled() bool { return c.PartialInterval > 0 }
