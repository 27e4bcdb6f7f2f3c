package daemon

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"strconv"
	"strings"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/earshot-dev/earshot/ingest/sip"
	"github.com/earshot-dev/earshot/ingest/webrtc"
	"github.com/earshot-dev/earshot/recognizer/sphinx"
)

// Config mirrors the YAML file an operator edits (see README.md). Zero fields
// take the defaults set by SetDefaults.
type Config struct {
	// Listen is the HTTP address of the /v2 API; default 127.0.0.1:8080.
	Listen string `yaml:"listen"`
	// PublicURL is the base URL clients use ({base_url}); default: scheme and
	// Host of each request.
	PublicURL string `yaml:"public_url"`
	// DataDir holds earshot.db, the audio blobs and the admin socket;
	// default /var/lib/earshot.
	DataDir string `yaml:"data_dir"`
	// LogLevel is debug, info, warn or error; default info.
	LogLevel string `yaml:"log_level"`
	// Workers is how many pre-recorded jobs run at once; default 1 (each
	// job already decodes its segments on every decoder).
	Workers int `yaml:"workers"`
	// FFmpeg is the ffmpeg binary used for non-WAV containers; default "ffmpeg".
	FFmpeg string `yaml:"ffmpeg"`
	// Sphinx configures the embedded PocketSphinx engine and its decoder pool.
	Sphinx sphinx.Config `yaml:"sphinx"`
	// Engines adds remote recognisers beside the embedded one and routes
	// models and languages to them.
	Engines EnginesConfig `yaml:"engines"`
	// Limits bound every input.
	Limits Limits `yaml:"limits"`
	// Callbacks configures the callback outbox.
	Callbacks CallbacksConfig `yaml:"callbacks"`
	// Live configures live sessions.
	Live LiveConfig `yaml:"live"`
	// Retention says how long finished jobs and uploads are kept.
	Retention RetentionConfig `yaml:"retention"`
	// Addons configures the add-ons, chiefly their language-model backend.
	Addons AddonsConfig `yaml:"addons"`
	// SIP configures the telephony door (off unless sip.listen is set).
	SIP sip.Config `yaml:"sip"`
	// WebRTC configures the browser door (WHIP); on unless webrtc.disabled.
	WebRTC webrtc.Config `yaml:"webrtc"`
}

// Limits bound inputs. Sizes are bytes, durations Go durations ("90s").
type Limits struct {
	// MaxUploadBytes bounds one upload or fetched audio_url; default 1 GiB.
	MaxUploadBytes int64 `yaml:"max_upload_bytes"`
	// MaxBodyBytes bounds a JSON request body; default 1 MiB.
	MaxBodyBytes int64 `yaml:"max_body_bytes"`
	// MaxAudioDuration bounds the audio of one job; default 4h.
	MaxAudioDuration time.Duration `yaml:"max_audio_duration"`
	// FetchTimeout bounds downloading an audio_url; default 5m.
	FetchTimeout time.Duration `yaml:"fetch_timeout"`
	// MaxQueued bounds pre-recorded jobs waiting to run; beyond it POST
	// answers 503; default 10000.
	MaxQueued int `yaml:"max_queued"`
	// MaxAttempts is how often a job is started (crashes included) before
	// it ends as error 500; default 3.
	MaxAttempts int `yaml:"max_attempts"`
}

// CallbacksConfig configures delivery of callbacks.
type CallbacksConfig struct {
	// Timeout bounds one delivery attempt; default 10s.
	Timeout time.Duration `yaml:"timeout"`
	// MaxAge is how long a delivery is retried before it is dropped; default 72h (at least 24h).
	MaxAge time.Duration `yaml:"max_age"`
	// MinBackoff and MaxBackoff bound the exponential backoff between
	// attempts; defaults 1s and 10m.
	MinBackoff time.Duration `yaml:"min_backoff"`
	MaxBackoff time.Duration `yaml:"max_backoff"`
}

// SetDefaults fills zero fields.
func (c *Config) SetDefaults() {
	def := func(s *string, v string) {
		if *s == "" {
			*s = v
		}
	}
	def(&c.Listen, "127.0.0.1:8080")
	def(&c.DataDir, "/var/lib/earshot")
	def(&c.LogLevel, "info")
	def(&c.FFmpeg, "ffmpeg")
	if c.Workers == 0 {
		c.Workers = 1
	}
	c.Sphinx.SetDefaults()
	c.Engines.SetDefaults()
	c.Live.SetDefaults()
	c.Retention.SetDefaults()
	c.Addons.SetDefaults()
	c.SIP.SetDefaults()
	if c.WebRTC.DisconnectGrace == 0 {
		c.WebRTC.DisconnectGrace = c.Live.ReconnectGrace // the same grace as a dropped WebSocket
	}
	c.WebRTC.SetDefaults()
	l := &c.Limits
	if l.MaxUploadBytes == 0 {
		l.MaxUploadBytes = 1 << 30
	}
	if l.MaxBodyBytes == 0 {
		l.MaxBodyBytes = 1 << 20
	}
	if l.MaxAudioDuration == 0 {
		l.MaxAudioDuration = 4 * time.Hour
	}
	if l.FetchTimeout == 0 {
		l.FetchTimeout = 5 * time.Minute
	}
	if l.MaxQueued == 0 {
		l.MaxQueued = 10000
	}
	if l.MaxAttempts == 0 {
		l.MaxAttempts = 3
	}
	cb := &c.Callbacks
	if cb.Timeout == 0 {
		cb.Timeout = 10 * time.Second
	}
	if cb.MaxAge == 0 {
		cb.MaxAge = 72 * time.Hour
	}
	if cb.MinBackoff == 0 {
		cb.MinBackoff = time.Second
	}
	if cb.MaxBackoff == 0 {
		cb.MaxBackoff = 10 * time.Minute
	}
}

