// Package kamailio holds the Kamailio configuration that puts a cluster of
// earshot nodes behind one SIP address: kamailio.cfg (embedded; the .deb
// installs it as /usr/share/earshot/kamailio/kamailio.cfg) and the
// dispatcher list of the nodes it spreads calls over. `earshotd kamailio`
// prints both for the operator's addresses.
//
// The shipped kamailio.cfg is the rendering of the zero Config: Render
// rewrites only the `#!define EARSHOT_*` lines of its settings block.
package kamailio

import (
	"bytes"
	_ "embed"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/earshot-dev/earshot/config"
)

//go:embed kamailio.cfg
var shipped []byte

// Shipped returns kamailio.cfg as the package installs it (the defaults).
// The caller gets its own copy.
func Shipped() []byte { return bytes.Clone(shipped) }

// Config is what `earshotd kamailio config` fills into kamailio.cfg.
type Config struct {
	// Listen is the address Kamailio takes calls on, UDP and TCP
	// (host:port); default 0.0.0.0:5060.
	Listen string
	// DispatcherList is the node list file Kamailio reads; default
	// /etc/kamailio/dispatcher.list.
	DispatcherList string
	// Ctl is the control socket kamcmd talks to; default
	// unix:/run/kamailio/kamailio_ctl (Debian's).
	Ctl string
	// PingInterval is how often each node is probed with OPTIONS, whole
	// seconds; default 10s.
	PingInterval time.Duration
	// Timeout is how long a node may stay silent (no reply at all) before
	// the call goes to the next node and the probe counts as failed;
	// whole milliseconds, default 2s.
	Timeout time.Duration
	// TLSListen, when set, is where Kamailio also takes calls over SIP/TLS
	// (host:port, 5061 by convention); it turns TLS on, to the callers and
	// to the nodes listed with ;transport=tls. TLSCert and TLSKey (PEM) are
	// Kamailio's certificate, shown to both; TLSCA (PEM) holds the CAs a
	// node's certificate (and a caller's, when it shows one) must chain to.
	// All four are set together or not at all.
	TLSListen, TLSCert, TLSKey, TLSCA string
}

// SetDefaults fills zero fields.
func (c *Config) SetDefaults() {
	if c.Listen == "" {
		c.Listen = "0.0.0.0:5060"
	}
	if c.DispatcherList == "" {
		c.DispatcherList = "/etc/kamailio/dispatcher.list"
	}
	if c.Ctl == "" {
		c.Ctl = "unix:/run/kamailio/kamailio_ctl"
	}
	if c.PingInterval == 0 {
		c.PingInterval = 10 * time.Second
	}
	if c.Timeout == 0 {
		c.Timeout = 2 * time.Second
	}
}

// Validate checks the settings without I/O and joins every problem, each
// naming its key as the flag of `earshotd kamailio config` that sets it.
func (c Config) Validate() error {
	var errs []error
	add := func(key, format string, a ...any) { errs = append(errs, config.Errorf(key, format, a...)) }
	if _, err := listenAddr(c.Listen); err != nil {
		add("listen", "%v", err)
	}
	if !plainValue(c.DispatcherList) || !strings.HasPrefix(c.DispatcherList, "/") {
		add("dispatcher-list", "%q is not an absolute path without quotes or control characters", c.DispatcherList)
	}
	scheme, _, _ := strings.Cut(c.Ctl, ":")
	if !plainValue(c.Ctl) || (scheme != "unix" && scheme != "tcp" && scheme != "udp") {
		add("ctl", "%q is not unix:/path, tcp:host:port or udp:host:port", c.Ctl)
	}
	if c.PingInterval < time.Second || c.PingInterval > time.Hour || c.PingInterval%time.Second != 0 {
		add("ping-interval", "must be whole seconds from 1s to 1h, not %s", c.PingInterval)
	}
	if c.Timeout < 100*time.Millisecond || c.Timeout > time.Minute || c.Timeout%time.Millisecond != 0 {
		add("timeout", "must be whole milliseconds from 100ms to 1m, not %s", c.Timeout)
	}
	if c.TLSListen != "" || c.TLSCert != "" || c.TLSKey != "" || c.TLSCA != "" {
		if _, err := listenAddr(c.TLSListen); err != nil {
			add("tls-listen", "%v (TLS needs --tls-listen with --tls-cert, --tls-key and --tls-ca)", err)
		}
		for _, f := range []struct{ key, path string }{{"tls-cert", c.TLSCert}, {"tls-key", c.TLSKey}, {"tls-ca", c.TLSCA}} {
			if !plainValue(f.path) || !strings.HasPrefix(f.path, "/") {
				add(f.key, "%q is not an absolute path without quotes or control characters (TLS needs all of --tls-listen, --tls-cert, --tls-key and --tls-ca)", f.path)
			}
		}
	}
	return errors.Join(errs...)
}

// plainValue reports whether s can sit inside a quoted cfg string.
func plainValue(s string) bool {
	if s == "" {
		return false
	}
	for _, r := range s {
		if r < 0x20 || r == 0x7f || r == '"' || r == '\\' {
			return false
		}
	}
	return true
}

// listenAddr is host:port as Kamailio writes it after "udp:" ([v6]:port).
func listenAddr(s string) (string, error) {
	host, port, err := net.SplitHostPort(s)
	if err != nil {
		return "", fmt.Errorf("%q is not host:port", s)
	}
	a, err := netip.ParseAddr(host)
	if err != nil {
		return "", fmt.Errorf("%q: the host must be an IP address (0.0.0.0 for every interface)", s)
	}
	if n, err := strconv.Atoi(port); err != nil || n < 1 || n > 65535 {
		return "", fmt.Errorf("%q: the port must be 1 to 65535", s)
	}
	return net.JoinHostPort(a.String(), port), nil
}

