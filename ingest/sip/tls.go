package sip

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	sipmsg "github.com/emiago/sipgo/sip"

	"github.com/earshot-dev/earshot/config"
)

// SIP over TLS (RFC 3261 section 26.2, RFC 5630): the door listens on
// Config.TLSListen beside UDP and TCP, with the certificate of
// Config.TLSCert and TLSKey, which Server.ReloadTLS (SIGHUP) swaps without
// touching the connections already up. Responses go back over the
// connection the request came on, and a TLS call's own requests (BYE) too:
// its dialog sends to the INVITE's source, which is that connection
// (tlsDialogs, RewriteContact), and its Contact says ;transport=tls.

// overTLS reports whether req arrived over the door's TLS transport. It
// reads the transport the SIP stack received req on, never a header the
// caller wrote (a Via of TLS over UDP is not TLS).
func overTLS(req *sipmsg.Request) bool {
	return strings.EqualFold(req.MessageData.Transport(), "TLS")
}

// sipsURI reports whether req is addressed to a sips: URI (RFC 5630): it
// must have come over TLS, and the call's Contact is sips: too.
func sipsURI(req *sipmsg.Request) bool {
	return strings.EqualFold(req.Recipient.Scheme, "sips")
}

// validateTLS checks the TLS keys without I/O.
func (c Config) validateTLS() []error {
	var errs []error
	add := func(key, format string, a ...any) { errs = append(errs, config.Errorf(key, format, a...)) }
	if c.TLSListen == "" {
		return nil
	}
	if _, _, err := net.SplitHostPort(c.TLSListen); err != nil {
		add("tls_listen", "%q is not host:port (e.g. 0.0.0.0:5061)", c.TLSListen)
	}
	if _, port, _ := net.SplitHostPort(c.TLSListen); c.TLSListen == c.Listen && port != "0" {
		add("tls_listen", "%q is listen's address too; TLS needs its own port (e.g. 5061)", c.TLSListen)
	}
	if c.TLSCert == "" {
		add("tls_cert", "required with tls_listen (a PEM certificate chain)")
	}
	if c.TLSKey == "" {
		add("tls_key", "required with tls_listen (a PEM private key)")
	}
	if c.TLSHandshakeTimeout < 100*time.Millisecond || c.TLSHandshakeTimeout > time.Minute {
		add("tls_handshake_timeout", "must be 100ms to 1m, not %s", c.TLSHandshakeTimeout)
	}
	return errs
}

// CheckTLS reads the door's certificate and key as the daemon will and
// joins what is wrong with them (a *config.Problem each): unreadable, a
// key that does not match, expired or not yet valid at now, no subject
// alternative name. Nothing when tls_listen is off.
func (c Config) CheckTLS(now time.Time) error {
	if c.TLSListen == "" || c.TLSCert == "" || c.TLSKey == "" {
		return nil
	}
	cert, err := loadCert(c.TLSCert, c.TLSKey)
	if err != nil {
		return config.Errorf("tls_cert", "with tls_key: %v", err)
	}
	leaf := cert.Leaf
	var errs []error
	for i, r := range c.Routes {
		if r.TLSClientCA == "" {
			continue
		}
		if _, err := loadClientCAs(r.TLSClientCA); err != nil {
			errs = append(errs, config.Errorf(fmt.Sprintf("routes[%d].tls_client_ca", i), "%v", err))
		}
	}
	switch {
	case now.After(leaf.NotAfter):
		errs = append(errs, config.Errorf("tls_cert", "expired %s", leaf.NotAfter.UTC().Format(time.RFC3339)))
	case now.Before(leaf.NotBefore):
		errs = append(errs, config.Errorf("tls_cert", "not valid before %s", leaf.NotBefore.UTC().Format(time.RFC3339)))
	}
	if len(leaf.DNSNames) == 0 && len(leaf.IPAddresses) == 0 && len(leaf.URIs) == 0 {
		errs = append(errs, config.Errorf("tls_cert", "has no subject alternative name (callers check the door's name or address against it)"))
	}
	return errors.Join(errs...)
}

// loadCert reads a PEM certificate chain and its key; the leaf is parsed.
func loadCert(certFile, keyFile string) (*tls.Certificate, error) {
	cert, err := tls.LoadX509KeyPair(certFile, keyFile)
	if err != nil {
		return nil, fmt.Errorf("load tls pair %s, %s: %w", certFile, keyFile, err)
	}
	if cert.Leaf == nil {
		if cert.Leaf, err = x509.ParseCertificate(cert.Certificate[0]); err != nil {
			return nil, fmt.Errorf("parse %s: %w", certFile, err)
		}
	}
	return &cert, nil
}

// certHolder serves the current certificate to handshakes; reload swaps it.
type certHolder struct {
	certFile, keyFile string
	cur               atomic.Pointer[tls.Certificate]
}

func (h *certHolder) load() error {
	cert, err := loadCert(h.certFile, h.keyFile)
	if err != nil {
		return err
	}
	h.cur.Store(cert)
	return nil
}

