package webrtc

import (
	"errors"
	"net"
	"strconv"
	"strings"
	"time"

	"github.com/earshot-dev/earshot/config"
)

// Config configures the WebRTC (WHIP) door; it is the daemon's `webrtc:`
// section.
type Config struct {
	// Disabled turns the door off: the WHIP routes answer 404; default false.
	Disabled bool `yaml:"disabled"`
	// UDPPorts is the inclusive range "min-max" ICE host candidates bind
	// (one port per local address per session); default "40000-40999".
	UDPPorts string `yaml:"udp_ports"`
	// PublicIP, when set, replaces the address of every host candidate in
	// answers (NAT 1:1: the host is reached through a static mapping of the
	// same ports); default none.
	PublicIP string `yaml:"public_ip"`
	// IncludeLoopback adds candidates on loopback addresses. Browsers never
	// use them (Chromium does not gather 127.0.0.1); local test peers do;
	// default false.
	IncludeLoopback bool `yaml:"include_loopback"`
	// DisconnectGrace ends a recording when no RTP has arrived this long
	// (the peer went away without DELETE); default 30s, the WebSocket
	// reconnect grace.
	DisconnectGrace time.Duration `yaml:"disconnect_grace"`
	// GatherTimeout bounds ICE candidate gathering for one answer;
	// default 2s.
	GatherTimeout time.Duration `yaml:"gather_timeout"`
	// MaxOfferBytes bounds one SDP offer; default 64 KiB.
	MaxOfferBytes int `yaml:"max_offer_bytes"`
}

// SetDefaults fills zero fields.
func (c *Config) SetDefaults() {
	if c.UDPPorts == "" {
		c.UDPPorts = "40000-40999"
	}
	if c.DisconnectGrace == 0 {
		c.DisconnectGrace = 30 * time.Second
	}
	if c.GatherTimeout == 0 {
		c.GatherTimeout = 2 * time.Second
	}
	if c.MaxOfferBytes == 0 {
		c.MaxOfferBytes = 64 << 10
	}
}

// Validate checks the settings without I/O and joins every problem, each
// a *config.Problem naming its key (relative to this section).
func (c Config) Validate() error {
	var errs []error
	if _, _, err := c.portRange(); err != nil {
		errs = append(errs, err)
	}
	if c.PublicIP != "" && net.ParseIP(c.PublicIP) == nil {
		errs = append(errs, config.Errorf("public_ip", "%q is not an IP address", c.PublicIP))
	}
	if c.DisconnectGrace < 100*time.Millisecond {
		errs = append(errs, config.Errorf("disconnect_grace", "must be at least 100ms, not %s", c.DisconnectGrace))
	}
	if c.GatherTimeout < 10*time.Millisecond {
		errs = append(errs, config.Errorf("gather_timeout", "must be at least 10ms, not %s", c.GatherTimeout))
	}
	if c.MaxOfferBytes < 1024 || c.MaxOfferBytes > 1<<20 {
		errs = append(errs, config.Errorf("max_offer_bytes", "must be 1 KiB to 1 MiB, not %d", c.MaxOfferBytes))
	}
	return errors.Join(errs...)
}

// portRange parses UDPPorts.
func (c Config) portRange() (lo, hi uint16, err error) {
	a, b, ok := strings.Cut(c.UDPPorts, "-")
	if !ok {
		return 0, 0, config.Errorf("udp_ports", "%q is not a range \"min-max\"", c.UDPPorts)
	}
	l, err1 := strconv.ParseUint(strings.TrimSpace(a), 10, 16)
	h, err2 := strconv.ParseUint(strings.TrimSpace(b), 10, 16)
	if err1 != nil || err2 != nil || l == 0 || h < l {
		return 0, 0, config.Errorf("udp_ports", "%q must be two ports 1-65535, min <= max", c.UDPPorts)
	}
	return uint16(l), uint16(h), nil
}
