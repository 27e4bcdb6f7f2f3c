package api

import (
	"crypto/tls"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/earshot-dev/earshot/config"
	"github.com/earshot-dev/earshot/ingest"
)

// Config configures the HTTP server: the api: section of the file (the
// fields with yaml keys), and bounds the file keeps elsewhere (yaml "-":
// public_url, limits:, live:), which app.Config.HTTP joins in.
type Config struct {
	// PublicURL is {base_url}; empty means scheme and Host of each request
	// (public_url).
	PublicURL string `yaml:"-"`
	// MaxBodyBytes bounds JSON bodies (limits.max_body_bytes); default 1 MiB.
	MaxBodyBytes int64 `yaml:"-"`
	// MaxUploadBytes bounds one upload (limits.max_upload_bytes); default 1 GiB.
	MaxUploadBytes int64 `yaml:"-"`
	// HeaderTimeout bounds reading a request's line and headers, from
	// accept (or the first byte of a keep-alive request) on; it also
	// bounds reading the body of, and writing the answer to, a request
	// without an x-service-key (probes, the console, refusals); default 10s.
	HeaderTimeout time.Duration `yaml:"header_timeout"`
	// ReadTimeout bounds reading the body of a request that carries an
	// x-service-key, from the end of its headers; default 10m (large
	// uploads).
	ReadTimeout time.Duration `yaml:"read_timeout"`
	// MinBodyBytesPerSecond is the least average rate of a request body
	// after its first 10 s; below it the body is cut with 408; default
	// 16384 (1 is as good as none).
	MinBodyBytesPerSecond int64 `yaml:"min_body_bytes_per_second"`
	// WriteTimeout bounds writing one response; default 10m (audio downloads).
	WriteTimeout time.Duration `yaml:"write_timeout"`
	// IdleTimeout closes keep-alive connections idle this long; default 60s.
	IdleTimeout time.Duration `yaml:"idle_timeout"`
	// MaxListBytes bounds the items of one list answer (GET
	// /v2/pre-recorded, /v2/live): a page stops before the item that
	// would pass it (never before its first item) and its next link goes
	// on from there; default 8 MiB.
	MaxListBytes int `yaml:"max_list_bytes"`
	// MaxConns bounds concurrent connections; default 4096.
	MaxConns int `yaml:"max_conns"`
	// MaxPendingConns bounds the connections that have not yet shown a
	// valid key (still sending headers, probes, unauthenticated calls);
	// when they are all open the oldest idle one is closed to admit a new
	// one, and MaxConns-MaxPendingConns stay for authenticated traffic;
	// default MaxConns/2.
	MaxPendingConns int `yaml:"max_pending_conns"`
	// MaxConnsPerIP bounds concurrent connections from one source address
	// (an IPv6 /64); default 256. Behind a reverse proxy raise it to
	// MaxConns.
	MaxConnsPerIP int `yaml:"max_conns_per_ip"`
	// Live bounds the WebSocket door: the live: section's client
	// connection bounds (live.max_frame_bytes, max_messages_per_second,
	// idle_timeout), the value the job service's sessions hold.
	Live ingest.SocketLimits `yaml:"-"`
	// TLSCert and TLSKey are PEM files (api.tls_cert, api.tls_key); with
	// both set the listener given to Run serves HTTPS, the live WebSocket
	// is WSS on it, and {base_url} defaults to https. Both or neither.
	TLSCert string `yaml:"tls_cert"`
	TLSKey  string `yaml:"tls_key"`
	// RequestsPerSecond and Burst are each API key's token bucket
	// (limits.requests_per_second, limits.burst): over it a request gets
	// 429 with Retry-After. RequestsPerSecond 0 is unlimited (the zero
	// value; the daemon's default is 50, burst 100).
	RequestsPerSecond float64 `yaml:"-"`
	Burst             int     `yaml:"-"`
	// SeparateOps serves /healthz, /readyz and /metrics only through
	// RunOps (ops_listen set), not on the main listener.
	SeparateOps bool `yaml:"-"`
	// OpenAI configures the /v1 door (the file's openai: section, joined in).
	OpenAI OpenAIConfig `yaml:"-"`
	// ShutdownTimeout bounds how long Run and RunOps wait, once their
	// context ends, for the requests in flight (shutdown.doors); default
	// 10s.
	ShutdownTimeout time.Duration `yaml:"-"`
}

