package app

import (
	"errors"
	"fmt"
	"net"
	"os"
	"reflect"
	"strings"

	"github.com/earshot-dev/earshot/api"
	"github.com/earshot-dev/earshot/config"
	"github.com/earshot-dev/earshot/daemon"
	"github.com/earshot-dev/earshot/ingest/sip"
	"github.com/earshot-dev/earshot/ingest/webrtc"
)

// Config is the YAML file an operator edits (see README.md): the process's
// own keys (listeners, public URL, log level), the job service's keys and
// sections, and the doors' sections. Zero fields take the defaults set by
// SetDefaults.
type Config struct {
	// Listen is the HTTP address of the /v2 API; default 127.0.0.1:8080.
	Listen string `yaml:"listen"`
	// OpsListen, when set, is the HTTP address of the operations endpoints
	// (/healthz, /readyz, /metrics), which then leave the main listener;
	// default "" (they are on listen).
	OpsListen string `yaml:"ops_listen"`
	// PublicURL is the base URL clients use ({base_url}); default: scheme and
	// Host of each request.
	PublicURL string `yaml:"public_url"`
	// LogLevel is debug, info, warn or error; default info.
	LogLevel string `yaml:"log_level"`
	// Config holds the job service's keys and sections: data_dir, workers,
	// sphinx, engines, limits, live, addons, store, shutdown ... at the top
	// level.
	daemon.Config `yaml:",inline"`
	// SIP configures the telephony door (off unless sip.listen is set).
	SIP sip.Config `yaml:"sip"`
	// WebRTC configures the browser door (WHIP); on unless webrtc.disabled.
	WebRTC webrtc.Config `yaml:"webrtc"`
	// API configures the HTTP server of the /v2 API. Body and upload sizes
	// stay in limits:, the WebSocket bounds in live:; HTTP joins them in.
	API api.Config `yaml:"api"`
	// OpenAI configures the OpenAI-compatible door (/v1/audio/...).
	OpenAI api.OpenAIConfig `yaml:"openai"`
}

// Type is the root type the walker maps keys onto.
var Type = reflect.TypeFor[Config]()

// SetDefaults fills zero fields: the process's keys, then every section
// (config.SetSectionDefaults: the job service's, inline, then sip:,
// webrtc:, api:, openai:). webrtc.disconnect_grace, unset, is the live
// reconnect grace (the same grace as a dropped WebSocket), so that one is
// joined before webrtc: is defaulted.
func (c *Config) SetDefaults() {
	if c.Listen == "" {
		c.Listen = "127.0.0.1:8080"
	}
	if c.LogLevel == "" {
		c.LogLevel = "info"
	}
	if c.WebRTC.DisconnectGrace == 0 {
		c.Live.SetDefaults()
		c.WebRTC.DisconnectGrace = c.Live.ReconnectGrace
	}
	config.SetSectionDefaults(c)
}

// Validate checks the process's keys and every section
// (config.ValidateSections) without I/O and joins every problem, each a
// *config.Problem naming its key.
func (c *Config) Validate() error {
	var errs []error
	bad := func(key, format string, a ...any) { errs = append(errs, config.Errorf(key, format, a...)) }
	if _, _, err := net.SplitHostPort(c.Listen); err != nil {
		bad("listen", "%v", err)
	}
	if c.OpsListen != "" {
		if _, _, err := net.SplitHostPort(c.OpsListen); err != nil {
			bad("ops_listen", "%v", err)
		}
	}
	if c.PublicURL != "" && !strings.HasPrefix(c.PublicURL, "http://") && !strings.HasPrefix(c.PublicURL, "https://") {
		bad("public_url", "must start with http:// or https://")
	}
	switch c.LogLevel {
	case "debug", "info", "warn", "error":
	default:
		bad("log_level", "must be debug, info, warn or error, not %q", c.LogLevel)
	}
	errs = append(errs, config.ValidateSections(c))
	return errors.Join(errs...)
}

// HTTP is the HTTP server's config: the api: section, with the public
// URL, the body and upload bounds and the request rate of limits:, and the
// WebSocket bounds of live:. Call it after SetDefaults.
func (c *Config) HTTP() api.Config {
	a := c.API
	a.PublicURL = c.PublicURL
	a.MaxBodyBytes, a.MaxUploadBytes = c.Limits.MaxBodyBytes, c.Limits.MaxUploadBytes
	if r := c.Limits.RequestsPerSecond; r != nil {
		a.RequestsPerSecond = *r
	}
	a.Burst = c.Limits.Burst
	a.SeparateOps = c.OpsListen != ""
	a.ShutdownTimeout = c.Shutdown.Doors
	a.OpenAI = c.OpenAI
	a.Live = c.Live.SocketLimits
	return a
}

// Load reads the YAML file at path (unknown keys are errors naming the
// line; "" means no file), then applies the EARSHOT_* variables of env
// (config.ApplyEnv). Defaults are not applied: callers apply flags (Set),
// then SetDefaults, then Validate.
func Load(path string, env []string) (Config, error) {
	var c Config
	if path != "" {
		b, err := os.ReadFile(path)
		if err != nil {
			return c, fmt.Errorf("read config: %w", err)
		}
		if err := config.Decode(b, &c); err != nil {
			return c, fmt.Errorf("config %s: %w", path, err)
		}
	}
	return c, config.ApplyEnv(&c, env)
}

// Set sets the key at the dotted path from its text (config.Set).
func (c *Config) Set(path, value string) error { return config.Set(c, path, value) }

// Keys lists every settable key of the file.
func Keys() []config.Key { return config.Keys(Type) }