// Validate checks the whole config without I/O and joins every problem,
// each naming its key.
func (c *Config) Validate() error {
	var errs []error
	bad := func(key, format string, a ...any) {
		errs = append(errs, fmt.Errorf("%s: %s", key, fmt.Sprintf(format, a...)))
	}
	if _, _, err := net.SplitHostPort(c.Listen); err != nil {
		bad("listen", "%v", err)
	}
	if c.PublicURL != "" && !strings.HasPrefix(c.PublicURL, "http://") && !strings.HasPrefix(c.PublicURL, "https://") {
		bad("public_url", "must start with http:// or https://")
	}
	if c.DataDir == "" {
		bad("data_dir", "must be set")
	}
	switch c.LogLevel {
	case "debug", "info", "warn", "error":
	default:
		bad("log_level", "must be debug, info, warn or error, not %q", c.LogLevel)
	}
	if c.Workers < 1 || c.Workers > 64 {
		bad("workers", "must be 1 to 64, not %d", c.Workers)
	}
	if err := c.Sphinx.Validate(); err != nil {
		bad("sphinx", "%v", err)
	}
	if err := c.Engines.Validate(c.Sphinx.Language); err != nil {
		errs = append(errs, err)
	}
	if err := c.Live.Validate(); err != nil {
		errs = append(errs, err)
	}
	if err := c.Retention.Validate(); err != nil {
		errs = append(errs, err)
	}
	if err := c.Addons.Validate(); err != nil {
		errs = append(errs, err)
	}
	if err := c.SIP.Validate(); err != nil {
		errs = append(errs, err)
	}
	if err := c.WebRTC.Validate(); err != nil {
		errs = append(errs, err)
	}
	l := c.Limits
	if l.MaxUploadBytes < 1024 {
		bad("limits.max_upload_bytes", "must be at least 1024")
	}
	if l.MaxBodyBytes < 1024 {
		bad("limits.max_body_bytes", "must be at least 1024")
	}
	if l.MaxAudioDuration < time.Second {
		bad("limits.max_audio_duration", "must be at least 1s")
	}
	if l.FetchTimeout < time.Second {
		bad("limits.fetch_timeout", "must be at least 1s")
	}
	if l.MaxQueued < 1 {
		bad("limits.max_queued", "must be at least 1")
	}
	if l.MaxAttempts < 1 {
		bad("limits.max_attempts", "must be at least 1")
	}
	cb := c.Callbacks
	if cb.MaxAge < 24*time.Hour {
		bad("callbacks.max_age", "must be at least 24h (PROTOCOL.md), not %s", cb.MaxAge)
	}
	if cb.MinBackoff <= 0 || cb.MaxBackoff < cb.MinBackoff {
		bad("callbacks.min_backoff", "must be > 0 and <= callbacks.max_backoff")
	}
	if cb.Timeout <= 0 {
		bad("callbacks.timeout", "must be > 0")
	}
	return errors.Join(errs...)
}

// LoadConfig reads a YAML config file (unknown keys are errors naming the
// line), then applies EARSHOT_* environment overrides. Path "" means no file.
// Defaults are not applied; callers apply flags, then SetDefaults, then Validate.
func LoadConfig(path string, env []string) (Config, error) {
	var c Config
	if path != "" {
		b, err := os.ReadFile(path)
		if err != nil {
			return c, fmt.Errorf("read config: %w", err)
		}
		dec := yaml.NewDecoder(bytes.NewReader(b))
		dec.KnownFields(true)
		if err := dec.Decode(&c); err != nil && !errors.Is(err, io.EOF) {
			return c, fmt.Errorf("config %s: %w", path, err)
		}
	}
	if err := c.applyEnv(env); err != nil {
		return c, err
	}
	return c, nil
}

// applyEnv applies the EARSHOT_* variables that mirror top-level keys.
func (c *Config) applyEnv(env []string) error {
	for _, kv := range env {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || !strings.HasPrefix(k, "EARSHOT_") {
			continue
		}
		switch k {
		case "EARSHOT_LISTEN":
			c.Listen = v
		case "EARSHOT_PUBLIC_URL":
			c.PublicURL = v
		case "EARSHOT_DATA_DIR":
			c.DataDir = v
		case "EARSHOT_LOG_LEVEL":
			c.LogLevel = v
		case "EARSHOT_FFMPEG":
			c.FFmpeg = v
		case "EARSHOT_WORKERS":
			n, err := strconv.Atoi(v)
			if err != nil {
				return fmt.Errorf("EARSHOT_WORKERS: %w", err)
			}
			c.Workers = n
		case "EARSHOT_DECODERS":
			n, err := strconv.Atoi(v)
			if err != nil {
				return fmt.Errorf("EARSHOT_DECODERS: %w", err)
			}
			c.Sphinx.Decoders = n
		}
	}
	return nil
}
