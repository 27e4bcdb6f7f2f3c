package sip

import (
	"errors"
	"fmt"
	"net"
	"net/netip"
	"strconv"
	"strings"
	"time"

	"github.com/earshot-dev/earshot/config"
	"github.com/earshot-dev/earshot/errcode"
	"github.com/earshot-dev/earshot/ingest/rtp"
	"github.com/earshot-dev/earshot/params"
)

// Config is the `sip:` section of the daemon's config file.
type Config struct {
	// Listen is the UDP and TCP address of the door (host:port, e.g.
	// 0.0.0.0:5060); empty turns the door off. Default empty.
	Listen string `yaml:"listen"`
	// RTPPorts is the inclusive UDP port range media is received on, as
	// "low-high"; each stream takes an even port and the next (RTCP).
	// Default 20000-20999.
	RTPPorts string `yaml:"rtp_ports"`
	// Allow lists the networks (CIDR, or single addresses) that may place
	// calls and send OPTIONS; any other source gets 403 for its first few
	// messages a minute, and what it sends beyond that is dropped unread
	// (a flood costs no SIP state). Required when
	// Listen is set.
	Allow []string `yaml:"allow"`
	// AdvertiseIP is the c= address of SDP answers and the Contact host.
	// Default: the listen IP if it is not unspecified, else the first
	// non-loopback interface address.
	AdvertiseIP string `yaml:"advertise_ip"`
	// RTPTimeout ends a call when no RTP arrived for this long while it is
	// not on hold; default 30s.
	RTPTimeout time.Duration `yaml:"rtp_timeout"`
	// MaxCalls bounds concurrent calls on the door; beyond it 503 Service
	// Unavailable with Retry-After (the node is full: a proxy in front
	// tries another node). Default 16; two RTP pairs per call (SIPREC)
	// must fit RTPPorts.
	MaxCalls int `yaml:"max_calls"`
	// RingTime sends 180 Ringing and waits this long before answering
	// (a CANCEL in that time creates no job); default 0.
	RingTime time.Duration `yaml:"ring_time"`
	// Headers names extra SIP headers of the INVITE copied into
	// custom_metadata as sip_header_<lower-case name>; From, To and
	// Call-ID are always copied (sip_from, sip_to, sip_call_id).
	Headers []string `yaml:"headers"`
	// RTPLatching, default true, lets a call take its RTP from a source
	// other than its SDP's c= address and the INVITE's source (a phone
	// behind NAT or a proxy): the first source to send valid RTP of the
	// call's codecs within 10s of the answer, once, and from then on only
	// that source (symmetric RTP, ingest/rtp/latch.go). false takes RTP
	// only from the SDP and signalling addresses.
	RTPLatching *bool `yaml:"rtp_latching"`
	// Jitter sizes each stream's jitter buffer (depth, delay, max_gap,
	// capacity, conceal); defaults 5 packets, 80ms, 16000 samples, 64
	// packets, plc.
	Jitter rtp.JitterConfig `yaml:"jitter"`
	// MaxTCPConns bounds the door's open TCP connections in all; a new one
	// beyond it is closed at once. Default 1024 (each is a file
	// descriptor: the daemon's limit must leave room for the API, calls'
	// RTP sockets and the store).
	MaxTCPConns int `yaml:"max_tcp_conns"`
	// MaxTCPConnsPerSource bounds the TCP connections from one address;
	// default 64 (a PBX or SBC needs a few).
	MaxTCPConnsPerSource int `yaml:"max_tcp_conns_per_source"`
	// TCPIdleTimeout closes a TCP connection that sent nothing for this
	// long (keep-alive CRLFs count); default 5m.
	TCPIdleTimeout time.Duration `yaml:"tcp_idle_timeout"`
	// TLSListen is the SIP over TLS address (RFC 3261 section 26.2,
	// ;transport=tls; host:port, conventionally port 5061); empty turns it
	// off. Its connections share the TCP bounds (max_tcp_conns,
	// max_tcp_conns_per_source, tcp_idle_timeout). Default empty.
	TLSListen string `yaml:"tls_listen"`
	// TLSCert and TLSKey are the door's certificate chain and key (PEM
	// files), required with TLSListen; TLS 1.2 and later. SIGHUP reloads
	// them; calls and connections keep going.
	TLSCert string `yaml:"tls_cert"`
	TLSKey  string `yaml:"tls_key"`
	// TLSHandshakeTimeout closes a TLS connection whose handshake has not
	// finished this long after it was accepted; default 10s.
	TLSHandshakeTimeout time.Duration `yaml:"tls_handshake_timeout"`
	// AuthMaxFailures bounds the failed digest authentications (wrong
	// credentials) and refused client certificates (tls_client_ca) of one
	// source address a minute; past it the source's INVITEs to routes with
	// auth or tls_client_ca get 403 unchallenged until the minute ends.
	// Default 10.
	AuthMaxFailures int `yaml:"auth_max_failures"`
	// Routes choose the account and live options of a call by its
	// request-URI user, first match wins; a call no route matches gets 404.
	Routes []Route `yaml:"routes"`
}