// tlsConfig is the door's server configuration: TLS 1.2 and later, the
// holder's certificate at each handshake; with askClient, the client is
// asked for its certificate (checked per route, mtls.go).
func (h *certHolder) tlsConfig(askClient bool) *tls.Config {
	cfg := &tls.Config{
		MinVersion: tls.VersionTLS12,
		GetCertificate: func(*tls.ClientHelloInfo) (*tls.Certificate, error) {
			return h.cur.Load(), nil
		},
	}
	if askClient {
		cfg.ClientAuth = tls.RequestClientCert
	}
	return cfg
}

// ReloadTLS reads the certificate and key files again, and each route's
// tls_client_ca; handshakes from now on present the new certificate,
// connections already up keep theirs, and INVITEs from now on are checked
// against the new CAs. A file that does not load keeps what it replaced,
// and is in the joined error. Nothing to do without tls_listen.
func (s *Server) ReloadTLS() error {
	if s.certs == nil {
		return nil
	}
	var errs []error
	if err := s.certs.load(); err != nil {
		errs = append(errs, fmt.Errorf("sip: reload tls: %w", err))
	} else {
		leaf := s.certs.cur.Load().Leaf
		s.log.Info("sip tls certificate loaded", "subject", leaf.Subject.String(),
			"not_after", leaf.NotAfter.UTC().Format(time.RFC3339))
	}
	for _, r := range s.routes {
		if r.TLSClientCA == "" {
			continue
		}
		pool, err := loadClientCAs(r.TLSClientCA)
		if err != nil {
			errs = append(errs, fmt.Errorf("sip: reload route %q tls_client_ca: %w", r.User, err))
			continue
		}
		r.clientCAs.Store(pool)
		s.log.Info("sip tls client CAs loaded", "route", r.User, "file", r.TLSClientCA)
	}
	return errors.Join(errs...)
}

// tlsListener turns ln's connections (already admitted by the tcpGuard)
// into TLS server connections whose handshake must end within timeout: a
// peer that opens a connection and never finishes (or never starts) its
// handshake holds it at most that long.
type tlsListener struct {
	net.Listener
	cfg     *tls.Config
	timeout time.Duration
	stats   *tlsStats
	peers   *tlsPeers
}

func (l tlsListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return &handshakeConn{Conn: tls.Server(c, l.cfg), timeout: l.timeout, stats: l.stats, peers: l.peers}, nil
}

// handshakeConn runs its handshake, bounded, before its first read. Only
// the SIP stack's one reading goroutine calls Read, so done needs no lock;
// a write before the handshake (none: the door answers what it read) would
// run it through tls.Conn's own lock, unbounded only by the write timeout.
type handshakeConn struct {
	*tls.Conn
	timeout time.Duration
	stats   *tlsStats
	peers   *tlsPeers
	done    bool        // the handshake succeeded; read by Read only
	peer    atomic.Bool // its client certificate is in peers
}

// Read completes the handshake first. A failed one reads as the end of
// the stream, so the SIP stack closes the connection quietly: the failure
// is counted and logged here.
func (c *handshakeConn) Read(b []byte) (int, error) {
	if !c.done {
		ctx, cancel := context.WithTimeout(context.Background(), c.timeout)
		err := c.HandshakeContext(ctx) // on timeout, closes the connection
		cancel()
		if err != nil {
			c.stats.failed(c.RemoteAddr(), err)
			return 0, io.EOF
		}
		c.done = true
		c.stats.completed.Add(1)
		if certs := c.ConnectionState().PeerCertificates; len(certs) > 0 && c.peers != nil {
			c.peers.set(c.RemoteAddr(), certs)
			c.peer.Store(true)
		}
	}
	return c.Conn.Read(b)
}

// Close forgets the connection's client certificate and closes it. A
// connection already closed (a handshake that timed out is closed by
// crypto/tls) closes without error: the SIP stack logs each error of
// Close at warn level, a line per connection of a flood.
func (c *handshakeConn) Close() error {
	if c.peer.CompareAndSwap(true, false) {
		c.peers.forget(c.RemoteAddr())
	}
	if err := c.Conn.Close(); !errors.Is(err, net.ErrClosed) {
		return err
	}
	return nil
}

// tlsStats counts the door's TLS handshakes and logs failures at most
// once per capLogEvery.
type tlsStats struct {
	log       *slog.Logger
	completed atomic.Uint64
	failures  atomic.Uint64

	mu      sync.Mutex
	lastLog time.Time // guarded by mu
	since   int       // guarded by mu: failures since the last line
}

func (t *tlsStats) failed(addr net.Addr, err error) {
	t.failures.Add(1)
	t.mu.Lock()
	defer t.mu.Unlock()
	t.since++
	if time.Since(t.lastLog) < capLogEvery {
		return
	}
	t.log.Warn("sip tls handshake failed; connection closed", "remote_addr", addrOf(addr).String(),
		"error", err, "failed", t.since, "window", capLogEvery.String())
	t.lastLog, t.since = time.Now(), 0
}

// TLSHandshakes counts the TLS door's handshakes that completed and those
// that failed or timed out (their connections closed).
func (s *Server) TLSHandshakes() (completed, failed uint64) {
	return s.tlsStats.completed.Load(), s.tlsStats.failures.Load()
}
