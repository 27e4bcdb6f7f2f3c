package sip

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"net/netip"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/emiago/sipgo"
	sipmsg "github.com/emiago/sipgo/sip"

	"github.com/earshot-dev/earshot/ingest"
	"github.com/earshot-dev/earshot/ingest/codec"
	"github.com/earshot-dev/earshot/ingest/rtp"
)

// Why a call ended, as its context's cause.
var (
	errRemoteBye    = errors.New("sip: remote hung up")
	errNoAck        = errors.New("sip: answer not acknowledged")
	errSessionEnded = errors.New("sip: live session ended")
	errShuttingDown = fmt.Errorf("%w: shutting down", ingest.ErrAtCapacity)
)

// call is one answered call. Its context is its lifetime: cancelled by
// BYE, a lost answer, the session's end or shutdown; run then ends the
// session exactly once.
type call struct {
	s      *Server
	id     string // dialog id
	callID string
	log    *slog.Logger
	dlg    *sipgo.DialogServerSession
	route  *route
	sess   ingest.Session
	recv   *rtp.Receiver
	pairs  []*rtp.Pair
	codec  codec.Codec
	keys   []*rtp.SRTPKey // the door's SRTP key of each stream, nil when plain
	policy mediaPolicy    // the route's SRTP policy over the INVITE's transport
	// keyLimit bounds the call's DTMF keys, RTP events and INFO alike.
	keyLimit ingest.KeyLimiter
	labels   []string
	ctx      context.Context
	cancel   context.CancelCauseFunc

	sessID  uint64
	version atomic.Uint64

	mu    sync.Mutex // serialises re-INVITEs
	offer *offer     // guarded by mu: the last accepted offer
}

// onInvite answers a new call, or passes an in-dialog INVITE to its call.
func (s *Server) onInvite(req *sipmsg.Request, tx sipmsg.ServerTransaction) {
	src := source(req)
	if !inNets(s.allow, src) {
		s.log.Info("sip call refused", "remote_addr", src.String(), "status", 403)
		s.respondErr(req, tx, ErrForbidden)
		return
	}
	if to := req.To(); to != nil && to.Params.Has("tag") {
		if c := s.lookup(req); c != nil {
			c.reinvite(req, tx)
			return
		}
		s.respond(req, tx, 481, "Call/Transaction Does Not Exist")
		return
	}
	callID := ""
	if h := req.CallID(); h != nil {
		callID = h.Value()
	}
	log := s.log.With("call_id", callID, "remote_addr", src.String())
	if sipsURI(req) && !overTLS(req) {
		log.Info("sip call refused", "status", 416, "error", ErrInsecureSIPS.Error())
		s.respondErr(req, tx, ErrInsecureSIPS)
		return
	}
	r := s.match(req.Recipient.User, src)
	if r == nil {
		log.Info("sip call refused", "status", 404)
		s.respondErr(req, tx, ErrNoRoute)
		return
	}
	if !s.authorize(req, tx, r, log) {
		return
	}
	ct := "application/sdp"
	if h := req.ContentType(); h != nil {
		ct = h.Value()
	}
	sdpBody, meta, err := splitBody(ct, req.Body())
	var o *offer
	if err == nil {
		o, err = parseOffer(sdpBody, nil)
	}
	if err == nil {
		err = o.secure(r.policy(req))
	}
	if err != nil {
		if errors.Is(err, ErrMediaSecurity) {
			s.srtpRefused.Add(1)
		}
		code, _ := reply(err)
		log.Info("sip call refused", "status", code, "error", err)
		s.respondErr(req, tx, err)
		return
	}
	if err := s.reserve(r); err != nil {
		code, _ := reply(err)
		log.Warn("sip call refused", "status", code, "error", err)
		s.respondErr(req, tx, err)
		return
	}
	c, err := s.setup(req, tx, r, o, meta, callID, log)
	if err != nil {
		s.release(r)
		if err != errNoAck {
			code, _ := reply(err)
			log.Warn("sip call not answered", "status", code, "error", err)
			if c != nil && c.dlg != nil {
				c.dlg.Respond(code, reasonOf(err), nil, replyHeaders(err)...)
			} else {
				s.respondErr(req, tx, err)
			}
		}
		return
	}
	// The call runs on its own now; answer and wait for the ACK.
	if err := c.dlg.RespondSDP(c.answerSDP(o)); err != nil {
		log.Info("sip answer failed", "error", err)
		c.hangup(errNoAck)
	}
}

