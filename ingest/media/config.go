package media

import (
	"errors"
	"fmt"
	"net/http"
	"net/netip"
	"time"
)

// Defaults for Options and FetchOptions.
const (
	DefaultFFmpeg       = "ffmpeg"
	DefaultMaxDuration  = 4 * time.Hour
	DefaultTimeout      = 10 * time.Minute
	DefaultMaxBytes     = 1 << 30
	DefaultFetchTimeout = 5 * time.Minute
	maxRedirects        = 5
)

// DefaultDeny returns the destination prefixes Fetch refuses by default:
// IPv4 and IPv6 link-local (cloud metadata services live there) and
// 0.0.0.0/8. Loopback and private ranges are allowed, since an appliance's
// audio often sits on the local network.
func DefaultDeny() []netip.Prefix {
	return []netip.Prefix{
		netip.MustParsePrefix("169.254.0.0/16"),
		netip.MustParsePrefix("fe80::/10"),
		netip.MustParsePrefix("0.0.0.0/8"),
	}
}

// Options bound Probe and Decode. The zero value (or nil) means defaults.
type Options struct {
	// FFmpeg is the ffmpeg binary, looked up in PATH when it has no slash;
	// ffprobe is taken from the same directory. Default "ffmpeg".
	FFmpeg string `yaml:"ffmpeg"`
	// MaxDuration is the longest audio accepted; longer audio returns
	// ErrTooLong before it is decoded when the header or ffprobe tells its
	// length, else as soon as the output passes it. Decoded memory is
	// 32 KB per second per channel. Default 4h.
	MaxDuration time.Duration `yaml:"max_duration"`
	// Timeout bounds the wall time of one ffprobe or ffmpeg run; the process
	// is killed after it. Default 10m.
	Timeout time.Duration `yaml:"timeout"`
	// MaxDecodedBytes bounds what Decode returns in all: channels times
	// duration at DecodedBytesPerSecond. Audio over it returns
	// ErrTooMuchAudio before it is decoded when the header or ffprobe
	// tells its length, else as soon as the output passes it. Default
	// DefaultMaxDecodedBytes(MaxDuration): two channels of MaxDuration.
	MaxDecodedBytes int64 `yaml:"max_decoded_bytes"`
}

// DefaultMaxDecodedBytes is MaxDecodedBytes' default for a MaxDuration of
// d: two channels (a call) of d decoded (921600000 at 4h).
func DefaultMaxDecodedBytes(d time.Duration) int64 {
	return int64(2 * d.Seconds() * DecodedBytesPerSecond)
}

// SetDefaults fills zero fields with their defaults.
func (o *Options) SetDefaults() {
	if o.FFmpeg == "" {
		o.FFmpeg = DefaultFFmpeg
	}
	if o.MaxDuration == 0 {
		o.MaxDuration = DefaultMaxDuration
	}
	if o.Timeout == 0 {
		o.Timeout = DefaultTimeout
	}
	if o.MaxDecodedBytes == 0 {
		o.MaxDecodedBytes = DefaultMaxDecodedBytes(o.MaxDuration)
	}
}

// Validate reports every invalid field, naming its key.
func (o *Options) Validate() error {
	var errs []error
	if o.MaxDuration < 0 {
		errs = append(errs, fmt.Errorf("media: max_duration %s is negative", o.MaxDuration))
	}
	if o.Timeout < 0 {
		errs = append(errs, fmt.Errorf("media: timeout %s is negative", o.Timeout))
	}
	if o.MaxDecodedBytes < 0 {
		errs = append(errs, fmt.Errorf("media: max_decoded_bytes %d is negative", o.MaxDecodedBytes))
	}
	return errors.Join(errs...)
}

// withDefaults returns a defaulted copy of o (nil means all defaults).
func (o *Options) withDefaults() Options {
	var c Options
	if o != nil {
		c = *o
	}
	c.SetDefaults()
	return c
}

// FetchOptions bound Fetch. The zero value (or nil) means defaults.
type FetchOptions struct {
	// MaxBytes is the largest body accepted: a larger declared
	// Content-Length fails Fetch, a larger body fails the Body's Read, both
	// with ErrTooLarge. Default 1 GiB.
	MaxBytes int64 `yaml:"max_bytes"`
	// Timeout bounds the whole request including reading the body; a Read
	// after it fails with ErrFetch. Default 5m.
	Timeout time.Duration `yaml:"timeout"`
	// Deny lists destination addresses refused at dial time, after DNS, so a
	// name that resolves to a denied address is refused too. IPv4-mapped
	// IPv6 addresses are checked as IPv4. nil means DefaultDeny(); an empty,
	// non-nil slice denies nothing.
	Deny []netip.Prefix `yaml:"deny"`
	// Client is used as is when set (Deny is then the caller's business).
	// When nil, Fetch builds one that dials through the Deny check, ignores
	// proxy environment variables and follows at most 5 redirects, to
	// http(s) only.
	Client *http.Client `yaml:"-"`
}

// SetDefaults fills zero fields with their defaults.
func (o *FetchOptions) SetDefaults() {
	if o.MaxBytes == 0 {
		o.MaxBytes = DefaultMaxBytes
	}
	if o.Timeout == 0 {
		o.Timeout = DefaultFetchTimeout
	}
	if o.Deny == nil {
		o.Deny = DefaultDeny()
	}
}

// Validate reports every invalid field, naming its key.
func (o *FetchOptions) Validate() error {
	var errs []error
	if o.MaxBytes < 0 {
		errs = append(errs, fmt.Errorf("media: max_bytes %d is negative", o.MaxBytes))
	}
	if o.Timeout < 0 {
		errs = append(errs, fmt.Errorf("media: timeout %s is negative", o.Timeout))
	}
	for i, p := range o.Deny {
		if !p.IsValid() {
			errs = append(errs, fmt.Errorf("media: deny[%d] is not a valid prefix", i))
		}
	}
	return errors.Join(errs...)
}
