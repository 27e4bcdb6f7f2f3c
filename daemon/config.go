package daemon

import (
	"errors"
	"math"
	"time"

	"github.com/earshot-dev/earshot/audit"
	"github.com/earshot-dev/earshot/callback"
	"github.com/earshot-dev/earshot/config"
	"github.com/earshot-dev/earshot/daemon/live"
	"github.com/earshot-dev/earshot/ingest/fetch"
	"github.com/earshot-dev/earshot/ingest/media"
	"github.com/earshot-dev/earshot/recognizer/pipeline"
	"github.com/earshot-dev/earshot/recognizer/sphinx"
	"github.com/earshot-dev/earshot/retention"
)

// Config is the job service's part of the YAML file an operator edits (see
// README.md): its own keys and the sections of the modules it runs, at the
// top level of the file (app.Config holds it inline, beside the doors'
// sections, and is what the walker of package config maps the file onto).
// Zero fields take the defaults set by SetDefaults. A new section of the
// service is a field here whose type is its module's Config with
// SetDefaults and Validate: config.SetSectionDefaults and
// config.ValidateSections reach it as a field (its problems under its
// key), with nothing to add below.
type Config struct {
	// DataDir holds earshot.db, the audio blobs and the admin socket;
	// default /var/lib/earshot.
	DataDir string `yaml:"data_dir"`
	// Workers is how many pre-recorded jobs run at once; default 1 (each
	// job already decodes its segments on every decoder). As many live
	// sessions' batch passes may run beside them, on loops of their own
	// (daemon/worker.go, startWorkers).
	Workers int `yaml:"workers"`
	// FFmpeg is the ffmpeg binary used for non-WAV containers; default "ffmpeg".
	FFmpeg string `yaml:"ffmpeg"`
	// Sphinx configures the embedded PocketSphinx engine and its decoder pool.
	Sphinx sphinx.Config `yaml:"sphinx"`
	// Engines adds remote recognisers beside the embedded one and routes
	// models and languages to them.
	Engines pipeline.EnginesConfig `yaml:"engines"`
	// Limits bound every input.
	Limits Limits `yaml:"limits"`
	// Callbacks configures the callback outbox.
	Callbacks callback.Config `yaml:"callbacks"`
	// Live configures live sessions.
	Live live.Config `yaml:"live"`
	// Retention says how long finished jobs and uploads are kept.
	Retention retention.Config `yaml:"retention"`
	// Audit bounds the audit trail (package audit).
	Audit audit.Config `yaml:"audit"`
	// Addons configures the add-ons, chiefly their language-model backend.
	Addons pipeline.AddonsConfig `yaml:"addons"`
	// Fetch configures downloading audio_url.
	Fetch fetch.Config `yaml:"fetch"`
	// Store says where state is kept: the embedded bbolt store (default)
	// or a PostgreSQL database shared by a cluster.
	Store StoreConfig `yaml:"store"`
	// Cluster names this node among those sharing a postgres store.
	Cluster ClusterConfig `yaml:"cluster"`
	// Shutdown bounds each stage of a graceful stop (SIGTERM).
	Shutdown ShutdownConfig `yaml:"shutdown"`
}

// ShutdownConfig is the shutdown: section. On SIGTERM (or SIGINT, or the
// service manager's stop) the stages run in this order, each within its
// bound, so the process exits within their sum plus closing the store;
// keep that below the unit's TimeoutStopSec (60s, systemd/earshotd.service).
type ShutdownConfig struct {
	// Doors bounds closing the doors: the HTTP listeners stop accepting and
	// the requests in flight finish, the SIP door stops taking calls and
	// hangs up its calls (each finishing its live session as at a BYE);
	// default 5s.
	Doors time.Duration `yaml:"doors"`
	// Live bounds finishing the live sessions still running, as at
	// stop_recording: final results and the recording stored, the client
	// told end_session. A session not finished by then keeps its recording
	// on disk and is transcribed from it at the next start; one never
	// connected stays queued with its token. Default 20s.
	Live time.Duration `yaml:"live"`
	// Workers bounds the pre-recorded jobs running (no new one starts once
	// the stop begins): they may finish until then; one still running goes
	// back to the queue and runs again after the restart, as does a
	// download of an audio_url. A live job's batch pass is cut at the
	// stage's start and runs again after the restart. Default 15s.
	Workers time.Duration `yaml:"workers"`
	// Outbox bounds delivering the callbacks due, those in flight and those
	// the stages before enqueued; one not delivered by then stays in the
	// store and is retried after the restart. Default 5s.
	Outbox time.Duration `yaml:"outbox"`
}

// ServicePipeline is Pipeline with the live pools the doors' sessions
// use: the pipeline the composition root builds for New.
func (c Config) ServicePipeline() pipeline.Config {
	pc := c.Pipeline()
	pc.Live = true
	return pc
}

// SetDefaults fills zero fields.
func (c *ShutdownConfig) SetDefaults() {
	for _, f := range []struct {
		d   *time.Duration
		def time.Duration
	}{{&c.Doors, 5 * time.Second}, {&c.Live, 20 * time.Second}, {&c.Workers, 15 * time.Second}, {&c.Outbox, 5 * time.Second}} {
		if *f.d == 0 {
			*f.d = f.def
		}
	}
}

// Validate checks each bound, each problem naming its key.
func (c ShutdownConfig) Validate() error {
	var errs []error
	for _, f := range []struct {
		key string
		d   time.Duration
	}{{"doors", c.Doors}, {"live", c.Live}, {"workers", c.Workers}, {"outbox", c.Outbox}} {
		if f.d < 100*time.Millisecond || f.d > 10*time.Minute {
			errs = append(errs, config.Errorf(f.key, "must be 100ms to 10m, not %s", f.d))
		}
	}
	return errors.Join(errs...)
}

