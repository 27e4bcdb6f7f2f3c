package fetch

import (
	"errors"
	"fmt"
	"net/netip"
	"time"

	"github.com/earshot-dev/earshot/config"
	"github.com/earshot-dev/earshot/ingest/media"
)

// Config is the fetch: section: downloading an audio_url.
type Config struct {
	// Deny lists destination networks (CIDR) refused at dial time, after
	// DNS; default media.DefaultDeny() (link-local and 0.0.0.0/8). An empty
	// list ([]) denies nothing.
	Deny []netip.Prefix `yaml:"deny"`
	// MaxConcurrent bounds the downloads running at once. They run beside
	// the workers and hold no worker or decoder: a job is claimed only
	// once its audio is on disk. Default 8.
	MaxConcurrent int `yaml:"max_concurrent"`
	// MaxPerAccount bounds one account's downloads running at once (its
	// other jobs wait their turn); default 2.
	MaxPerAccount int `yaml:"max_per_account"`
	// MinBytesPerSecond fails a download whose average rate, counted from
	// 10 s after it started, falls below it, so a trickling server cannot
	// hold a download for all of limits.fetch_timeout. Unset is 16384;
	// 0 is no minimum.
	MinBytesPerSecond *int64 `yaml:"min_bytes_per_second"`
	// MaxBytes is limits.max_upload_bytes, joined in by the daemon: the
	// largest download.
	MaxBytes int64 `yaml:"-"`
	// Timeout is limits.fetch_timeout, joined in by the daemon: the
	// longest download.
	Timeout time.Duration `yaml:"-"`
}

// SetDefaults fills zero fields.
func (c *Config) SetDefaults() {
	if c.Deny == nil {
		c.Deny = media.DefaultDeny()
	}
	if c.MaxConcurrent == 0 {
		c.MaxConcurrent = 8
	}
	if c.MaxPerAccount == 0 {
		c.MaxPerAccount = 2
	}
	if c.MinBytesPerSecond == nil {
		r := int64(16384)
		c.MinBytesPerSecond = &r
	}
}

// Validate checks the section without I/O, each problem naming its key.
func (c Config) Validate() error {
	var errs []error
	for i, p := range c.Deny {
		if !p.IsValid() {
			errs = append(errs, config.Errorf(fmt.Sprintf("deny[%d]", i), "must be a CIDR such as 169.254.0.0/16"))
		}
	}
	if c.MaxConcurrent < 1 || c.MaxConcurrent > 1000 {
		errs = append(errs, config.Errorf("max_concurrent", "must be 1 to 1000, not %d", c.MaxConcurrent))
	} else if c.MaxPerAccount < 1 || c.MaxPerAccount > c.MaxConcurrent {
		errs = append(errs, config.Errorf("max_per_account", "must be 1 to fetch.max_concurrent (%d), not %d", c.MaxConcurrent, c.MaxPerAccount))
	}
	if r := c.MinBytesPerSecond; r != nil && *r < 0 {
		errs = append(errs, config.Errorf("min_bytes_per_second", "must be 0 (no minimum) or more, not %d", *r))
	}
	return errors.Join(errs...)
}