func reasonOf(err error) string {
	_, r := reply(err)
	return r
}

// setup opens everything a call needs and starts it; on error nothing is
// left open (the returned call, if any, carries the dialog to reply on).
func (s *Server) setup(req *sipmsg.Request, tx sipmsg.ServerTransaction, r *route, o *offer, meta []byte, callID string, log *slog.Logger) (*call, error) {
	dlg, err := s.dialogsFor(req).ReadInvite(req, tx)
	if err != nil {
		return nil, fmt.Errorf("read invite: %w", err)
	}
	c := &call{s: s, id: dlg.ID, callID: callID, log: log, dlg: dlg, route: r, codec: o.streams[0].codec,
		sessID: rand.Uint64N(1 << 62), offer: o, policy: r.policy(req)}
	c.version.Store(1)
	dlg.Respond(100, "Trying", nil)
	if s.cfg.RingTime > 0 {
		dlg.Respond(180, "Ringing", nil)
		select {
		case <-time.After(s.cfg.RingTime):
		case <-dlg.Context().Done():
			log.Info("sip call cancelled before answer")
			return nil, errNoAck // the transaction layer answered 487
		case <-s.base.Done():
			return c, errShuttingDown
		}
	}
	for _, st := range o.streams {
		c.labels = append(c.labels, st.label)
	}
	md := map[string]any{"sip_call_id": callID}
	if h := req.From(); h != nil {
		md["sip_from"] = clip(h.Address.String())
		if h.DisplayName != "" {
			md["sip_from_name"] = clip(h.DisplayName)
		}
	}
	if h := req.To(); h != nil {
		md["sip_to"] = clip(h.Address.String())
	}
	for _, name := range s.cfg.Headers {
		if h := req.GetHeader(name); h != nil {
			md["sip_header_"+strings.ToLower(strings.ReplaceAll(name, "-", "_"))] = clip(h.Value())
		}
	}
	if meta != nil {
		rm, err := parseMetadata(meta, c.labels)
		if err != nil {
			log.Debug("siprec metadata ignored", "error", err)
		} else {
			for k, v := range rm.custom(c.labels) {
				md[k] = v
			}
		}
	}
	allowSrc := []netip.Addr{source(req)}
	var streams []rtp.Stream
	release := func() {
		for _, p := range c.pairs {
			p.Close()
		}
	}
	for _, st := range o.streams {
		p, err := s.ports.Listen()
		if err != nil {
			release()
			return c, fmt.Errorf("%w: %w", ingest.ErrAtCapacity, err)
		}
		c.pairs = append(c.pairs, p)
		allow := allowSrc
		if a := st.rtp.Addr(); a.IsValid() && !a.IsUnspecified() {
			allow = append(allow[:1:1], a)
		}
		rs := rtp.Stream{Pair: p, Codecs: st.codecs, RemoteRTCP: udpAddr(st.rtcp), Mux: st.mux, Allow: allow, Remote: st.rtp, Events: st.events()}
		var local *rtp.SRTPKey
		if st.crypto != nil {
			k, err := rtp.NewSRTPKey(st.crypto.key.Suite)
			if err != nil {
				release()
				return c, err
			}
			local = &k
			rs.SRTP = &rtp.SRTP{Remote: st.crypto.key, Local: k, ReplayWindow: st.crypto.window}
		}
		if st.dtls != nil {
			rs.DTLS = st.dtls.stream(s.dtlsID.cert)
		}
		c.keys = append(c.keys, local)
		streams = append(streams, rs)
	}
	rcfg := rtp.ReceiverConfig{Codec: c.codec, Timeout: s.cfg.RTPTimeout, Jitter: s.cfg.Jitter, Latch: s.cfg.latching(), Keys: &c.keyLimit}
	c.recv, err = rtp.NewReceiver(rcfg, streams, s.rtpLog.With("call_id", callID))
	if err != nil {
		release()
		return c, err
	}
	hold := true
	for _, st := range o.streams {
		hold = hold && st.hold()
	}
	c.recv.Update(nil, hold)
	// The call's audio as the codec delivers it: G.711 bytes at 8 kHz, or
	// G.722 decoded to 16-bit PCM at 16 kHz.
	c.sess, err = s.opener.OpenLive(s.base, ingest.LiveRequest{Account: r.Account, Format: c.codec.Format(len(o.streams)),
		Options: r.live, Metadata: md, Source: "sip"})
	if err != nil {
		release()
		return c, fmt.Errorf("open live session: %w", err)
	}
	c.ctx, c.cancel = context.WithCancelCause(s.base)
	c.log = log.With("session_id", c.sess.ID())
	if !s.start(c) {
		c.cancel(nil)
		c.sess.Stop(context.WithoutCancel(s.base))
		release()
		return c, errShuttingDown
	}
	c.log.Info("sip call answered", "channels", len(o.streams), "codec", c.codec.String(), "account_id", r.Account,
		"srtp", c.srtpSuites(o), "transport", req.Transport())
	return c, nil
}