// Route maps calls to one account and its live options.
type Route struct {
	// User is the request-URI user (sip:USER@host); "*" matches any.
	User string `yaml:"user"`
	// Account owns the jobs (as in `earshotd keys create --account`).
	Account string `yaml:"account"`
	// Live holds any POST /v2/live body fields (language_config,
	// messages_config, callback, callback_config, custom_metadata, ...);
	// encoding, bit_depth, sample_rate and channels are set by the door.
	Live map[string]any `yaml:"live"`
	// Options is another name for Live; set one of them.
	Options map[string]any `yaml:"options"`
	// Source optionally narrows the route to these networks (CIDR).
	Source []string `yaml:"source"`
	// MaxCalls bounds this route's concurrent calls (486 beyond); 0 means
	// only the door's limit.
	MaxCalls int `yaml:"max_calls"`
	// Auth requires SIP digest authentication (username and password or
	// password_hash, realm) of the route's calls, besides sip.allow and
	// source (auth.go). Default none.
	Auth RouteAuth `yaml:"auth"`
	// TLSClientCA, a PEM file of CA certificates, takes the route's calls
	// only over TLS from a client certificate that chains to one of them
	// (mutual TLS, mtls.go); TLSClientNames, when set, also requires the
	// certificate to name one of these (subject CN or DNS SAN). Default
	// none.
	TLSClientCA    string   `yaml:"tls_client_ca"`
	TLSClientNames []string `yaml:"tls_client_names"`
	// SRTP is the route's media encryption (SDES, RFC 4568, sdes.go): off
	// takes plain RTP only (an RTP/SAVP offer gets 488), optional takes
	// SRTP when offered and plain RTP otherwise, mandatory refuses a plain
	// offer with 488. Default optional.
	SRTP string `yaml:"srtp"`
	// AllowSDESWithoutTLS lets SDES keys travel in SDP over UDP and TCP:
	// without it a call offering keys must come over TLS (an RTP/SAVP
	// offer over UDP gets 488; a best-effort RTP/AVP one is answered
	// plain). For labs; default false.
	AllowSDESWithoutTLS bool `yaml:"allow_sdes_without_tls"`

	// live is Live (or Options) decoded when the configuration is loaded
	// (SetDefaults, decodeOptions; route_options.go), every default when
	// neither is set; liveErr is why they do not decode, which Validate
	// reports. Every call of the route is handed live as it is.
	live    *params.Live
	liveErr error
}

// doorFields are the live options the door sets from the SDP.
var doorFields = []string{"encoding", "bit_depth", "sample_rate", "channels"}

// SetDefaults fills zero fields.
func (c *Config) SetDefaults() {
	if c.RTPPorts == "" {
		c.RTPPorts = "20000-20999"
	}
	if c.RTPTimeout == 0 {
		c.RTPTimeout = 30 * time.Second
	}
	if c.MaxCalls == 0 {
		c.MaxCalls = 16
	}
	if c.MaxTCPConns == 0 {
		c.MaxTCPConns = 1024
	}
	if c.MaxTCPConnsPerSource == 0 {
		c.MaxTCPConnsPerSource = 64
	}
	if c.TCPIdleTimeout == 0 {
		c.TCPIdleTimeout = 5 * time.Minute
	}
	if c.TLSHandshakeTimeout == 0 {
		c.TLSHandshakeTimeout = 10 * time.Second
	}
	if c.AuthMaxFailures == 0 {
		c.AuthMaxFailures = 10
	}
	if c.RTPLatching == nil {
		on := true
		c.RTPLatching = &on
	}
	c.Jitter.SetDefaults()
	for i := range c.Routes {
		if c.Routes[i].SRTP == "" {
			c.Routes[i].SRTP = srtpOptional
		}
		c.Routes[i].decodeOptions()
	}
}

// latching reports whether calls latch onto their RTP's source.
func (c Config) latching() bool { return c.RTPLatching == nil || *c.RTPLatching }

