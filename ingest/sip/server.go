package sip

import (
	"context"
	"crypto/x509"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/netip"
	"runtime/debug"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/emiago/sipgo"
	sipmsg "github.com/emiago/sipgo/sip"

	"github.com/earshot-dev/earshot/ingest"
	"github.com/earshot-dev/earshot/ingest/rtp"
	"github.com/earshot-dev/earshot/internal/acceptloop"
)

// Opener opens a live session for a call; the daemon implements it.
type Opener interface {
	OpenLive(ctx context.Context, req ingest.LiveRequest) (ingest.Session, error)
}

// route is a configured route, parsed.
type route struct {
	Route
	nets   []netip.Prefix
	active int // guarded by Server.mu

	// clientCAs pin the route's callers' TLS certificates; nil: not
	// pinned (mtls.go). ReloadTLS swaps them.
	clientCAs atomic.Pointer[x509.CertPool]
}

// Server is the SIP door. New provisions it, Run serves bound sockets
// until its context ends, Close is a no-op kept for the lifecycle.
type Server struct {
	cfg       Config
	opener    Opener
	dtlsID    *dtlsIdentity // the door's DTLS-SRTP certificate
	log       *slog.Logger
	rtpLog    *slog.Logger
	allow     []netip.Prefix
	filter    *sourceFilter // refused sources beyond their allowance are dropped unread
	tcp       *tcpGuard     // bounds TCP and TLS connections (conns.go)
	certs     *certHolder   // the TLS door's certificate; nil without tls_listen (tls.go)
	tlsStats  *tlsStats
	auth      *authGate // digest authentication of routes with auth (auth.go)
	peers     *tlsPeers // client certificates of open TLS connections (mtls.go)
	routes    []*route
	ports     *rtp.Ports
	advertise netip.Addr

	// askClientCert: a route pins its callers' certificates, so TLS
	// handshakes ask for one.
	askClientCert bool

	// Set by Run before serving, read-only after.
	base        context.Context
	dialogs     *sipgo.DialogUA
	tlsDialogs  *sipgo.DialogUA // calls over TLS: Contact ;transport=tls, requests over their connection
	sipsDialogs *sipgo.DialogUA // calls to a sips: URI (over TLS): Contact sips:, requests over their connection
	contact     sipmsg.ContactHeader

	mu      sync.Mutex
	calls   map[string]*call // guarded by mu: by dialog id
	active  int              // guarded by mu: calls set up or running
	closing bool             // guarded by mu: Run is shutting down
	wg      sync.WaitGroup   // call goroutines; Add only under mu while !closing

	// RTP totals of ended calls, every stream summed.
	rtpReleased atomic.Uint64 // packets played out
	rtpLost     atomic.Uint64 // sequence numbers never received
	rtpForeign  atomic.Uint64 // RTP packets dropped for their source
	rtpLatched  atomic.Uint64 // streams latched onto a source not in their SDP
	silentCalls atomic.Uint64 // calls that took no RTP at all
	srtpRefused atomic.Uint64 // INVITEs refused (488) by the route's SRTP policy
	srtpAuth    atomic.Uint64 // SRTP and SRTCP packets that did not authenticate
	srtpReplay  atomic.Uint64 // SRTP and SRTCP packets dropped as replays
	dtmfDropped atomic.Uint64 // DTMF keys past their call's bound (floods)
}

