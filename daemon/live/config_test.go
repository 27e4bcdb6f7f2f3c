package live

import (
	"errors"
	"strings"
	"testing"

	"github.com/earshot-dev/earshot/errcode"
	"github.com/earshot-dev/earshot/params"
)

func TestChannelDefaults(t *testing.T) {
	for _, tc := range []struct {
		name  string
		set   *int
		pools int
		want  int
	}{
		{"unset: the smaller live pool", nil, 8, 8},
		{"unset, at least one", nil, 0, 1},
		{"0 stays no limit", new(0), 8, 0},
		{"set stays", new(3), 8, 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := Config{MaxChannelsPerAccount: tc.set}
			c.SetDefaults()
			c.SetPoolDefaults(tc.pools)
			if got := c.channelLimit(); got != tc.want {
				t.Errorf("channel limit %d, want %d", got, tc.want)
			}
			if c.DecoderShare != 0.5 {
				t.Errorf("decoder_share default %g, want 0.5", c.DecoderShare)
			}
			if err := c.Validate(); err != nil {
				t.Errorf("defaults do not validate: %v", err)
			}
		})
	}
}

func TestChannelConfigValidate(t *testing.T) {
	for _, tc := range []struct {
		name string
		edit func(c *Config)
		key  string
	}{
		{"negative channel limit", func(c *Config) { c.MaxChannelsPerAccount = new(-1) }, "max_channels_per_account"},
		{"share over 1", func(c *Config) { c.DecoderShare = 1.5 }, "decoder_share"},
		{"negative share", func(c *Config) { c.DecoderShare = -0.25 }, "decoder_share"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var c Config
			c.SetDefaults()
			c.SetPoolDefaults(8)
			tc.edit(&c)
			if err := c.Validate(); err == nil || !strings.Contains(err.Error(), tc.key) {
				t.Errorf("Validate: %v, want an error naming %s", err, tc.key)
			}
		})
	}
}

// TestAdmitChannels: a new session is admitted while its account's open
// channels and its own stay within live.max_channels_per_account; past
// it, ErrLiveQuota (429) naming the key. Other accounts' channels do not
// count.
func TestAdmitChannels(t *testing.T) {
	cfg := Config{MaxChannelsPerAccount: new(4), MaxSessionsPerAccount: new(0)}
	cfg.SetDefaults()
	open := func(account string, channels int) *session {
		return &session{account: account, p: &params.Live{Channels: channels}}
	}
	s := &Service{cfg: cfg, sessions: map[string]*session{
		"a": open("alice", 2), "b": open("alice", 1), "c": open("bob", 4),
	}}
	for _, tc := range []struct {
		account  string
		channels int
		ok       bool
	}{
		{"alice", 1, true},
		{"alice", 2, false},
		{"bob", 1, false},
		{"carol", 4, true},
		{"carol", 5, false},
	} {
		err := s.admitLive(tc.account, tc.channels)
		switch {
		case tc.ok && err != nil:
			t.Errorf("%s asks %d channels: %v, want admitted", tc.account, tc.channels, err)
		case !tc.ok && (!errors.Is(err, errcode.ErrLiveQuota) || !strings.Contains(errcode.Message(err), "live.max_channels_per_account")):
			t.Errorf("%s asks %d channels: %v, want ErrLiveQuota naming live.max_channels_per_account", tc.account, tc.channels, err)
		case !tc.ok && errcode.Status(err) != 429:
			t.Errorf("%s asks %d channels: status %d, want 429", tc.account, tc.channels, errcode.Status(err))
		}
	}
}
