package daemon

import (
	"bytes"
	"crypto/tls"
	"encoding"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"net/netip"
	"os"
	"reflect"
	"slices"
	"strings"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/earshot-dev/earshot/ingest/media"
	"github.com/earshot-dev/earshot/ingest/sip"
	"github.com/earshot-dev/earshot/ingest/webrtc"
	"github.com/earshot-dev/earshot/recognizer/sphinx"
)

// Config mirrors the YAML file an operator edits (see README.md). Zero fields
// take the defaults set by SetDefaults.
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
	// API configures the HTTP server of the /v2 API (copied into api.Config
	// by cmd/earshotd: package api imports daemon, so daemon cannot hold
	// api.Config itself). Body and upload sizes stay in limits.
	API APIConfig `yaml:"api"`
	// Fetch configures downloading audio_url.
	Fetch FetchConfig `yaml:"fetch"`
	// Store says where state is kept: the embedded bbolt store (default)
	// or a PostgreSQL database shared by a cluster.
	Store StoreConfig `yaml:"store"`
	// Cluster names this node among those sharing a postgres store.
	Cluster ClusterConfig `yaml:"cluster"`
}

// APIConfig is the api: section: the HTTP server's timeouts and connection
// bound.
type APIConfig struct {
	// HeaderTimeout bounds reading a request's headers, and the body and
	// answer of a request without an x-service-key; default 10s.
	HeaderTimeout time.Duration `yaml:"header_timeout"`
	// ReadTimeout bounds reading the body of a request with an
	// x-service-key; default 10m (large uploads).
	ReadTimeout time.Duration `yaml:"read_timeout"`
	// MinBodyBytesPerSecond is the least average rate of a request body
	// after its first 10 s (below it: 408); default 16384.
	MinBodyBytesPerSecond int64 `yaml:"min_body_bytes_per_second"`
	// WriteTimeout bounds writing one response; default 10m (audio downloads).
	WriteTimeout time.Duration `yaml:"write_timeout"`
	// IdleTimeout closes keep-alive connections idle this long; default 1m.
	IdleTimeout time.Duration `yaml:"idle_timeout"`
	// MaxConns bounds concurrent connections; default 4096.
	MaxConns int `yaml:"max_conns"`
	// MaxListBytes bounds the items of one list answer; a page stops
	// before the item that would pass it and its next link goes on from
	// there; default 8 MiB.
	MaxListBytes int `yaml:"max_list_bytes"`
	// MaxPendingConns bounds connections that have not shown a valid key
	// (the oldest idle one is closed to admit a new one); the rest of
	// MaxConns is kept for authenticated traffic; default MaxConns/2.
	MaxPendingConns int `yaml:"max_pending_conns"`
	// MaxConnsPerIP bounds connections from one source address (an IPv6
	// /64); default 256 (raise it to MaxConns behind a reverse proxy).
	MaxConnsPerIP int `yaml:"max_conns_per_ip"`
	// TLSCert and TLSKey are PEM files; with both set the API serves HTTPS
	// (and the live WebSocket WSS). Both or neither; default "" (plain HTTP).
	TLSCert string `yaml:"tls_cert"`
	TLSKey  string `yaml:"tls_key"`
}

