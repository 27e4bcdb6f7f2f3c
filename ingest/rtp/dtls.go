package rtp

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"strings"
	"sync"
	"time"

	"github.com/pion/dtls/v3"
	"github.com/pion/dtls/v3/pkg/crypto/fingerprint"
	"github.com/pion/srtp/v3"
)

// DTLS-SRTP (RFC 5763, 5764): the peer and the door agree the stream's
// SRTP keys in a DTLS handshake on the stream's own port, the peer's
// certificate proven by the a=fingerprint of its SDP. The handshake shares
// the port with the media (rtcp-mux; RFC 7983 tells the packets apart by
// their first byte: 20 to 63 is DTLS) and runs in a goroutine of Run's
// with pion/dtls over a packet conn fed by the stream's reader. Until it
// is done the stream takes no media; once done its keys are installed
// like a re-INVITE's (Rekey) and the stream is SRTP as with SDES.

// DTLS is a stream's DTLS-SRTP setup.
type DTLS struct {
	// Certificate is the door's, whose fingerprint its answer carries.
	Certificate tls.Certificate
	// Fingerprint is the peer's a=fingerprint: the hash (sha-256...) and
	// the digest as the SDP writes it (hex pairs joined by colons).
	Fingerprint Fingerprint
	// Client says the door opens the handshake, to the stream's Remote
	// (the offer said a=setup:passive); otherwise the peer does (actpass
	// or active) and the door answers the first DTLS datagram's source.
	Client bool
	// Timeout bounds one handshake attempt; default 10 s.
	Timeout time.Duration
}

// Fingerprint is a certificate fingerprint as SDP carries it (RFC 8122).
type Fingerprint struct {
	Hash   string // "sha-256", "sha-1", "sha-384", "sha-512"
	Digest string // "AB:CD:..."
}

// ParseFingerprint reads an a=fingerprint value ("sha-256 AB:CD:...").
func ParseFingerprint(v string) (Fingerprint, error) {
	if len(v) > 256 {
		return Fingerprint{}, fmt.Errorf("rtp: a=fingerprint of %d bytes", len(v))
	}
	h, d, ok := strings.Cut(strings.TrimSpace(v), " ")
	if !ok {
		return Fingerprint{}, errors.New("rtp: a=fingerprint without a digest")
	}
	algo, err := fingerprint.HashFromString(strings.ToLower(h))
	if err != nil {
		return Fingerprint{}, fmt.Errorf("rtp: a=fingerprint hash %q is not one of sha-1, sha-224, sha-256, sha-384, sha-512", clipName(h))
	}
	d = strings.ToUpper(strings.TrimSpace(d))
	if len(d) != algo.Size()*3-1 {
		return Fingerprint{}, fmt.Errorf("rtp: a=fingerprint digest of %d characters, want %d for %s", len(d), algo.Size()*3-1, strings.ToLower(h))
	}
	for i, c := range d {
		if i%3 == 2 && c != ':' || i%3 != 2 && !strings.ContainsRune("0123456789ABCDEF", c) {
			return Fingerprint{}, errors.New("rtp: a=fingerprint digest is not hex pairs joined by colons")
		}
	}
	return Fingerprint{Hash: strings.ToLower(h), Digest: d}, nil
}

func clipName(s string) string {
	if len(s) > 16 {
		return s[:16] + "..."
	}
	return s
}

// CertificateFingerprint is cert's sha-256 fingerprint, for an answer's
// a=fingerprint.
func CertificateFingerprint(cert tls.Certificate) (Fingerprint, error) {
	if len(cert.Certificate) == 0 {
		return Fingerprint{}, errors.New("rtp: DTLS certificate is empty")
	}
	x, err := x509.ParseCertificate(cert.Certificate[0])
	if err != nil {
		return Fingerprint{}, err
	}
	hash, _ := fingerprint.HashFromString("sha-256")
	d, err := fingerprint.Fingerprint(x, hash)
	if err != nil {
		return Fingerprint{}, err
	}
	return Fingerprint{Hash: "sha-256", Digest: strings.ToUpper(d)}, nil
}