func (c *call) answerSDP(o *offer) []byte {
	ports := make([]int, len(c.pairs))
	for i, p := range c.pairs {
		ports[i] = p.Port
	}
	b, err := o.answer(c.s.advertise, ports, c.keys, c.s.dtlsID, c.sessID, c.version.Load())
	if err != nil {
		c.log.Error("sdp answer", "error", err)
	}
	return b
}

// hangup ends the call with a cause; only the first cause counts.
func (c *call) hangup(cause error) {
	c.cancel(cause)
}

// run receives the call's media into its session until the call ends,
// then hangs up as needed and finalises the session once.
func (c *call) run() {
	defer c.s.release(c.route)
	defer c.s.remove(c)
	defer func() {
		for _, p := range c.pairs {
			p.Close()
		}
	}()
	start := time.Now()
	var wg sync.WaitGroup
	wg.Go(func() {
		select {
		case <-c.sess.Done():
			c.cancel(errSessionEnded)
		case <-c.ctx.Done():
		}
	})
	err := c.recv.Run(c.ctx, c.sess)
	if err != nil {
		c.cancel(err)
	} else {
		c.cancel(context.Canceled)
	}
	wg.Wait()
	cause := context.Cause(c.ctx)
	switch {
	case errors.Is(cause, errRemoteBye), errors.Is(cause, errNoAck):
	default:
		bctx, cancel := context.WithTimeout(context.WithoutCancel(c.ctx), 4*time.Second)
		if err := c.dlg.Bye(bctx); err != nil {
			c.log.Debug("sip bye failed", "error", err)
		}
		cancel()
	}
	c.dlg.Close()
	select {
	case <-c.sess.Done():
	default:
		sctx, cancel := context.WithTimeout(context.WithoutCancel(c.ctx), time.Minute)
		if err := c.sess.Stop(sctx); err != nil {
			c.log.Warn("live session stop", "error", err)
		}
		cancel()
	}
	st := c.recv.Stats()
	c.s.dtmfDropped.Add(uint64(c.keyLimit.Dropped() + c.recv.KeysLost()))
	level := slog.LevelInfo
	if errors.Is(cause, rtp.ErrTimeout) {
		level = slog.LevelWarn
	}
	attrs := []any{"reason", cause.Error(), "elapsed_ms", time.Since(start).Milliseconds()}
	packets, foreign := 0, 0
	for i, s := range st {
		c.s.rtpReleased.Add(uint64(s.Jitter.Released))
		c.s.rtpLost.Add(uint64(s.Jitter.Lost))
		c.s.rtpForeign.Add(uint64(s.Foreign))
		c.s.srtpAuth.Add(uint64(s.SRTPAuthFailed))
		c.s.srtpReplay.Add(uint64(s.SRTPReplayed))
		if s.Latched.IsValid() {
			c.s.rtpLatched.Add(1)
		}
		packets += s.Packets
		foreign += s.Foreign
		attrs = append(attrs, fmt.Sprintf("channel_%d", i), fmt.Sprintf("packets=%d released=%d lost=%d late=%d dup=%d dropped=%d foreign=%d overflow=%d ssrc_changes=%d srtp_auth_failed=%d srtp_replayed=%d",
			s.Packets, s.Jitter.Released, s.Jitter.Lost, s.Jitter.Late, s.Jitter.Duplicate, s.Dropped, s.Foreign, s.Overflow, s.SSRCChanges, s.SRTPAuthFailed, s.SRTPReplayed))
	}
	if packets == 0 {
		c.s.silentCalls.Add(1)
		level = slog.LevelWarn
		c.log.Warn("sip call received no audio", "expected", c.expected(), "foreign", foreign, "latching", c.s.cfg.latching())
	}
	c.log.Log(context.Background(), level, "sip call ended", attrs...)
}

