package live

import (
	"errors"
	"time"

	"github.com/earshot-dev/earshot/config"
	"github.com/earshot-dev/earshot/ingest"
)

// Config configures live sessions (the live: section).
type Config struct {
	// Capacity is how many live sessions may exist at once (created and not
	// ended); beyond it POST /v2/live answers 503; default 16.
	Capacity int `yaml:"capacity"`
	// MaxSessionsPerAccount bounds the live sessions one account may have
	// at once (created and not ended), so one tenant cannot hold every
	// slot; beyond it POST /v2/live answers 429 (a SIP call 503). Unset is
	// half of Capacity (at least 1); 0 is no limit.
	MaxSessionsPerAccount *int `yaml:"max_sessions_per_account"`
	// MaxChannelsPerAccount bounds the audio channels of the live
	// sessions one account may have at once (created and not ended: a
	// session counts its channels, a SIP call one per stream), as
	// MaxSessionsPerAccount bounds its sessions: an 8-channel session
	// takes as much as 8 mono ones. A session that would take the account
	// past it is refused with 429 (a SIP call 503). Unset is the size of
	// the smaller live decoder pool (sphinx.live_decoders,
	// sphinx.telephone_decoders; SetPoolDefaults): the channels one
	// account could decode at once with the whole pool, of which it may
	// hold DecoderShare while they talk; 0 is no limit.
	MaxChannelsPerAccount *int `yaml:"max_channels_per_account"`
	// DecoderShare is the share of each live decoder pool (the wideband
	// live pool, sphinx.live_decoders; the telephone pool,
	// sphinx.telephone_decoders) that the channels of one account may
	// hold at once, 0 < share <= 1: share x pool rounded down, at least
	// one decoder. A channel whose account holds its share waits as for a
	// free decoder (decoder_wait), then misses its utterance with an
	// error message, while the rest of the pool stays free for the other
	// accounts (a decoder is held through an utterance and cannot be
	// taken back, so the bound holds with no other account waiting too).
	// It holds while more than one account can open live sessions (the
	// daemon's tenants.go): a box of one account has each pool whole.
	// Default 0.5; 1 is no bound.
	DecoderShare float64 `yaml:"decoder_share"`
	// TokenTTL is how long the WebSocket URL's token stays valid; default 1h.
	TokenTTL time.Duration `yaml:"token_ttl"`
	// ConnectTimeout ends a session no client has connected to this long
	// after POST /v2/live (error 408), releasing its slot; default 30s.
	// TokenTTL still bounds reconnecting to a session that started.
	ConnectTimeout time.Duration `yaml:"connect_timeout"`
	// ReconnectGrace finalises a session whose client went away and did not
	// come back this long; default 30s.
	ReconnectGrace time.Duration `yaml:"reconnect_grace"`
	// SocketLimits are the client connection's bounds (idle_timeout,
	// max_frame_bytes, max_messages_per_second), shared with the
	// WebSocket door, which is given the same value (ingest/socket.go).
	ingest.SocketLimits `yaml:",inline"`
	// DecoderWait bounds the wait for a free decoder of an utterance that
	// found none free at its speech start (it waits at its final or cut,
	// recognizer.LiveConfig.DecoderWait); default 3s.
	DecoderWait time.Duration `yaml:"decoder_wait"`
	// PartialInterval is the cadence of partial transcripts; default 250ms.
	PartialInterval time.Duration `yaml:"partial_interval"`
	// MaxStoredMessageBytes bounds the bytes of the messages a session
	// keeps in result.messages before its end (acknowledgments take at
	// most a quarter); later ones are still sent, and counted in a
	// messages_omitted entry. The end's messages (end_recording through
	// end_session) are always kept. Default 4 MiB.
	MaxStoredMessageBytes int `yaml:"max_stored_message_bytes"`
	// BatchPass, default true, replaces a finished session's stored result
	// (and sends its callback's final messages) with a pass of the
	// pre-recorded pipeline over the whole recording, run by the workers
	// below live audio in priority (batchpass.go).
	BatchPass *bool `yaml:"batch_pass"`
}