// New checks cfg (after SetDefaults) and prepares the door; it binds
// nothing and starts nothing. log may be nil.
func New(cfg Config, opener Opener, log *slog.Logger) (*Server, error) {
	cfg.SetDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if opener == nil {
		return nil, errors.New("sip: no live session opener")
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	s := &Server{cfg: cfg, opener: opener, log: log.With("component", "sip"), rtpLog: log.With("component", "rtp"), calls: map[string]*call{}}
	s.allow, _ = parseNets(cfg.Allow)
	s.filter = newSourceFilter(s.allow, s.log)
	s.tcp = newTCPGuard(cfg, s.filter, s.log)
	s.tlsStats = &tlsStats{log: s.log}
	s.auth = newAuthGate(cfg.AuthMaxFailures, s.log)
	s.peers = &tlsPeers{certs: map[string][]*x509.Certificate{}}
	id, err := newDTLSIdentity()
	if err != nil {
		return nil, err
	}
	s.dtlsID = id
	if cfg.TLSListen != "" {
		s.certs = &certHolder{certFile: cfg.TLSCert, keyFile: cfg.TLSKey}
		if err := s.certs.load(); err != nil {
			return nil, fmt.Errorf("sip: %w", err)
		}
	}
	for _, r := range cfg.Routes {
		nets, _ := parseNets(r.Source)
		rt := &route{Route: r, nets: nets} // r.live: decoded at load, checked by Validate
		if r.TLSClientCA != "" {
			pool, err := loadClientCAs(r.TLSClientCA)
			if err != nil {
				return nil, fmt.Errorf("sip: route %q: tls_client_ca: %w", r.User, err)
			}
			rt.clientCAs.Store(pool)
			s.askClientCert = true
		}
		s.routes = append(s.routes, rt)
	}
	bind := netip.IPv4Unspecified()
	if host, _, err := net.SplitHostPort(cfg.Listen); err == nil {
		if a, err := netip.ParseAddr(host); err == nil {
			bind = a.Unmap()
		}
	}
	s.advertise = advertiseIP(cfg.AdvertiseIP, bind)
	lo, hi, _ := parsePorts(cfg.RTPPorts)
	ports, err := rtp.NewPorts(bind, lo, hi)
	if err != nil {
		return nil, err
	}
	s.ports = ports
	return s, nil
}

// advertiseIP is the configured address, else the listen address if
// specified, else the first up non-loopback interface address.
func advertiseIP(cfg string, bind netip.Addr) netip.Addr {
	if a, err := netip.ParseAddr(cfg); err == nil {
		return a.Unmap()
	}
	if bind.IsValid() && !bind.IsUnspecified() {
		return bind
	}
	ifs, _ := net.Interfaces()
	for _, ifc := range ifs {
		if ifc.Flags&net.FlagUp == 0 || ifc.Flags&net.FlagLoopback != 0 {
			continue
		}
		addrs, _ := ifc.Addrs()
		for _, a := range addrs {
			if n, ok := a.(*net.IPNet); ok {
				if ip, ok := netip.AddrFromSlice(n.IP); ok && ip.Unmap().Is4() {
					return ip.Unmap()
				}
			}
		}
	}
	return netip.MustParseAddr("127.0.0.1")
}

// Sockets are the door's bound sockets; any may be nil, not all.
type Sockets struct {
	UDP net.PacketConn
	TCP net.Listener // plain TCP, as Listen binds it beside UDP
	TLS net.Listener // plain TCP too: the door runs TLS over it (sip.tls_listen)
}

// Run serves SIP on the bound sockets until ctx ends; then it hangs up
// every call (BYE), finalises their sessions and returns nil. The sockets
// are closed on return.
func (s *Server) Run(ctx context.Context, socks Sockets) error {
	udp, tcp, tlsLn := socks.UDP, socks.TCP, socks.TLS
	if udp == nil && tcp == nil && tlsLn == nil {
		return errors.New("sip: no socket to serve")
	}
	if tlsLn != nil && s.certs == nil {
		return errors.New("sip: a tls socket without sip.tls_listen's certificate")
	}
	slogger := s.log
	ua, err := sipgo.NewUA(sipgo.WithUserAgent("earshot"),
		sipgo.WithUserAgentTransportLayerOptions(sipmsg.WithTransportLayerLogger(slogger)),
		sipgo.WithUserAgentTransactionLayerOptions(sipmsg.WithTransactionLayerLogger(slogger)))
	if err != nil {
		return fmt.Errorf("sip: user agent: %w", err)
	}
	srv, err := sipgo.NewServer(ua, sipgo.WithServerLogger(slogger))
	if err != nil {
		ua.Close()
		return fmt.Errorf("sip: server: %w", err)
	}
	client, err := sipgo.NewClient(ua, sipgo.WithClientLogger(slogger))
	if err != nil {
		ua.Close()
		return fmt.Errorf("sip: client: %w", err)
	}
	port := 5060
	var addrs []string
	if udp != nil {
		port = udpPort(udp.LocalAddr())
		addrs = append(addrs, udp.LocalAddr().String())
	}
	if tcp != nil {
		if udp == nil {
			port = udpPort(tcp.Addr())
		}
		addrs = append(addrs, tcp.Addr().String())
	}
	s.base = ctx
	s.contact = sipmsg.ContactHeader{Address: sipmsg.Uri{Scheme: "sip", User: "earshot", Host: s.advertise.String(), Port: port}}
	s.dialogs = &sipgo.DialogUA{Client: client, ContactHDR: s.contact}
	if tlsLn != nil {
		addrs = append(addrs, tlsLn.Addr().String())
		params := sipmsg.NewParams()
		params.Add("transport", "tls")
		contact := sipmsg.ContactHeader{Address: sipmsg.Uri{Scheme: "sip", User: "earshot", Host: s.advertise.String(),
			Port: udpPort(tlsLn.Addr()), UriParams: params}}
		// RewriteContact: a TLS call's BYE goes to the INVITE's source, the
		// connection it came over, not to a new connection to its Contact.
		s.tlsDialogs = &sipgo.DialogUA{Client: client, ContactHDR: contact, RewriteContact: true}
		sips := sipmsg.ContactHeader{Address: sipmsg.Uri{Scheme: "sips", User: "earshot", Host: s.advertise.String(),
			Port: udpPort(tlsLn.Addr())}}
		s.sipsDialogs = &sipgo.DialogUA{Client: client, ContactHDR: sips, RewriteContact: true}
	}
	srv.OnInvite(s.guard(s.onInvite))
	srv.OnAck(s.guard(s.onAck))
	srv.OnBye(s.guard(s.onBye))
	srv.OnCancel(s.guard(s.onCancel))
	srv.OnOptions(s.guard(s.onOptions))
	srv.OnUpdate(s.guard(s.onUpdate))
	srv.OnInfo(s.guard(s.onInfo))

	var serving sync.WaitGroup
	if udp != nil {
		serving.Go(func() { srv.ServeUDP(filteredConn{udp, s.filter}) })
	}
	if tcp != nil {
		serving.Go(func() { srv.ServeTCP(s.tcp.listener(acceptloop.New(tcp, "sip tcp", s.log))) })
	}
	if tlsLn != nil {
		ln := tlsListener{Listener: s.tcp.listener(acceptloop.New(tlsLn, "sip tls", s.log)),
			cfg: s.certs.tlsConfig(s.askClientCert), timeout: s.cfg.TLSHandshakeTimeout, stats: s.tlsStats, peers: s.peers}
		serving.Go(func() { srv.ServeTLS(ln) })
	}
	attrs := []any{"addr", addrs[0], "addrs", addrs, "advertise", s.advertise.String(), "rtp_ports", s.cfg.RTPPorts}
	if tlsLn != nil {
		attrs = append(attrs, "tls_addr", tlsLn.Addr().String())
	}
	s.log.Info("sip listening", attrs...)
	<-ctx.Done()

	s.mu.Lock()
	s.closing = true
	s.mu.Unlock()
	s.wg.Wait() // calls hang up through the still-running transport
	ua.Close()
	if udp != nil {
		udp.Close()
	}
	if tcp != nil {
		tcp.Close()
	}
	if tlsLn != nil {
		tlsLn.Close()
	}
	serving.Wait()
	s.log.Info("sip stopped")
	return nil
}

// Close releases nothing more than Run does; it exists for the New, Run,
// Close lifecycle and is safe to call at any time.
func (s *Server) Close() error { return nil }

// TCPConns is how many TCP connections the door holds open.
func (s *Server) TCPConns() int { return s.tcp.Open() }

// Refused is how many datagrams and TCP connections from sources outside
// sip.allow were dropped unread (beyond each source's few answered 403s).
func (s *Server) Refused() uint64 { return s.filter.Dropped() }

// RTPTotals sums the RTP packets played out and lost (never received,
// concealed with silence) over every stream of every ended call.
func (s *Server) RTPTotals() (released, lost uint64) {
	return s.rtpReleased.Load(), s.rtpLost.Load()
}

// SourceTotals counts, over every ended call: RTP packets dropped because
// of their source, streams that latched onto a source other than their
// SDP's, and calls that took no RTP at all.
func (s *Server) SourceTotals() (foreign, latched, silent uint64) {
	return s.rtpForeign.Load(), s.rtpLatched.Load(), s.silentCalls.Load()
}

// DTMFDropped counts the DTMF keys (RFC 4733 events, INFO requests) of
// ended calls dropped past their call's bound (ingest.KeyLimiter).
func (s *Server) DTMFDropped() uint64 { return s.dtmfDropped.Load() }

// SRTPTotals counts INVITEs refused with 488 by their route's SRTP policy
// (or a re-offer's keys) and, over every ended call, SRTP and SRTCP
// packets dropped because they did not authenticate or were replays.
func (s *Server) SRTPTotals() (refused, authFailed, replayed uint64) {
	return s.srtpRefused.Load(), s.srtpAuth.Load(), s.srtpReplay.Load()
}

// Calls is how many calls are being set up or running.
func (s *Server) Calls() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.active
}