// Render returns kamailio.cfg with c's settings (after SetDefaults).
func Render(c Config) ([]byte, error) {
	c.SetDefaults()
	if err := c.Validate(); err != nil {
		return nil, err
	}
	listen, _ := listenAddr(c.Listen)
	src4, src6 := "0.0.0.0", "::"
	if ap, err := netip.ParseAddrPort(listen); err == nil && !ap.Addr().IsUnspecified() {
		if ap.Addr().Is4() {
			src4 = ap.Addr().String()
		} else {
			src6 = ap.Addr().String()
		}
	}
	out := Shipped()
	defines := []struct{ name, value string }{
		{"EARSHOT_LISTEN_UDP", "udp:" + listen},
		{"EARSHOT_LISTEN_TCP", "tcp:" + listen},
		{"EARSHOT_TCP_SOURCE_IPV4", src4},
		{"EARSHOT_TCP_SOURCE_IPV6", src6},
		{"EARSHOT_DISPATCHER_LIST", strconv.Quote(c.DispatcherList)},
		{"EARSHOT_CTL", strconv.Quote(c.Ctl)},
		{"EARSHOT_PING_INTERVAL", strconv.Itoa(int(c.PingInterval / time.Second))},
		{"EARSHOT_FR_TIMER", strconv.Itoa(int(c.Timeout / time.Millisecond))},
	}
	if c.TLSListen != "" {
		tlsListen, _ := listenAddr(c.TLSListen)
		defines = append(defines, []struct{ name, value string }{
			{"EARSHOT_LISTEN_TLS", "tls:" + tlsListen},
			{"EARSHOT_TLS_CERT", strconv.Quote(c.TLSCert)},
			{"EARSHOT_TLS_KEY", strconv.Quote(c.TLSKey)},
			{"EARSHOT_TLS_CA", strconv.Quote(c.TLSCA)},
		}...)
		const off, on = "\n##!define EARSHOT_WITH_TLS\n", "\n#!define EARSHOT_WITH_TLS\n"
		if bytes.Count(out, []byte(off)) != 1 {
			return nil, errors.New("kamailio: kamailio.cfg has no single ##!define EARSHOT_WITH_TLS line")
		}
		out = bytes.Replace(out, []byte(off), []byte(on), 1)
	}
	for _, d := range defines {
		re := regexp.MustCompile(`(?m)^#!define ` + d.name + ` .*$`)
		if len(re.FindAllIndex(out, -1)) != 1 {
			return nil, fmt.Errorf("kamailio: kamailio.cfg has no single #!define %s line", d.name)
		}
		out = re.ReplaceAllLiteral(out, []byte("#!define "+d.name+" "+d.value))
	}
	return out, nil
}

// hostRE is a DNS name: letters, digits, hyphens and dots.
var hostRE = regexp.MustCompile(`^[A-Za-z0-9]([A-Za-z0-9-]{0,62})(\.[A-Za-z0-9]([A-Za-z0-9-]{0,62}))*\.?$`)

// nodeURI parses one node as the operator writes it: HOST, HOST:PORT or
// sip:HOST[:PORT][;transport=udp|tcp|tls] (port 5060 when left out, 5061
// with tls); HOST is an IP address or a DNS name.
func nodeURI(s string) (string, error) {
	rest := strings.TrimPrefix(strings.TrimSpace(s), "sip:")
	rest, params, _ := strings.Cut(rest, ";")
	transport := ""
	if params != "" {
		k, v, _ := strings.Cut(params, "=")
		if k != "transport" || (v != "udp" && v != "tcp" && v != "tls") {
			return "", fmt.Errorf("node %q: the only parameter is transport=udp, tcp or tls", s)
		}
		transport = ";transport=" + v
	}
	host, port := rest, "5060"
	if transport == ";transport=tls" {
		port = "5061"
	}
	if h, p, err := net.SplitHostPort(rest); err == nil {
		host, port = h, p
	} else if strings.HasPrefix(rest, "[") && strings.HasSuffix(rest, "]") {
		host = rest[1 : len(rest)-1]
	}
	if n, err := strconv.Atoi(port); err != nil || n < 1 || n > 65535 {
		return "", fmt.Errorf("node %q: the port must be 1 to 65535", s)
	}
	if a, err := netip.ParseAddr(host); err == nil {
		return "sip:" + net.JoinHostPort(a.String(), port) + transport, nil
	}
	if len(host) > 253 || !hostRE.MatchString(host) {
		return "", fmt.Errorf("node %q: %q is not an IP address or a DNS name", s, host)
	}
	return "sip:" + host + ":" + port + transport, nil
}

// DispatcherList returns the dispatcher list of nodes (set 1, the set
// kamailio.cfg dispatches to), one line each in the order given; each node
// is the address of an earshot node's SIP door (its sip.listen port, on the
// address Kamailio reaches it at).
func DispatcherList(nodes []string) ([]byte, error) {
	if len(nodes) == 0 {
		return nil, errors.New("kamailio: name at least one node (host[:port])")
	}
	var b bytes.Buffer
	b.WriteString("# earshot nodes for Kamailio's dispatcher: setid destination flags priority\n")
	b.WriteString("# (written by `earshotd kamailio dispatcher`; reload with `kamcmd dispatcher.reload`)\n")
	seen := map[string]bool{}
	var errs []error
	for _, n := range nodes {
		uri, err := nodeURI(n)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if seen[uri] {
			errs = append(errs, fmt.Errorf("node %q is listed twice", n))
			continue
		}
		seen[uri] = true
		fmt.Fprintf(&b, "1 %s 0 0\n", uri)
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}