// matches reports whether the peer's certificate chain starts with a
// certificate of fingerprint f.
func (f Fingerprint) matches(raw [][]byte) error {
	if len(raw) == 0 {
		return errors.New("rtp: DTLS peer sent no certificate")
	}
	x, err := x509.ParseCertificate(raw[0])
	if err != nil {
		return fmt.Errorf("rtp: DTLS peer certificate: %w", err)
	}
	hash, err := fingerprint.HashFromString(f.Hash)
	if err != nil {
		return err
	}
	d, err := fingerprint.Fingerprint(x, hash)
	if err != nil {
		return err
	}
	if !strings.EqualFold(d, f.Digest) {
		return errors.New("rtp: DTLS peer certificate does not match the SDP's a=fingerprint")
	}
	return nil
}

// isDTLS tells a DTLS record from RTP, RTCP and STUN (RFC 7983).
func isDTLS(b []byte) bool { return len(b) > 0 && b[0] >= 20 && b[0] <= 63 }

// maxDTLSAttempts bounds the handshakes a stream starts: one that fails
// (a stranger's ClientHello first, a wrong certificate) lets the next
// source try, up to this many.
const maxDTLSAttempts = 4

// dtlsLink carries one stream's DTLS datagrams from its reader to the
// handshake. Datagrams beyond its queue are dropped (DTLS retransmits).
type dtlsLink struct {
	cfg    DTLS
	sock   *net.UDPConn
	remote netip.AddrPort // the SDP's address: where a client handshake goes
	in     chan datagram
	done   chan struct{} // closed when Run ends

	mu     sync.Mutex
	closed bool

	// held is media that came before the keys, owned by Run: the peer
	// may send its first SRTP packets before the door's side of the
	// handshake is done (the side that finishes first starts sending).
	// At most maxHeldMedia are kept; they are decrypted once the keys are
	// in, the rest dropped.
	held []input
}

// maxHeldMedia bounds the packets held for the keys: a second of 20 ms
// packets.
const maxHeldMedia = 50

// hold keeps a packet that came before the keys, or drops it (counted).
func (l *dtlsLink) hold(in input, stats *StreamStats) {
	if len(l.held) >= maxHeldMedia {
		stats.Dropped++
		return
	}
	l.held = append(l.held, in)
}

// replayHeld handles the packets streams held for their DTLS keys, once
// the keys are in; Run's goroutine.
func (r *Receiver) replayHeld() {
	for _, s := range r.streams {
		if s.dtls == nil || s.srtp == nil || len(s.dtls.held) == 0 {
			continue
		}
		held := s.dtls.held
		s.dtls.held = nil
		for _, in := range held {
			r.handle(in)
		}
	}
}

type datagram struct {
	b    []byte
	from netip.AddrPort
}

func newDTLSLink(cfg DTLS, sock *net.UDPConn, remote netip.AddrPort) *dtlsLink {
	if cfg.Timeout <= 0 {
		cfg.Timeout = 10 * time.Second
	}
	return &dtlsLink{cfg: cfg, sock: sock, remote: remote, in: make(chan datagram, 32), done: make(chan struct{})}
}

// deliver hands the reader's DTLS datagram to the handshake, never
// blocking.
func (l *dtlsLink) deliver(b []byte, from netip.AddrPort) {
	select {
	case l.in <- datagram{b, from}:
	default:
	}
}

func (l *dtlsLink) close() {
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.closed {
		l.closed = true
		close(l.done)
	}
}