// dialogsFor is the dialog agent of a call whose INVITE is req.
func (s *Server) dialogsFor(req *sipmsg.Request) *sipgo.DialogUA {
	if s.tlsDialogs != nil && overTLS(req) {
		if sipsURI(req) {
			return s.sipsDialogs
		}
		return s.tlsDialogs
	}
	return s.dialogs
}

func udpPort(a net.Addr) int {
	if ap, err := netip.ParseAddrPort(a.String()); err == nil {
		return int(ap.Port())
	}
	return 5060
}

// guard confines a panic to one request: logged with its stack, answered
// 500 when possible.
func (s *Server) guard(h sipgo.RequestHandler) sipgo.RequestHandler {
	return func(req *sipmsg.Request, tx sipmsg.ServerTransaction) {
		defer func() {
			if v := recover(); v != nil {
				s.log.Error("sip handler panic", "error", fmt.Sprint(v), "stack", string(debug.Stack()))
				if tx != nil && !req.IsAck() {
					tx.Respond(sipmsg.NewResponseFromRequest(req, 500, "Server Internal Error", nil))
				}
			}
		}()
		h(req, tx)
	}
}

// source is the request's transport source address.
func source(req *sipmsg.Request) netip.Addr {
	ap, err := netip.ParseAddrPort(req.Source())
	if err != nil {
		return netip.Addr{}
	}
	return ap.Addr().Unmap()
}

