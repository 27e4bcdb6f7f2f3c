package api

import (
	"errors"
	"time"
)

// Config configures the HTTP server.
type Config struct {
	// PublicURL is {base_url}; empty means scheme and Host of each request.
	PublicURL string `yaml:"public_url"`
	// MaxBodyBytes bounds JSON bodies; default 1 MiB.
	MaxBodyBytes int64 `yaml:"max_body_bytes"`
	// MaxUploadBytes bounds one upload; default 1 GiB.
	MaxUploadBytes int64 `yaml:"max_upload_bytes"`
	// ReadTimeout bounds reading one request, body included; default 10m
	// (large uploads).
	ReadTimeout time.Duration `yaml:"read_timeout"`
	// WriteTimeout bounds writing one response; default 10m (audio downloads).
	WriteTimeout time.Duration `yaml:"write_timeout"`
	// IdleTimeout closes keep-alive connections idle this long; default 60s.
	IdleTimeout time.Duration `yaml:"idle_timeout"`
	// MaxConns bounds concurrent connections; default 4096.
	MaxConns int `yaml:"max_conns"`
	// Live bounds the WebSocket door (set from the daemon's live config).
	Live LiveLimits `yaml:"-"`
}

// SetDefaults fills zero fields.
func (c *Config) SetDefaults() {
	if c.MaxBodyBytes == 0 {
		c.MaxBodyBytes = 1 << 20
	}
	if c.MaxUploadBytes == 0 {
		c.MaxUploadBytes = 1 << 30
	}
	if c.ReadTimeout == 0 {
		c.ReadTimeout = 10 * time.Minute
	}
	if c.WriteTimeout == 0 {
		c.WriteTimeout = 10 * time.Minute
	}
	if c.IdleTimeout == 0 {
		c.IdleTimeout = time.Minute
	}
	if c.MaxConns == 0 {
		c.MaxConns = 4096
	}
	if c.Live.MaxFrameBytes == 0 {
		c.Live.MaxFrameBytes = 1 << 20
	}
	if c.Live.MaxMessagesPerSecond == 0 {
		c.Live.MaxMessagesPerSecond = 500
	}
	if c.Live.IdleTimeout == 0 {
		c.Live.IdleTimeout = time.Minute
	}
}

// Validate checks the config without I/O.
func (c Config) Validate() error {
	var errs []error
	if c.MaxBodyBytes < 1024 {
		errs = append(errs, errors.New("api.max_body_bytes: must be at least 1024"))
	}
	if c.MaxConns < 1 {
		errs = append(errs, errors.New("api.max_conns: must be at least 1"))
	}
	return errors.Join(errs...)
}
