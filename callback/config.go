package callback

import (
	"errors"
	"fmt"
	"net/netip"
	"time"

	"github.com/earshot-dev/earshot/config"
)

// Config is the callbacks: section: how deliveries are attempted and for
// how long.
type Config struct {
	// Timeout bounds one delivery attempt; default 10s.
	Timeout time.Duration `yaml:"timeout"`
	// MaxAge is how long a delivery is retried before it is dropped; default 72h (at least 24h).
	MaxAge time.Duration `yaml:"max_age"`
	// MinBackoff and MaxBackoff bound the exponential backoff between
	// attempts; defaults 1s and 10m.
	MinBackoff time.Duration `yaml:"min_backoff"`
	MaxBackoff time.Duration `yaml:"max_backoff"`
	// BodySignature sends x-earshot-signature, the HMAC of the body alone
	// that the API family's clients verify, beside
	// x-earshot-webhook-signature, whose signed timestamp lets receivers
	// refuse replays. A captured delivery still verifies under the body
	// signature when sent again, so once every receiver checks the timed
	// one, false stops sending it; default true.
	BodySignature *bool `yaml:"body_signature"`
	// Allow lists destination networks (CIDR) a callback may reach even
	// when fetch.deny covers them (receivers on the operator's own
	// network); callbacks otherwise obey fetch.deny. Default none.
	Allow []netip.Prefix `yaml:"allow"`
	// Deny is fetch.deny, joined in by the daemon: the networks a callback
	// may not reach unless Allow lists them.
	Deny []netip.Prefix `yaml:"-"`
}

// SetDefaults fills zero fields.
func (c *Config) SetDefaults() {
	if c.Timeout == 0 {
		c.Timeout = 10 * time.Second
	}
	if c.MaxAge == 0 {
		c.MaxAge = 72 * time.Hour
	}
	if c.MinBackoff == 0 {
		c.MinBackoff = time.Second
	}
	if c.MaxBackoff == 0 {
		c.MaxBackoff = 10 * time.Minute
	}
	if c.BodySignature == nil {
		on := true
		c.BodySignature = &on
	}
}

// bodySignature reports whether x-earshot-signature is sent (the default).
func (c Config) bodySignature() bool { return c.BodySignature == nil || *c.BodySignature }

// Validate checks the section without I/O, each problem naming its key.
func (c Config) Validate() error {
	var errs []error
	for i, p := range c.Allow {
		if !p.IsValid() {
			errs = append(errs, config.Errorf(fmt.Sprintf("allow[%d]", i), "must be a CIDR such as 10.0.0.0/8"))
		}
	}
	if c.MaxAge < 24*time.Hour {
		errs = append(errs, config.Errorf("max_age", "must be at least 24h (PROTOCOL.md), not %s", c.MaxAge))
	}
	if c.MinBackoff <= 0 || c.MaxBackoff < c.MinBackoff {
		errs = append(errs, config.Errorf("min_backoff", "must be > 0 and <= callbacks.max_backoff"))
	}
	if c.Timeout <= 0 {
		errs = append(errs, config.Errorf("timeout", "must be > 0"))
	}
	return errors.Join(errs...)
}