func (s *Server) respond(req *sipmsg.Request, tx sipmsg.ServerTransaction, code int, reason string) {
	if tx == nil {
		return
	}
	if err := tx.Respond(sipmsg.NewResponseFromRequest(req, code, reason, nil)); err != nil {
		s.log.Debug("sip respond failed", "status", code, "error", err)
	}
}

// respondErr refuses req with err's status and headers (reply,
// replyHeaders).
func (s *Server) respondErr(req *sipmsg.Request, tx sipmsg.ServerTransaction, err error) {
	if tx == nil {
		return
	}
	code, reason := reply(err)
	res := sipmsg.NewResponseFromRequest(req, code, reason, nil)
	for _, h := range replyHeaders(err) {
		res.AppendHeader(h)
	}
	if err := tx.Respond(res); err != nil {
		s.log.Debug("sip respond failed", "status", code, "error", err)
	}
}

// onOptions answers probes (a proxy's keepalive, e.g. Kamailio's
// dispatcher): 200 while the door takes calls, 503 once it is shutting
// down, so the proxy sends new calls elsewhere. A node with no free live
// capacity still answers 200: it is up, and refuses each INVITE with 503.
func (s *Server) onOptions(req *sipmsg.Request, tx sipmsg.ServerTransaction) {
	if !inNets(s.allow, source(req)) {
		s.respondErr(req, tx, ErrForbidden)
		return
	}
	s.mu.Lock()
	closing := s.closing
	s.mu.Unlock()
	if closing {
		s.respondErr(req, tx, errShuttingDown)
		return
	}
	res := sipmsg.NewResponseFromRequest(req, 200, "OK", nil)
	res.AppendHeader(sipmsg.NewHeader("Allow", "INVITE, ACK, BYE, CANCEL, OPTIONS, UPDATE, INFO"))
	res.AppendHeader(sipmsg.NewHeader("Accept", "application/sdp, multipart/mixed, application/rs-metadata+xml"))
	tx.Respond(res)
}

