package remote

import (
	"errors"
	"log/slog"
	"slices"
	"time"

	"github.com/earshot-dev/earshot/config"
	"github.com/earshot-dev/earshot/recognizer/openai"
)

// Defaults and limits of Config.
const (
	DefaultName            = "remote"
	DefaultCapacity        = 4
	DefaultBreakerFailures = 5
	DefaultBreakerCooldown = 30 * time.Second
	DefaultPartialInterval = time.Second

	// MaxCapacity bounds Config.Capacity.
	MaxCapacity = 1024
	// MaxPromptBytes bounds Config.Prompt (Whisper reads at most 224
	// prompt tokens; longer prompts only cost upload time).
	MaxPromptBytes = 4096
	// MaxAudio bounds the audio of one utterance (one request): 10 minutes
	// is 19.2 MB of WAV, under the 25 MB upload limit of the OpenAI API
	// and of servers that copy it.
	MaxAudio = 10 * time.Minute
)

// Config says where the transcription server is and how hard to use it.
// The zero value plus URL, Model and SetDefaults is a working
// configuration.
type Config struct {
	// Name identifies the engine in logs and job metadata. Default
	// "remote".
	Name string `yaml:"name"`
	// Endpoint is the server (url, model, api_key; both required) and its
	// retry rule (timeout, retries, backoff), as package openai defines
	// them for every OpenAI-compatible backend. The url is the API base to
	// which "/audio/transcriptions" is appended (e.g.
	// http://gpu-box:8000/v1); model is e.g. "whisper-1".
	openai.Endpoint `yaml:",inline"`
	// Languages lists the SPEC.md §2.6 codes the server serves. Default
	// (empty): every code of §2.6.
	Languages []string `yaml:"languages"`
	// Capacity is the number of streams (and Translate calls) open at
	// once, 1..1024, and so of concurrent requests: NewStream waits for a
	// free slot. Default 4.
	Capacity int `yaml:"capacity"`
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
	c.Endpoint.SetDefaults()
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
		if c.Model == "" {
			add("model", "empty")
		}
	}
	errs = append(errs, c.Endpoint.Validate())
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

// partialsEnabled reports whether streams make partial requests.
func (c Config) partialsEnabled() bool { return c.PartialInterval > 0 }