// Validate checks the section without I/O and joins every problem, each
// a *config.Problem naming its key (relative to this section).
func (c Config) Validate() error {
	var errs []error
	add := func(key, format string, a ...any) { errs = append(errs, config.Errorf(key, format, a...)) }
	if c.Listen != "" {
		if _, _, err := net.SplitHostPort(c.Listen); err != nil {
			add("listen", "%q is not host:port", c.Listen)
		}
	}
	if (c.Listen != "" || c.TLSListen != "") && len(c.Allow) == 0 {
		add("allow", "list the networks that may place calls (e.g. [10.0.0.0/8])")
	}
	errs = append(errs, c.validateTLS()...)
	if c.AuthMaxFailures < 1 || c.AuthMaxFailures > 10000 {
		add("auth_max_failures", "must be 1 to 10000, not %d", c.AuthMaxFailures)
	}
	lo, hi, err := parsePorts(c.RTPPorts)
	if err != nil {
		add("rtp_ports", "%v", err)
	} else if pairs := (hi - lo + 1) / 2; c.MaxCalls*2 > pairs {
		add("rtp_ports", "%d port pairs cannot carry max_calls %d with two streams each", pairs, c.MaxCalls)
	}
	if _, err := parseNets(c.Allow); err != nil {
		add("allow", "%v", err)
	}
	if c.AdvertiseIP != "" {
		if _, err := netip.ParseAddr(c.AdvertiseIP); err != nil {
			add("advertise_ip", "%q is not an IP address", c.AdvertiseIP)
		}
	}
	if c.RTPTimeout < time.Second {
		add("rtp_timeout", "%s is under 1s", c.RTPTimeout)
	}
	if c.MaxCalls < 1 || c.MaxCalls > 10000 {
		add("max_calls", "must be 1 to 10000, not %d", c.MaxCalls)
	}
	if c.MaxTCPConns < 1 || c.MaxTCPConns > 1<<20 {
		add("max_tcp_conns", "must be 1 to %d, not %d", 1<<20, c.MaxTCPConns)
	}
	if c.MaxTCPConnsPerSource < 1 || c.MaxTCPConnsPerSource > c.MaxTCPConns {
		add("max_tcp_conns_per_source", "must be 1 to max_tcp_conns (%d), not %d", c.MaxTCPConns, c.MaxTCPConnsPerSource)
	}
	if c.TCPIdleTimeout < time.Second {
		add("tcp_idle_timeout", "%s is under 1s", c.TCPIdleTimeout)
	}
	if c.RingTime < 0 || c.RingTime > time.Minute {
		add("ring_time", "must be 0 to 1m, not %s", c.RingTime)
	}
	for _, h := range c.Headers {
		if h == "" || strings.ContainsAny(h, " :\t\r\n") {
			add("headers", "%q is not a header name", h)
		}
	}
	errs = append(errs, config.Under("jitter", c.Jitter.Validate()))
	users := map[string]bool{}
	for i, r := range c.Routes {
		key := fmt.Sprintf("routes[%d]", i)
		if r.User == "" {
			add(key+".user", "required (\"*\" matches any)")
		}
		if users[r.User] && len(r.Source) == 0 {
			add(key+".user", "%q repeats an earlier route", r.User)
		}
		users[r.User] = true
		if r.Account == "" {
			add(key+".account", "required")
		}
		if r.Live != nil && r.Options != nil {
			add(key, "set live or options, not both")
		}
		door := false
		for _, f := range doorFields {
			if _, ok := r.options()[f]; ok {
				add(key+".live."+f, "set by the SIP door from the call's SDP")
				door = true
			}
		}
		if err := r.optionsErr(); err != nil && !door {
			var ve *params.ValidationError
			if errors.As(err, &ve) {
				add(key+".live", "%s", strings.Join(ve.Problems, "; "))
			} else {
				add(key+".live", "%s", errcode.Message(err)) // 422: model-3, ...
			}
		}
		if _, err := parseNets(r.Source); err != nil {
			add(key+".source", "%v", err)
		}
		if r.MaxCalls < 0 {
			add(key+".max_calls", "must be >= 0")
		}
		errs = append(errs, r.Auth.validate(key+".auth")...)
		errs = append(errs, r.validateMTLS(key, c.TLSListen != "")...)
		switch r.SRTP {
		case "", srtpOff, srtpOptional, srtpMandatory:
		default:
			add(key+".srtp", "must be off, optional or mandatory, not %q", r.SRTP)
		}
	}
	return errors.Join(errs...)
}

func parsePorts(s string) (int, int, error) {
	a, b, ok := strings.Cut(s, "-")
	lo, err1 := strconv.Atoi(strings.TrimSpace(a))
	hi, err2 := strconv.Atoi(strings.TrimSpace(b))
	if !ok || err1 != nil || err2 != nil {
		return 0, 0, fmt.Errorf("%q is not low-high", s)
	}
	if lo < 1024 || hi > 65535 || hi < lo+1 {
		return 0, 0, fmt.Errorf("%q must lie in 1024-65535 and hold a pair", s)
	}
	return lo, hi, nil
}

func parseNets(list []string) ([]netip.Prefix, error) {
	var out []netip.Prefix
	var errs []error
	for _, s := range list {
		if p, err := netip.ParsePrefix(s); err == nil {
			out = append(out, p.Masked())
			continue
		}
		if a, err := netip.ParseAddr(s); err == nil {
			out = append(out, netip.PrefixFrom(a, a.BitLen()))
			continue
		}
		errs = append(errs, fmt.Errorf("%q is not a CIDR or address", s))
	}
	return out, errors.Join(errs...)
}

func inNets(nets []netip.Prefix, a netip.Addr) bool {
	a = a.Unmap()
	for _, n := range nets {
		if n.Contains(a) {
			return true
		}
	}
	return false
}