// FetchConfig configures downloading an audio_url (its size and time
// bounds are limits.max_upload_bytes and limits.fetch_timeout).
type FetchConfig struct {
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
	// RequestsPerSecond is each API key's sustained request rate, a token
	// bucket of Burst requests; over it the API answers 429 with
	// Retry-After. Unset is 50; 0 is unlimited.
	RequestsPerSecond *float64 `yaml:"requests_per_second"`
	// Burst is how many requests a key may make at once; default 100.
	Burst int `yaml:"burst"`
	// MaxAccountBytes bounds the bytes one account keeps on disk (uploads,
	// fetched audio_url bodies, live recordings); an upload or a fetch that
	// would pass it fails with 507. Unset is 100 GiB; 0 is unlimited.
	MaxAccountBytes *int64 `yaml:"max_account_bytes"`
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
	// Allow lists destination networks (CIDR) a callback may reach even
	// when fetch.deny covers them (receivers on the operator's own
	// network); callbacks otherwise obey fetch.deny. Default none.
	Allow []netip.Prefix `yaml:"allow"`
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
	c.Store.SetDefaults()
	c.Cluster.SetDefaults()
	c.Addons.SetDefaults()
	c.SIP.SetDefaults()
	if c.WebRTC.DisconnectGrace == 0 {
		c.WebRTC.DisconnectGrace = c.Live.ReconnectGrace // the same grace as a dropped WebSocket
	}
	c.WebRTC.SetDefaults()
	a := &c.API
	if a.HeaderTimeout == 0 {
		a.HeaderTimeout = 10 * time.Second
	}
	if a.ReadTimeout == 0 {
		a.ReadTimeout = 10 * time.Minute
	}
	if a.MinBodyBytesPerSecond == 0 {
		a.MinBodyBytesPerSecond = 16 << 10
	}
	if a.WriteTimeout == 0 {
		a.WriteTimeout = 10 * time.Minute
	}
	if a.IdleTimeout == 0 {
		a.IdleTimeout = time.Minute
	}
	if a.MaxConns == 0 {
		a.MaxConns = 4096
	}
	if a.MaxListBytes == 0 {
		a.MaxListBytes = 8 << 20
	}
	if a.MaxPendingConns == 0 {
		a.MaxPendingConns = max(1, a.MaxConns/2)
	}
	if a.MaxConnsPerIP == 0 {
		a.MaxConnsPerIP = 256
	}
	if c.Fetch.Deny == nil {
		c.Fetch.Deny = media.DefaultDeny()
	}
	if c.Fetch.MaxConcurrent == 0 {
		c.Fetch.MaxConcurrent = 8
	}
	if c.Fetch.MaxPerAccount == 0 {
		c.Fetch.MaxPerAccount = 2
	}
	if c.Fetch.MinBytesPerSecond == nil {
		r := int64(16384)
		c.Fetch.MinBytesPerSecond = &r
	}
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
	if l.RequestsPerSecond == nil {
		rps := 50.0
		l.RequestsPerSecond = &rps
	}
	if l.Burst == 0 {
		l.Burst = 100
	}
	if l.MaxAccountBytes == nil {
		b := int64(100 << 30)
		l.MaxAccountBytes = &b
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
	if c.OpsListen != "" {
		if _, _, err := net.SplitHostPort(c.OpsListen); err != nil {
			bad("ops_listen", "%v", err)
		}
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
	if err := c.Store.Validate(); err != nil {
		errs = append(errs, err)
	}
	if err := c.Cluster.Validate(); err != nil {
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
	a := c.API
	for _, t := range []struct {
		key string
		d   time.Duration
	}{{"api.header_timeout", a.HeaderTimeout}, {"api.read_timeout", a.ReadTimeout}, {"api.write_timeout", a.WriteTimeout}, {"api.idle_timeout", a.IdleTimeout}} {
		if t.d < 0 {
			bad(t.key, "must not be negative, not %s", t.d)
		}
	}
	if a.MaxConns < 1 {
		bad("api.max_conns", "must be at least 1, not %d", a.MaxConns)
	}
	if a.MaxPendingConns < 1 || a.MaxPendingConns > a.MaxConns {
		bad("api.max_pending_conns", "must be 1 to api.max_conns (%d), not %d", a.MaxConns, a.MaxPendingConns)
	}
	if a.MinBodyBytesPerSecond < 1 {
		bad("api.min_body_bytes_per_second", "must be at least 1, not %d", a.MinBodyBytesPerSecond)
	}
	if a.MaxListBytes < 4096 {
		bad("api.max_list_bytes", "must be at least 4096, not %d", a.MaxListBytes)
	}
	if a.MaxConnsPerIP < 1 {
		bad("api.max_conns_per_ip", "must be at least 1, not %d", a.MaxConnsPerIP)
	}
	if (a.TLSCert == "") != (a.TLSKey == "") {
		bad("api.tls_cert", "api.tls_cert and api.tls_key must be set together")
	} else if a.TLSCert != "" {
		// Reads the two files: config check must catch an unusable pair.
		if _, err := tls.LoadX509KeyPair(a.TLSCert, a.TLSKey); err != nil {
			bad("api.tls_cert", "with api.tls_key: %v", err)
		}
	}
	for i, p := range c.Fetch.Deny {
		if !p.IsValid() {
			bad(fmt.Sprintf("fetch.deny[%d]", i), "must be a CIDR such as 169.254.0.0/16")
		}
	}
	for i, p := range c.Callbacks.Allow {
		if !p.IsValid() {
			bad(fmt.Sprintf("callbacks.allow[%d]", i), "must be a CIDR such as 10.0.0.0/8")
		}
	}
	if f := c.Fetch; f.MaxConcurrent < 1 || f.MaxConcurrent > 1000 {
		bad("fetch.max_concurrent", "must be 1 to 1000, not %d", f.MaxConcurrent)
	} else if f.MaxPerAccount < 1 || f.MaxPerAccount > f.MaxConcurrent {
		bad("fetch.max_per_account", "must be 1 to fetch.max_concurrent (%d), not %d", f.MaxConcurrent, f.MaxPerAccount)
	}
	if r := c.Fetch.MinBytesPerSecond; r != nil && *r < 0 {
		bad("fetch.min_bytes_per_second", "must be 0 (no minimum) or more, not %d", *r)
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
	if r := l.RequestsPerSecond; r != nil && (*r < 0 || math.IsNaN(*r) || math.IsInf(*r, 0)) {
		bad("limits.requests_per_second", "must be 0 (unlimited) or more, not %v", *r)
	}
	if l.Burst < 1 {
		bad("limits.burst", "must be at least 1, not %d", l.Burst)
	}
	if b := l.MaxAccountBytes; b != nil && *b < 0 {
		bad("limits.max_account_bytes", "must be 0 (unlimited) or more, not %d", *b)
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

// ErrUnknownKey is returned by Set for a path that names no config key and
// by ApplyEnv for an EARSHOT_ variable that names none.
var ErrUnknownKey = errors.New("daemon: unknown config key")

// EnvPrefix starts every environment variable that sets a config key.
const EnvPrefix = "EARSHOT_"

// LoadConfig reads a YAML config file (unknown keys are errors naming the
// line), then applies EARSHOT_* environment overrides (ApplyEnv). Path ""
// means no file. Defaults are not applied; callers apply flags, then
// SetDefaults, then Validate.
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
	if err := c.ApplyEnv(env); err != nil {
		return c, err
	}
	return c, nil
}

// ConfigKey is one settable key of Config: a leaf of the YAML tree.
type ConfigKey struct {
	// Path is the dotted YAML path, e.g. "limits.max_upload_bytes".
	Path string
	// Env is the environment variable that sets it, e.g.
	// "EARSHOT_LIMITS_MAX_UPLOAD_BYTES".
	Env   string
	index []int
	typ   reflect.Type
}

// ConfigKeys lists every settable key of Config in field order. A leaf is a
// scalar (string, number, bool, duration, CIDR), a list or a map; lists and
// maps are set whole.
func ConfigKeys() []ConfigKey {
	var out []ConfigKey
	var walk func(t reflect.Type, prefix string, index []int)
	walk = func(t reflect.Type, prefix string, index []int) {
		for i := range t.NumField() {
			f := t.Field(i)
			name, _, _ := strings.Cut(f.Tag.Get("yaml"), ",")
			if !f.IsExported() || name == "-" {
				continue
			}
			if name == "" {
				name = strings.ToLower(f.Name) // yaml.v3's default
			}
			path := name
			if prefix != "" {
				path = prefix + "." + name
			}
			idx := append(slices.Clone(index), i)
			if f.Type.Kind() == reflect.Struct && !decodesItself(f.Type) {
				walk(f.Type, path, idx)
				continue
			}
			out = append(out, ConfigKey{Path: path, Env: EnvName(path), index: idx, typ: f.Type})
		}
	}
	walk(reflect.TypeFor[Config](), "", nil)
	return out
}

// decodesItself says whether YAML decodes t from a scalar of its own (a
// duration, netip.Prefix, ...) rather than key by key.
func decodesItself(t reflect.Type) bool {
	p := reflect.PointerTo(t)
	return t == reflect.TypeFor[time.Duration]() ||
		p.Implements(reflect.TypeFor[yaml.Unmarshaler]()) || p.Implements(reflect.TypeFor[encoding.TextUnmarshaler]())
}

// EnvName is the environment variable for a dotted key path: EARSHOT_, then
// the path upper-cased with dots and dashes as underscores
// ("engines.routes.model-1" is EARSHOT_ENGINES_ROUTES_MODEL_1).
func EnvName(path string) string {
	return EnvPrefix + strings.ToUpper(strings.NewReplacer(".", "_", "-", "_").Replace(path))
}

// Set sets the key at the dotted path from its text, as `earshotd run --set
// path=value` and EARSHOT_* variables do. Strings are taken as they are;
// other values are YAML, decoded as in the file: numbers, true/false,
// durations ("90s"), CIDRs, and lists as a YAML flow sequence ("[a, b]", the
// brackets may be left out: "a, b"; "[]" is the empty list) or maps as a
// flow mapping ("{en: sphinx}"). An empty value resets the key to its
// default. A list or map is replaced whole.
func (c *Config) Set(path, value string) error {
	for _, k := range ConfigKeys() {
		if k.Path == path {
			if err := c.set(k, value); err != nil {
				return fmt.Errorf("%s: %w", path, err)
			}
			return nil
		}
	}
	return fmt.Errorf("%w: %s", ErrUnknownKey, path)
}

func (c *Config) set(k ConfigKey, value string) error {
	field := reflect.ValueOf(c).Elem().FieldByIndex(k.index)
	t, ptr := k.typ, k.typ.Kind() == reflect.Pointer // a pointer key: nil is the default
	if ptr {
		t = t.Elem()
	}
	v := reflect.New(t)
	text := strings.TrimSpace(value)
	switch {
	case t.Kind() == reflect.String && !decodesItself(t) && !(ptr && value == ""):
		v.Elem().SetString(value)
	case text == "":
		field.Set(reflect.Zero(k.typ)) // the default
		return nil
	default:
		if err := decodeValue(t, text, v.Interface()); err != nil {
			if e := t.Elem; (t.Kind() == reflect.Slice || t.Kind() == reflect.Map) &&
				(e().Kind() == reflect.Struct && !decodesItself(e()) || e().Kind() == reflect.Map || e().Kind() == reflect.Interface) {
				// Items of their own keys may hold secrets (api_key): say
				// what is wrong without echoing the value.
				return fmt.Errorf("must be %s: %w", describeType(t), err)
			}
			return fmt.Errorf("must be %s, not %q", describeType(t), value)
		}
	}
	if ptr {
		field.Set(v)
	} else {
		field.Set(v.Elem())
	}
	return nil
}

// decodeValue decodes the YAML text into out, a pointer to a t, as the file
// would, except that a fractional number is refused for an integer (yaml.v3
// would truncate 1.5 to 1) and a list's brackets may be left out.
func decodeValue(t reflect.Type, text string, out any) error {
	if t.Kind() == reflect.Slice && !strings.HasPrefix(text, "[") {
		text = "[" + text + "]"
	}
	var node yaml.Node
	if err := yaml.Unmarshal([]byte(text), &node); err != nil {
		return err
	}
	if t.Kind() >= reflect.Int && t.Kind() <= reflect.Uint64 && !decodesItself(t) &&
		(len(node.Content) != 1 || node.Content[0].Tag != "!!int") {
		return errors.New("not an integer")
	}
	dec := yaml.NewDecoder(strings.NewReader(text))
	dec.KnownFields(true)
	return dec.Decode(out)
}

// describeType says in words what a value of t looks like.
func describeType(t reflect.Type) string {
	switch {
	case t == reflect.TypeFor[time.Duration]():
		return `a duration such as "90s", "5m" or "72h"`
	case t == reflect.TypeFor[netip.Prefix]():
		return "a CIDR such as 10.0.0.0/8"
	case t.Kind() == reflect.Slice:
		return "a list such as [a, b] of " + describeType(t.Elem()) + " items"
	case t.Kind() == reflect.Map:
		return "a mapping such as {a: b}"
	case t.Kind() >= reflect.Int && t.Kind() <= reflect.Uint64:
		return "an integer"
	case t.Kind() == reflect.Float32 || t.Kind() == reflect.Float64:
		return "a number"
	case t.Kind() == reflect.Bool:
		return "true or false"
	case t.Kind() == reflect.Struct:
		return "a mapping of its keys"
	}
	return "a " + t.Kind().String()
}

// EnvError is one EARSHOT_ variable ApplyEnv could not apply.
type EnvError struct {
	Var string // the variable, e.g. EARSHOT_WORKERS
	Key string // the dotted key it sets, "" when it names none
	Err error
}

func (e *EnvError) Error() string {
	if e.Key == "" {
		return fmt.Sprintf("%s: %v", e.Var, e.Err)
	}
	return fmt.Sprintf("%s (%s): %v", e.Var, e.Key, e.Err)
}

func (e *EnvError) Unwrap() error { return e.Err }

// notConfigEnv says whether name is an EARSHOT_ variable that is not a
// config key: the test suites' own switches, which reach the daemon when a
// test starts it.
func notConfigEnv(name string) bool {
	switch name {
	case "EARSHOT_ARTIFACTS", "EARSHOT_NODE_MODULES", "EARSHOT_DEB_INSTALL_TEST", "EARSHOT_DEBIAN_MIRROR",
		"EARSHOT_STORE_SEED", "EARSHOT_STORE_CRASH_DIR":
		return true
	}
	return false
}

// EnvKey returns the key the EARSHOT_ variable name sets: the one whose
// EnvName it is, or sphinx.decoders for EARSHOT_DECODERS (kept from before
// every key had a variable).
func EnvKey(name string) (ConfigKey, bool) {
	for _, k := range ConfigKeys() {
		if k.Env == name || name == "EARSHOT_DECODERS" && k.Path == "sphinx.decoders" {
			return k, true
		}
	}
	return ConfigKey{}, false
}

// ApplyEnv sets keys from EARSHOT_* variables ("NAME=value" as in
// os.Environ), each found by EnvKey and parsed by Set. An EARSHOT_ variable
// naming no key is an error (ErrUnknownKey), so a typo does not pass
// silently; the test suites' own switches (EARSHOT_STORE_SEED ...) are
// ignored. Every problem is returned, joined, each an *EnvError; the good
// variables are applied all the same.
func (c *Config) ApplyEnv(env []string) error {
	var errs []error
	for _, kv := range env {
		name, v, ok := strings.Cut(kv, "=")
		if !ok || !strings.HasPrefix(name, EnvPrefix) || notConfigEnv(name) {
			continue
		}
		k, ok := EnvKey(name)
		if !ok {
			errs = append(errs, &EnvError{Var: name, Err: ErrUnknownKey})
			continue
		}
		if err := c.set(k, v); err != nil {
			errs = append(errs, &EnvError{Var: name, Key: k.Path, Err: err})
		}
	}
	return errors.Join(errs...)
}