// SetDefaults fills zero fields.
func (c *Config) SetDefaults() {
	if c.Capacity == 0 {
		c.Capacity = 16
	}
	if c.MaxSessionsPerAccount == nil {
		n := max(1, c.Capacity/2)
		c.MaxSessionsPerAccount = &n
	}
	if c.DecoderShare == 0 {
		c.DecoderShare = 0.5
	}
	if c.TokenTTL == 0 {
		c.TokenTTL = time.Hour
	}
	if c.ConnectTimeout == 0 {
		c.ConnectTimeout = 30 * time.Second
	}
	if c.ReconnectGrace == 0 {
		c.ReconnectGrace = 30 * time.Second
	}
	c.SocketLimits.SetDefaults()
	if c.DecoderWait == 0 {
		c.DecoderWait = 3 * time.Second
	}
	if c.PartialInterval == 0 {
		c.PartialInterval = 250 * time.Millisecond
	}
	if c.MaxStoredMessageBytes == 0 {
		c.MaxStoredMessageBytes = 4 << 20
	}
	if c.BatchPass == nil {
		on := true
		c.BatchPass = &on
	}
}

// SetPoolDefaults fills MaxChannelsPerAccount, when unset, with
// liveDecoders, the size of the smaller live decoder pool
// (sphinx.live_decoders, sphinx.telephone_decoders), at least 1.
func (c *Config) SetPoolDefaults(liveDecoders int) {
	if c.MaxChannelsPerAccount == nil {
		n := max(1, liveDecoders)
		c.MaxChannelsPerAccount = &n
	}
}

// channelLimit is MaxChannelsPerAccount, 0 when there is none.
func (c Config) channelLimit() int {
	if c.MaxChannelsPerAccount == nil {
		return 0
	}
	return *c.MaxChannelsPerAccount
}

// batchPass reports whether finished sessions get a batch pass.
func (c Config) batchPass() bool { return c.BatchPass == nil || *c.BatchPass }

// connectWithin is how long a created session waits for its first client.
func (c Config) connectWithin() time.Duration { return min(c.ConnectTimeout, c.TokenTTL) }

// accountLimit is MaxSessionsPerAccount, 0 when there is none.
func (c Config) accountLimit() int {
	if c.MaxSessionsPerAccount == nil {
		return 0
	}
	return *c.MaxSessionsPerAccount
}

// Validate checks the live settings.
func (c Config) Validate() error {
	var errs []error
	if c.Capacity < 1 || c.Capacity > 10000 {
		errs = append(errs, config.Errorf("capacity", "must be 1 to 10000, not %d", c.Capacity))
	}
	if n := c.MaxSessionsPerAccount; n != nil && *n < 0 {
		errs = append(errs, config.Errorf("max_sessions_per_account", "must be 0 (no limit) or more, not %d", *n))
	}
	if n := c.MaxChannelsPerAccount; n != nil && *n < 0 {
		errs = append(errs, config.Errorf("max_channels_per_account", "must be 0 (no limit) or more, not %d", *n))
	}
	if c.DecoderShare <= 0 || c.DecoderShare > 1 {
		errs = append(errs, config.Errorf("decoder_share", "must be more than 0 and at most 1, not %g", c.DecoderShare))
	}
	if c.TokenTTL < time.Second {
		errs = append(errs, config.Errorf("token_ttl", "must be at least 1s"))
	}
	if c.ConnectTimeout < time.Second {
		errs = append(errs, config.Errorf("connect_timeout", "must be at least 1s"))
	}
	errs = append(errs, c.SocketLimits.Validate())
	if c.ReconnectGrace < 0 {
		errs = append(errs, config.Errorf("reconnect_grace", "must be 0 or more, not %s", c.ReconnectGrace))
	}
	if c.PartialInterval <= 0 || c.PartialInterval > 500*time.Millisecond {
		errs = append(errs, config.Errorf("partial_interval", "must be > 0 and <= 500ms"))
	}
	if c.MaxStoredMessageBytes < 4096 || c.MaxStoredMessageBytes > 256<<20 {
		errs = append(errs, config.Errorf("max_stored_message_bytes", "must be 4 KiB to 256 MiB, not %d", c.MaxStoredMessageBytes))
	}
	return errors.Join(errs...)
}