// Limits bound inputs. Sizes are bytes, durations Go durations ("90s").
type Limits struct {
	// MaxUploadBytes bounds one upload or fetched audio_url; default 1 GiB.
	MaxUploadBytes int64 `yaml:"max_upload_bytes"`
	// MaxBodyBytes bounds a JSON request body; default 1 MiB.
	MaxBodyBytes int64 `yaml:"max_body_bytes"`
	// MaxAudioDuration bounds the audio of one job; default 4h.
	MaxAudioDuration time.Duration `yaml:"max_audio_duration"`
	// MaxDecodedBytes bounds the memory one job's audio takes decoded:
	// its channels times its duration at 16 kHz 16-bit (32000 bytes per
	// second per channel), held whole while the job runs (times Workers).
	// An upload over it answers 413, a fetched audio_url ends its job as
	// error 413, both before decoding. Default: 2 channels of
	// MaxAudioDuration (921600000 at 4h).
	MaxDecodedBytes int64 `yaml:"max_decoded_bytes"`
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

// Pipeline is the part of c the recognition pipeline loads
// (pipeline.New): the embedded engine, the remote engines and routes, the
// add-ons and the media limits. The job service's own pipeline
// (ServicePipeline) has the live pools too.
func (c Config) Pipeline() pipeline.Config {
	sp := c.Sphinx
	sp.TenantShare = c.Live.DecoderShare // each account's share of the live pools
	return pipeline.Config{Sphinx: sp, Engines: c.Engines, Addons: c.Addons,
		Media: media.Options{FFmpeg: c.FFmpeg, MaxDuration: c.Limits.MaxAudioDuration,
			MaxDecodedBytes: c.Limits.MaxDecodedBytes}}
}

// SetDefaults fills zero fields: its own keys, then every section's
// (config.SetSectionDefaults, in field order), then the live pools' share
// of the embedded engine's decoders, which reads sphinx's defaults.
func (c *Config) SetDefaults() {
	def := func(s *string, v string) {
		if *s == "" {
			*s = v
		}
	}
	def(&c.DataDir, "/var/lib/earshot")
	def(&c.FFmpeg, "ffmpeg")
	if c.Workers == 0 {
		c.Workers = 1
	}
	config.SetSectionDefaults(c)
	c.Live.SetPoolDefaults(min(c.Sphinx.LiveDecoders, c.Sphinx.TelephoneDecoders))
}

// Validate checks the whole config without I/O and joins every problem,
// each naming its key: its own keys, every section's
// (config.ValidateSections), and engines:, whose check reads
// sphinx.language.
func (c *Config) Validate() error {
	var errs []error
	bad := func(key, format string, a ...any) { errs = append(errs, config.Errorf(key, format, a...)) }
	if c.DataDir == "" {
		bad("data_dir", "must be set")
	}
	if c.Workers < 1 || c.Workers > 64 {
		bad("workers", "must be 1 to 64, not %d", c.Workers)
	}
	errs = append(errs, config.ValidateSections(c))
	errs = append(errs, config.Under("engines", c.Engines.Validate(c.Sphinx.Language)))
	return errors.Join(errs...)
}

// SetDefaults fills zero fields of limits:.
func (l *Limits) SetDefaults() {
	if l.MaxUploadBytes == 0 {
		l.MaxUploadBytes = 1 << 30
	}
	if l.MaxBodyBytes == 0 {
		l.MaxBodyBytes = 1 << 20
	}
	if l.MaxAudioDuration == 0 {
		l.MaxAudioDuration = 4 * time.Hour
	}
	if l.MaxDecodedBytes == 0 {
		l.MaxDecodedBytes = media.DefaultMaxDecodedBytes(l.MaxAudioDuration)
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
}

// Validate checks limits:, each problem naming its key.
func (l Limits) Validate() error {
	var errs []error
	bad := func(key, format string, a ...any) { errs = append(errs, config.Errorf(key, format, a...)) }
	if l.MaxUploadBytes < 1024 {
		bad("max_upload_bytes", "must be at least 1024")
	}
	if l.MaxBodyBytes < 1024 {
		bad("max_body_bytes", "must be at least 1024")
	}
	if l.MaxAudioDuration < time.Second {
		bad("max_audio_duration", "must be at least 1s")
	}
	if one := int64(l.MaxAudioDuration.Seconds() * media.DecodedBytesPerSecond); l.MaxDecodedBytes < one {
		bad("max_decoded_bytes", "must be at least one channel of limits.max_audio_duration (%d), not %d", one, l.MaxDecodedBytes)
	}
	if l.FetchTimeout < time.Second {
		bad("fetch_timeout", "must be at least 1s")
	}
	if l.MaxQueued < 1 {
		bad("max_queued", "must be at least 1")
	}
	if l.MaxAttempts < 1 {
		bad("max_attempts", "must be at least 1")
	}
	if r := l.RequestsPerSecond; r != nil && (*r < 0 || math.IsNaN(*r) || math.IsInf(*r, 0)) {
		bad("requests_per_second", "must be 0 (unlimited) or more, not %v", *r)
	}
	if l.Burst < 1 {
		bad("burst", "must be at least 1, not %d", l.Burst)
	}
	if b := l.MaxAccountBytes; b != nil && *b < 0 {
		bad("max_account_bytes", "must be 0 (unlimited) or more, not %d", *b)
	}
	return errors.Join(errs...)
}