// SetDefaults fills zero fields.
func (c *Config) SetDefaults() {
	if c.ShutdownTimeout == 0 {
		c.ShutdownTimeout = 10 * time.Second
	}
	if c.MaxBodyBytes == 0 {
		c.MaxBodyBytes = 1 << 20
	}
	if c.MaxUploadBytes == 0 {
		c.MaxUploadBytes = 1 << 30
	}
	if c.HeaderTimeout == 0 {
		c.HeaderTimeout = 10 * time.Second
	}
	if c.ReadTimeout == 0 {
		c.ReadTimeout = 10 * time.Minute
	}
	if c.MinBodyBytesPerSecond == 0 {
		c.MinBodyBytesPerSecond = 16 << 10
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
	if c.MaxListBytes == 0 {
		c.MaxListBytes = 8 << 20
	}
	if c.MaxPendingConns == 0 {
		c.MaxPendingConns = max(1, c.MaxConns/2)
	}
	if c.MaxConnsPerIP == 0 {
		c.MaxConnsPerIP = 256
	}
	c.Live.SetDefaults()
	c.OpenAI.SetDefaults()
	if c.RequestsPerSecond > 0 && c.Burst == 0 {
		c.Burst = max(1, int(math.Ceil(2*c.RequestsPerSecond)))
	}
}

// Validate checks the api: section without I/O, each problem a
// *config.Problem naming its key (relative to the section). The bounds
// joined in from limits: and live: are validated there.
func (c Config) Validate() error {
	var errs []error
	bad := func(key, format string, a ...any) { errs = append(errs, config.Errorf(key, format, a...)) }
	if c.MaxConns < 1 {
		bad("max_conns", "must be at least 1, not %d", c.MaxConns)
	}
	if c.MaxPendingConns < 1 || c.MaxPendingConns > c.MaxConns {
		bad("max_pending_conns", "must be 1 to api.max_conns (%d), not %d", c.MaxConns, c.MaxPendingConns)
	}
	if c.MinBodyBytesPerSecond < 1 {
		bad("min_body_bytes_per_second", "must be at least 1, not %d", c.MinBodyBytesPerSecond)
	}
	if c.MaxListBytes < 4096 {
		bad("max_list_bytes", "must be at least 4096, not %d", c.MaxListBytes)
	}
	if c.MaxConnsPerIP < 1 {
		bad("max_conns_per_ip", "must be at least 1, not %d", c.MaxConnsPerIP)
	}
	for _, t := range []struct {
		key string
		d   time.Duration
	}{{"header_timeout", c.HeaderTimeout}, {"read_timeout", c.ReadTimeout}, {"write_timeout", c.WriteTimeout}, {"idle_timeout", c.IdleTimeout}} {
		if t.d <= 0 {
			bad(t.key, "must be > 0, not %s", t.d)
		}
	}
	if (c.TLSCert == "") != (c.TLSKey == "") {
		bad("tls_cert", "api.tls_cert and api.tls_key must be set together")
	}
	return errors.Join(errs...)
}

// LoadTLS loads the certificate pair; nil, nil when TLS is off. It reads
// files, so it belongs to provisioning (New) and to config check, not to
// Validate.
func (c Config) LoadTLS() (*tls.Config, error) {
	if c.TLSCert == "" && c.TLSKey == "" {
		return nil, nil
	}
	cert, err := tls.LoadX509KeyPair(c.TLSCert, c.TLSKey)
	if err != nil {
		return nil, fmt.Errorf("api: load tls pair %s, %s: %w", c.TLSCert, c.TLSKey, err)
	}
	return &tls.Config{
		Certificates: []tls.Certificate{cert},
		MinVersion:   tls.VersionTLS12,
		NextProtos:   []string{"http/1.1"}, // fasthttp speaks HTTP/1.1 only
	}, nil
}
