package ingest

import (
	"errors"
	"time"

	"github.com/earshot-dev/earshot/config"
)

// SocketLimits bound a live session's client connection, the WebSocket
// door's: the keys live.max_frame_bytes, live.max_messages_per_second and
// live.idle_timeout of the file. The job service's live config holds them
// inline (daemon/live's Config), as its sessions end on the same idle
// bound and refuse the same frames; the HTTP door is given the same value
// (app.Config.HTTP). One type, defaulted and checked here once.
type SocketLimits struct {
	// IdleTimeout finalises a connected session that sent nothing this
	// long, and is the WebSocket's read deadline between frames (plus 5s);
	// default 60s.
	IdleTimeout time.Duration `yaml:"idle_timeout"`
	// MaxFrameBytes bounds one WebSocket frame; default 1 MiB.
	MaxFrameBytes int `yaml:"max_frame_bytes"`
	// MaxMessagesPerSecond bounds client frames per second per connection:
	// a token bucket of that rate with a burst of one second's frames;
	// default 500.
	MaxMessagesPerSecond int `yaml:"max_messages_per_second"`
}

// SetDefaults fills zero fields.
func (c *SocketLimits) SetDefaults() {
	if c.IdleTimeout == 0 {
		c.IdleTimeout = time.Minute
	}
	if c.MaxFrameBytes == 0 {
		c.MaxFrameBytes = 1 << 20
	}
	if c.MaxMessagesPerSecond == 0 {
		c.MaxMessagesPerSecond = 500
	}
}

// Validate checks the bounds, each problem naming its key.
func (c SocketLimits) Validate() error {
	var errs []error
	if c.IdleTimeout < 100*time.Millisecond {
		errs = append(errs, config.Errorf("idle_timeout", "must be at least 100ms, not %s", c.IdleTimeout))
	}
	if c.MaxFrameBytes < 1024 || c.MaxFrameBytes > 64<<20 {
		errs = append(errs, config.Errorf("max_frame_bytes", "must be 1 KiB to 64 MiB"))
	}
	if c.MaxMessagesPerSecond < 1 {
		errs = append(errs, config.Errorf("max_messages_per_second", "must be at least 1"))
	}
	return errors.Join(errs...)
}