// handshake runs until keys are agreed, maxDTLSAttempts fail, or ctx ends;
// it then keeps answering the peer's DTLS (retransmissions, alerts) until
// ctx ends. It returns the stream's SRTP keys, or why there are none.
func (l *dtlsLink) handshake(ctx context.Context) (*SRTP, error) {
	var errs []error
	for range maxDTLSAttempts {
		keys, conn, err := l.attempt(ctx)
		if err == nil {
			go func() {
				<-ctx.Done()
				conn.Close()
			}()
			go drainDTLS(conn)
			return keys, nil
		}
		errs = append(errs, err)
		if ctx.Err() != nil {
			break
		}
	}
	return nil, errors.Join(errs...)
}

// drainDTLS reads what the peer sends after the handshake (application
// data is none of the door's business) until the conn closes.
func drainDTLS(c *dtls.Conn) {
	buf := make([]byte, 1500)
	for {
		if _, err := c.Read(buf); err != nil {
			return
		}
	}
}

func (l *dtlsLink) attempt(ctx context.Context) (*SRTP, *dtls.Conn, error) {
	peer := l.remote
	var first *datagram
	if !l.cfg.Client {
		select {
		case d := <-l.in:
			peer, first = d.from, &d
		case <-ctx.Done():
			return nil, nil, ctx.Err()
		}
	}
	pc := &dtlsConn{link: l, peer: peer, first: first}
	shared := []dtls.Option{
		dtls.WithCertificates(l.cfg.Certificate),
		dtls.WithSRTPProtectionProfiles(dtls.SRTP_AEAD_AES_128_GCM, dtls.SRTP_AES128_CM_HMAC_SHA1_80, dtls.SRTP_AES128_CM_HMAC_SHA1_32),
		dtls.WithInsecureSkipVerify(true), // self-signed: the fingerprint is the proof
		dtls.WithExtendedMasterSecret(dtls.RequestExtendedMasterSecret),
		dtls.WithVerifyPeerCertificate(func(raw [][]byte, _ [][]*x509.Certificate) error {
			return l.cfg.Fingerprint.matches(raw)
		}),
	}
	var conn *dtls.Conn
	var err error
	if l.cfg.Client {
		opts := make([]dtls.ClientOption, 0, len(shared))
		for _, o := range shared {
			opts = append(opts, o)
		}
		conn, err = dtls.ClientWithOptions(pc, net.UDPAddrFromAddrPort(peer), opts...)
	} else {
		opts := []dtls.ServerOption{dtls.WithClientAuth(dtls.RequireAnyClientCert)}
		for _, o := range shared {
			opts = append(opts, o)
		}
		conn, err = dtls.ServerWithOptions(pc, net.UDPAddrFromAddrPort(peer), opts...)
	}
	if err != nil {
		return nil, nil, fmt.Errorf("rtp: dtls: %w", err)
	}
	hctx, cancel := context.WithTimeout(ctx, l.cfg.Timeout)
	defer cancel()
	if err := conn.HandshakeContext(hctx); err != nil {
		conn.Close()
		return nil, nil, fmt.Errorf("rtp: dtls handshake with %s: %w", peer, err)
	}
	keys, err := srtpKeys(conn, l.cfg.Client)
	if err != nil {
		conn.Close()
		return nil, nil, err
	}
	return keys, conn, nil
}

// srtpKeys derives the stream's SRTP keys from a finished handshake (RFC
// 5764 section 4.2): the client's key protects what the client sends.
func srtpKeys(conn *dtls.Conn, isClient bool) (*SRTP, error) {
	p, ok := conn.SelectedSRTPProtectionProfile()
	if !ok {
		return nil, errors.New("rtp: dtls: no SRTP protection profile agreed (use_srtp)")
	}
	suite := suiteOf(srtp.ProtectionProfile(p))
	if suite == SuiteNone {
		return nil, fmt.Errorf("rtp: dtls: SRTP profile %#x is not taken", uint16(p))
	}
	state, ok := conn.ConnectionState()
	if !ok {
		return nil, errors.New("rtp: dtls: no connection state")
	}
	c := srtp.Config{Profile: suite.profile()}
	if err := c.ExtractSessionKeysFromDTLS(&state, isClient); err != nil {
		return nil, fmt.Errorf("rtp: dtls: keys: %w", err)
	}
	k := c.Keys
	return &SRTP{
		Remote: SRTPKey{Suite: suite, Key: append(append([]byte(nil), k.RemoteMasterKey...), k.RemoteMasterSalt...)},
		Local:  SRTPKey{Suite: suite, Key: append(append([]byte(nil), k.LocalMasterKey...), k.LocalMasterSalt...)},
	}, nil
}