func (s *Server) onCancel(req *sipmsg.Request, tx sipmsg.ServerTransaction) {
	// A CANCEL matching a pending INVITE is answered by the transaction
	// layer (200, then 487 to the INVITE); one reaching here matched none.
	s.respond(req, tx, 481, "Call/Transaction Does Not Exist")
}

func (s *Server) onAck(req *sipmsg.Request, tx sipmsg.ServerTransaction) {
	if c := s.lookup(req); c != nil {
		c.dlg.ReadAck(req, tx) // an ACK of a re-INVITE does not match; harmless
	}
}

func (s *Server) onBye(req *sipmsg.Request, tx sipmsg.ServerTransaction) {
	c := s.inDialog(req, tx)
	if c == nil {
		return
	}
	if err := c.dlg.ReadBye(req, tx); err != nil {
		s.respond(req, tx, 400, "Bad Request")
		return
	}
	c.hangup(errRemoteBye)
}

// onUpdate takes session refreshes (RFC 4028) and, with a body, an offer
// like a re-INVITE's.
func (s *Server) onUpdate(req *sipmsg.Request, tx sipmsg.ServerTransaction) {
	if c := s.bodyInDialog(req, tx); c != nil {
		c.reinvite(req, tx)
	}
}

// inDialog is the call of an in-dialog request; nil (answered 481) for an
// unknown dialog.
func (s *Server) inDialog(req *sipmsg.Request, tx sipmsg.ServerTransaction) *call {
	c := s.lookup(req)
	if c == nil {
		s.respond(req, tx, 481, "Call/Transaction Does Not Exist")
	}
	return c
}

// bodyInDialog is inDialog for a request whose body is its point (UPDATE,
// INFO): one without a body is a keep-alive, answered 200, and nil too.
func (s *Server) bodyInDialog(req *sipmsg.Request, tx sipmsg.ServerTransaction) *call {
	c := s.inDialog(req, tx)
	if c != nil && len(req.Body()) == 0 {
		s.respond(req, tx, 200, "OK")
		return nil
	}
	return c
}

func (s *Server) lookup(req *sipmsg.Request) *call {
	id, err := sipmsg.DialogIDFromRequestUAS(req)
	if err != nil {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.calls[id]
}

// match finds the first route for the request-URI user and source.
func (s *Server) match(user string, src netip.Addr) *route {
	for _, r := range s.routes {
		if r.User != "*" && !strings.EqualFold(r.User, user) {
			continue
		}
		if len(r.nets) > 0 && !inNets(r.nets, src) {
			continue
		}
		return r
	}
	return nil
}

// reserve takes a call slot on the door and the route.
func (s *Server) reserve(r *route) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case s.closing:
		return errShuttingDown
	case s.active >= s.cfg.MaxCalls:
		return fmt.Errorf("%w: %d calls, max_calls %d", ingest.ErrAtCapacity, s.active, s.cfg.MaxCalls)
	case r.MaxCalls > 0 && r.active >= r.MaxCalls:
		return fmt.Errorf("%w: route %q has %d calls, max_calls %d", ErrBusy, r.User, r.active, r.MaxCalls)
	}
	s.active++
	r.active++
	return nil
}

func (s *Server) release(r *route) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.active--
	r.active--
}

// start registers a call and runs it; false when the server is closing.
func (s *Server) start(c *call) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closing {
		return false
	}
	s.calls[c.id] = c
	s.wg.Go(c.run)
	return true
}

func (s *Server) remove(c *call) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.calls, c.id)
}