// expected names the sources of the call's offered streams (SDP c= and
// port), for logs.
func (c *call) expected() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	var parts []string
	for _, st := range c.offer.streams {
		parts = append(parts, st.rtp.String())
	}
	return strings.Join(parts, ",")
}

// reinvite answers an in-dialog offer (hold, unhold, codec change,
// session refresh) on the same ports, keeping the session.
func (c *call) reinvite(req *sipmsg.Request, tx sipmsg.ServerTransaction) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(req.Body()) == 0 {
		// An offerless re-INVITE: offer our last answer again.
		c.respondSDP(req, tx, c.answerSDP(c.offer))
		return
	}
	ct := "application/sdp"
	if h := req.ContentType(); h != nil {
		ct = h.Value()
	}
	body, _, err := splitBody(ct, req.Body())
	var o *offer
	if err == nil {
		o, err = parseOffer(body, &c.codec)
	}
	if err == nil && len(o.streams) != len(c.pairs) {
		err = fmt.Errorf("%w: %d audio streams, the call has %d", ErrNoCodec, len(o.streams), len(c.pairs))
	}
	if err == nil {
		err = o.secure(c.policy)
	}
	var rekeyed []int
	if err == nil {
		rekeyed, err = o.rekeyed(c.offer)
	}
	if err == nil {
		err = c.rekey(o, rekeyed)
	}
	if err != nil {
		if errors.Is(err, ErrMediaSecurity) {
			c.s.srtpRefused.Add(1)
		}
		c.log.Info("sip re-invite refused", "error", err)
		c.s.respondErr(req, tx, err)
		return
	}
	codecs := make([]map[uint8]codec.Codec, len(o.streams))
	hold := true
	for i, st := range o.streams {
		codecs[i] = st.codecs
		hold = hold && st.hold()
	}
	events := make([]uint8, len(o.streams))
	for i, st := range o.streams {
		events[i] = st.events()
	}
	c.recv.UpdateEvents(events)
	c.recv.Update(codecs, hold)
	c.offer = o
	c.version.Add(1)
	c.log.Info("sip re-invite", "hold", hold, "srtp_rekeyed", len(rekeyed))
	c.respondSDP(req, tx, c.answerSDP(o))
}

func (c *call) respondSDP(req *sipmsg.Request, tx sipmsg.ServerTransaction, body []byte) {
	res := sipmsg.NewSDPResponseFromRequest(req, body)
	res.AppendHeader(sipmsg.HeaderClone(&c.s.contact))
	if err := tx.Respond(res); err != nil {
		c.log.Debug("sip respond failed", "error", err)
	}
}