func suiteOf(p srtp.ProtectionProfile) Suite {
	for _, e := range suites {
		if e.profile == p {
			return e.suite
		}
	}
	return SuiteNone
}

// dtlsConn is the net.PacketConn pion/dtls runs over: it reads the
// datagrams the stream's reader delivered from the peer (others are
// dropped) and writes to the stream's socket.
type dtlsConn struct {
	link  *dtlsLink
	peer  netip.AddrPort
	first *datagram

	mu       sync.Mutex
	deadline time.Time
}

func (c *dtlsConn) ReadFrom(p []byte) (int, net.Addr, error) {
	if d := c.first; d != nil {
		c.first = nil
		return copy(p, d.b), net.UDPAddrFromAddrPort(d.from), nil
	}
	for {
		d, err := c.next()
		if err != nil {
			return 0, nil, err
		}
		if d.from == c.peer || c.link.cfg.Client && c.peer.Addr() == d.from.Addr() {
			return copy(p, d.b), net.UDPAddrFromAddrPort(d.from), nil
		}
		// Another source: not this handshake's.
	}
}

// next waits for the link's next datagram until the read deadline.
func (c *dtlsConn) next() (datagram, error) {
	c.mu.Lock()
	dl := c.deadline
	c.mu.Unlock()
	var timeout <-chan time.Time
	if !dl.IsZero() {
		t := time.NewTimer(time.Until(dl))
		defer t.Stop()
		timeout = t.C
	}
	select {
	case d := <-c.link.in:
		return d, nil
	case <-timeout:
		return datagram{}, timeoutError{}
	case <-c.link.done:
		return datagram{}, net.ErrClosed
	}
}

func (c *dtlsConn) WriteTo(p []byte, _ net.Addr) (int, error) {
	return c.link.sock.WriteToUDPAddrPort(p, c.peer)
}

func (c *dtlsConn) Close() error        { return nil } // the socket is the stream's
func (c *dtlsConn) LocalAddr() net.Addr { return c.link.sock.LocalAddr() }
func (c *dtlsConn) SetDeadline(t time.Time) error {
	return c.SetReadDeadline(t)
}
func (c *dtlsConn) SetReadDeadline(t time.Time) error {
	c.mu.Lock()
	c.deadline = t
	c.mu.Unlock()
	return nil
}
func (c *dtlsConn) SetWriteDeadline(time.Time) error { return nil }

// timeoutError is a read deadline passing, as net.Error.
type timeoutError struct{}

func (timeoutError) Error() string   { return "rtp: dtls read timeout" }
func (timeoutError) Timeout() bool   { return true }
func (timeoutError) Temporary() bool { return true }

// handshake runs stream's DTLS-SRTP handshake and installs its keys.
func (r *Receiver) handshake(ctx context.Context, stream int, l *dtlsLink) {
	keys, err := l.handshake(ctx)
	if err != nil {
		if ctx.Err() == nil {
			r.log.Warn("dtls-srtp handshake failed", "channel", stream, "error", err)
		}
		return
	}
	if err := r.Rekey(stream, keys); err != nil {
		r.log.Warn("dtls-srtp keys refused", "channel", stream, "error", err)
		return
	}
	r.log.Info("dtls-srtp established", "channel", stream, "srtp", keys.Remote.Suite.String())
}
