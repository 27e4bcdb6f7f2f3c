package app

import (
	"errors"
	"fmt"
	"os"
	"reflect"

	"github.com/earshot-dev/earshot/api"
	"github.com/earshot-dev/earshot/config"
	"github.com/earshot-dev/earshot/daemon"
)

// Config is the YAML file an operator edits (see README.md). Zero fields
// take the defaults set by SetDefaults.
type Config struct {
	// Config holds the job service's sections: listen, data_dir, sphinx,
	// engines, limits, live, sip, webrtc, addons ... at the top level.
	daemon.Config `yaml:",inline"`
	// API configures the HTTP server of the /v2 API. Body and upload sizes
	// stay in limits:, the WebSocket bounds in live:; HTTP joins them in.
	API api.Config `yaml:"api"`
}

// Type is the root type the walker maps keys onto.
var Type = reflect.TypeFor[Config]()

// SetDefaults fills zero fields of every section.
func (c *Config) SetDefaults() {
	c.Config.SetDefaults()
	c.API.SetDefaults()
}

// Validate checks every section without I/O and joins every problem, each
// a *config.Problem naming its key.
func (c *Config) Validate() error {
	return errors.Join(c.Config.Validate(), config.Under("api", c.API.Validate()))
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
	a.Live = api.LiveLimits{MaxFrameBytes: c.Live.MaxFrameBytes, MaxMessagesPerSecond: c.Live.MaxMessagesPerSecond, IdleTimeout: c.Live.IdleTimeout}
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
