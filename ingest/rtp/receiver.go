package rtp

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"net"
	"net/netip"
	"sync"
	"sync/atomic"
	"time"

	pionrtp "github.com/pion/rtp"

	"github.com/earshot-dev/earshot/ingest"
	"github.com/earshot-dev/earshot/ingest/codec"
)

// ClockRate is the RTP clock of the codecs a Receiver takes (RFC 3551):
// the sample rate of G.711, and G.722's clock (one byte per tick).
const ClockRate = 8000

// maxQueued bounds the chunks waiting for a slow Writer (10 s of ticks).
const maxQueued = 500

// tick is the receiver's clock: the 20 ms frame of G.711 telephony.
const tick = 20 * time.Millisecond

// fillSlack is how far past wall-clock time the silence a channel was
// given may run (mixChan.fill): a real stream's gaps never take it past
// the time since the call started, so the slack only absorbs clock
// granularity; a stream whose timestamps jump faster than time passes
// gets its jumps as new timelines, not as silence.
const fillSlack = time.Second

// Writer takes the call's audio: G.711 bytes of the receiver's codec, or
// for G.722 its 16 kHz 16-bit little-endian PCM, channels interleaved
// frame by frame (codec.Codec.Format), lost packets concealed
// (conceal.go). ingest.Session implements it.
type Writer interface {
	Write(ctx context.Context, audio []byte) error
}

// ReceiverConfig sets a Receiver's clocks. Zero fields take defaults.
type ReceiverConfig struct {
	// Codec is what Write gets: a G.711 law (packets of the other law are
	// transcoded: a codec change by re-INVITE) or G.722, decoded to 16 kHz
	// PCM. Packets of a codec not Compatible with it are skipped. Default
	// PCMU.
	Codec codec.Codec
	// Timeout ends Run with ErrTimeout when no RTP arrived on any stream
	// for this long and the call is not on hold; default 30s.
	Timeout time.Duration
	// ReportInterval is the RTCP receiver report cadence; default 5s.
	ReportInterval time.Duration
	// PadAfter is how long a channel may send nothing before it is padded
	// with silence: up to the other channels, or up to wall-clock time
	// when all are quiet (hold, silence suppression); default 200ms.
	PadAfter time.Duration
	// Jitter sizes each stream's jitter buffer.
	Jitter JitterConfig
	// Latch lets a stream take its RTP from a source outside its Allow
	// list: the first to send valid RTP within LatchWindow, once, while
	// the stream has taken none from an allowed address (latch.go).
	Latch bool
	// LatchWindow is how long after Run starts a stream may latch;
	// default 10s.
	LatchWindow time.Duration
	// Keys bounds the call's DTMF keys (shared with the door's other
	// sources, SIP INFO); nil: the receiver's own (event.go).
	Keys *ingest.KeyLimiter
}

// SetDefaults fills zero fields.
func (c *ReceiverConfig) SetDefaults() {
	if c.Codec == codec.None {
		c.Codec = codec.PCMU
	}
	if c.Timeout == 0 {
		c.Timeout = 30 * time.Second
	}
	if c.ReportInterval == 0 {
		c.ReportInterval = 5 * time.Second
	}
	if c.PadAfter == 0 {
		c.PadAfter = 200 * time.Millisecond
	}
	if c.LatchWindow == 0 {
		c.LatchWindow = defaultLatchWindow
	}
	c.Jitter.SetDefaults()
}

// Stream is one m= line of a call: a bound pair and what its SDP said.
type Stream struct {
	// Pair receives the stream; the caller closes it after Run.
	Pair *Pair
	// Codecs maps the stream's payload types to codecs; packets of other
	// types (telephone-event, comfort noise) take their sequence number
	// and are skipped.
	Codecs map[uint8]codec.Codec
	// Events is the stream's RFC 4733 telephone-event payload type (its
	// packets become keys: event.go); 0 (PCMU's, never an event's): none.
	Events uint8
	// RemoteRTCP is where receiver reports go (the SDP's a=rtcp or
	// port+1); the source of RTCP received replaces it (symmetric RTCP).
	RemoteRTCP *net.UDPAddr
	// Mux says RTCP shares the RTP port (rtcp-mux, RFC 5761).
	Mux bool
	// Allow lists the source addresses media is taken from (the SDP c=
	// and the signalling peer); empty takes any. With latching, one other
	// source may take their place (latch.go).
	Allow []netip.Addr
	// Remote is the SDP's RTP address and port, named in logs.
	Remote netip.AddrPort
	// SRTP, when set, is the stream's keys: every RTP and RTCP packet must
	// be SRTP (RFC 3711) under Remote, and reports go out as SRTCP under
	// Local; a packet that does not authenticate, or is replayed, is
	// dropped and counted (srtp.go).
	SRTP *SRTP
	// DTLS, when set (and SRTP not), is the stream's DTLS-SRTP setup
	// (dtls.go): the stream takes no media until its handshake on the RTP
	// port (rtcp-mux) has agreed the keys, then it is SRTP as above.
	DTLS *DTLS
}

// StreamStats is what one stream received.
type StreamStats struct {
	Packets     int            // RTP packets accepted
	Dropped     int            // packets dropped: foreign source, malformed (a full socket queue is loss, not this)
	Foreign     int            // RTP packets dropped for their source (in Dropped too)
	Latched     netip.AddrPort // the source the stream latched onto, if it did
	SSRCChanges int
	LossRatio   float64 // cumulative, of the current SSRC
	Jitter      JitterStats
	// Overflow is audio bytes of the call dropped because the session
	// could not take them (the same for every stream of a call).
	Overflow int
	// SRTPAuthFailed is SRTP and SRTCP packets dropped because they did
	// not authenticate (forged, damaged, plain, unknown MKI); SRTPReplayed
	// those dropped as replays (RFC 3711 section 3.3.2). Neither is in
	// Dropped.
	SRTPAuthFailed int
	SRTPReplayed   int
	// Unfilled is samples of timestamp jumps not filled with silence:
	// they would have run the channel's silence past wall-clock time plus
	// fillSlack, so each started a new timeline.
	Unfilled int
}

type input struct {
	stream int
	rtcp   bool
	buf    []byte
	from   netip.AddrPort
	at     time.Time
}

type streamState struct {
	Stream
	ch       int
	latched  netip.AddrPort // the only source taken, once latched
	sdpRTCP  *net.UDPAddr   // RemoteRTCP before the latch
	flowing  bool           // RTP was taken from an allowed address: no latching
	warned   bool           // a foreign source was logged
	srtp     *unprotector   // nil: plain RTP
	srtpWarn bool           // an SRTP failure was logged
	dtls     *dtlsLink      // the DTLS-SRTP handshake's, nil without
	jb       *Jitter
	ev       *EventDecoder // nil without Events
	recv     *reception
	ssrc     uint32
	seen     bool
	last     time.Time
	emit     Emit
	mix      *mixChan // the stream's channel, set by Run
	stats    StreamStats
	reported JitterStats
	unfilled int // Unfilled at the last report
}

// Receiver turns the RTP streams of one call into interleaved G.711 for a
// Writer on a 20 ms clock. Run owns all its state; Update may be called
// from any goroutine while Run runs.
type Receiver struct {
	cfg     ReceiverConfig
	log     *slog.Logger
	streams []*streamState
	in      chan input
	ssrc    uint32
	start   time.Time // set by Run before its readers start
	now     time.Time // Run's: the arrival of the packet or the tick it handles

	mu     sync.Mutex
	hold   bool                    // guarded by mu
	codecs []map[uint8]codec.Codec // guarded by mu: new maps from Update
	rekeys map[int]*unprotector    // guarded by mu: new keys from Rekey, by stream
	events []uint8                 // guarded by mu: new telephone-event types from UpdateEvents
	upd    atomic.Bool
	// overflow counts audio bytes dropped because the session fell
	// maxQueued ticks behind.
	overflow atomic.Int64
	keys     *ingest.KeyLimiter // the call's bound on keys
	keysLost atomic.Int64       // keys dropped with the audio of a session maxQueued ticks behind
	onKey    func(ingest.Key)   // Run's: queues a key behind the audio before it
	stats    []StreamStats      // guarded by mu: set when Run returns
}

// NewReceiver prepares a receiver for streams (channel i is streams[i]).
// It starts nothing; log may be nil.
func NewReceiver(cfg ReceiverConfig, streams []Stream, log *slog.Logger) (*Receiver, error) {
	cfg.SetDefaults()
	if err := cfg.Jitter.Validate(); err != nil {
		return nil, err
	}
	if len(streams) == 0 {
		return nil, errors.New("rtp: a receiver needs at least one stream")
	}
	if !cfg.Codec.G711() && cfg.Codec != codec.G722 {
		return nil, fmt.Errorf("rtp: a receiver takes G.711 or G.722, not %s", cfg.Codec)
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	r := &Receiver{cfg: cfg, log: log, in: make(chan input, 256*len(streams)), ssrc: rand.Uint32(), keys: cfg.Keys}
	if r.keys == nil {
		r.keys = &ingest.KeyLimiter{}
	}
	for _, s := range streams {
		if s.Pair == nil {
			return nil, errors.New("rtp: stream without a port pair")
		}
		st := &streamState{Stream: s, ch: len(r.streams), jb: NewJitter(cfg.Jitter)}
		if s.Events != 0 {
			st.ev = NewEventDecoder(ClockRate)
		}
		if s.SRTP != nil {
			u, err := newUnprotector(s.SRTP)
			if err != nil {
				return nil, err
			}
			st.srtp = u
		} else if s.DTLS != nil {
			st.dtls = newDTLSLink(*s.DTLS, s.Pair.RTP, s.Remote)
		}
		r.streams = append(r.streams, st)
	}
	return r, nil
}

// Update applies a re-INVITE: new payload type maps per stream (nil keeps
// a stream's) and whether the call is on hold (no RTP expected: the
// timeout is suspended and silence fills the time).
func (r *Receiver) Update(codecs []map[uint8]codec.Codec, hold bool) {
	r.mu.Lock()
	r.hold = hold
	r.codecs = codecs
	r.mu.Unlock()
	r.upd.Store(true)
}

// Stats returns per-stream counts; valid after Run returned.
func (r *Receiver) Stats() []StreamStats {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.stats
}

// Run receives until ctx ends (BYE, CANCEL: returns nil after writing
// what it holds), the timeout passes (ErrTimeout) or w fails. It does not
// close the pairs.
func (r *Receiver) Run(ctx context.Context, w Writer) error {
	r.start = time.Now()
	keys := w // the session, behind the concealer
	plc := r.cfg.Jitter.Conceal != ConcealSilence
	conceal, err := newConcealer(w, r.cfg.Codec, len(r.streams), plc)
	if err != nil {
		return err
	}
	defer conceal.Close()
	// The readers outlive ctx until drain has taken the last packets.
	rctx, stop := context.WithCancel(context.WithoutCancel(ctx))
	var wg sync.WaitGroup
	for i, s := range r.streams {
		wg.Go(func() { r.read(rctx, i, s.Pair.RTP, false) })
		wg.Go(func() { r.read(rctx, i, s.Pair.RTCP, true) })
		if s.dtls != nil {
			wg.Go(func() { r.handshake(rctx, i, s.dtls) })
		}
	}
	defer func() {
		stop()
		for _, s := range r.streams {
			if s.dtls != nil {
				s.dtls.close()
			}
		}
		for _, s := range r.streams {
			s.Pair.RTP.SetReadDeadline(time.Unix(1, 0))
			s.Pair.RTCP.SetReadDeadline(time.Unix(1, 0))
		}
		wg.Wait()
		r.mu.Lock()
		r.stats = make([]StreamStats, len(r.streams))
		for i, s := range r.streams {
			s.stats.Jitter = s.jb.Stats()
			s.stats.Overflow = int(r.overflow.Load())
			if s.mix != nil {
				s.stats.Unfilled = s.mix.unfilled
				r.warnUnfilled(i, s)
			}
			if s.recv != nil {
				s.stats.LossRatio = s.recv.lossRatio()
			}
			r.stats[i] = s.stats
		}
		r.mu.Unlock()
	}()

	// The writer goroutine keeps a slow session (a decoder busy) from
	// stalling the packet clock; its queue holds maxQueued ticks.
	out := make(chan chunk, maxQueued)
	werr := make(chan error, 1)
	var writer sync.WaitGroup
	writer.Go(func() {
		wctx := context.WithoutCancel(ctx)
		for b := range out {
			if b.key != nil {
				ingest.SendKey(wctx, keys, *b.key, r.log)
				continue
			}
			if err := conceal.write(wctx, b.audio, b.lost); err != nil {
				werr <- err
				for range out {
				}
				return
			}
		}
	})
	defer writer.Wait()
	closed := false
	closeOut := func() {
		if !closed {
			closed = true
			close(out)
		}
	}
	defer closeOut()
	send := func(b, lost []byte) {
		if len(b) == 0 {
			return
		}
		ch := chunk{audio: bytes.Clone(b), lost: bytes.Clone(lost)} // lost stays nil when nil
		select {
		case out <- ch:
		default:
			r.overflow.Add(int64(len(b)))
		}
	}

	start := r.start
	m := newMixer(len(r.streams), r.cfg.Codec.Silence())
	r.onKey = func(k ingest.Key) { r.queueKey(out, m, send, k) }
	for i, s := range r.streams {
		c := m.ch[i]
		s.last, s.mix = start, c
		s.emit = func(audio []byte, silence int, lost bool) {
			if silence > 0 {
				c.fill(silence, r.fillLimit(), lost && plc)
			} else {
				c.audio(audio)
			}
		}
	}
	lastAny := start
	hold := false
	nextReport := start.Add(r.cfg.ReportInterval)
	t := time.NewTicker(tick)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			r.drain()
			r.now = time.Now()
			for _, s := range r.streams {
				s.jb.Flush(s.emit)
				if s.ev != nil {
					s.ev.Flush(r.onKey)
				}
			}
			most := m.most()
			for c := range m.ch {
				m.padTo(c, most)
			}
			send(m.take())
			closeOut()
			writer.Wait()
			select {
			case err := <-werr:
				return fmt.Errorf("rtp: write audio: %w", err)
			default:
			}
			return nil
		case err := <-werr:
			return fmt.Errorf("rtp: write audio: %w", err)
		case in := <-r.in:
			if r.upd.Swap(false) {
				hold = r.takeUpdate()
				r.replayHeld()
			}
			if r.handle(in) {
				lastAny = in.at
			}
		case now := <-t.C:
			if r.upd.Swap(false) {
				hold = r.takeUpdate()
				r.replayHeld()
			}
			r.now = now
			for _, s := range r.streams {
				s.jb.Pop(now, s.emit)
				if s.ev != nil {
					s.ev.Tick(now, r.onKey)
				}
			}
			r.pad(m, start, now)
			send(m.take())
			if now.After(nextReport) {
				nextReport = now.Add(r.cfg.ReportInterval)
				r.report(now)
			}
			if hold {
				lastAny = now
			} else if now.Sub(lastAny) > r.cfg.Timeout {
				return fmt.Errorf("%w: no RTP for %s", ErrTimeout, now.Sub(lastAny).Round(time.Millisecond))
			}
		}
	}
}

// drain takes the packets that arrived before the hang-up (the BYE may
// overtake the last packets in the socket buffers, and a busy host may
// schedule the readers late): until none came for 150 ms, at most 1 s.
func (r *Receiver) drain() {
	limit := time.After(time.Second)
	quiet := time.NewTimer(150 * time.Millisecond)
	defer quiet.Stop()
	for {
		select {
		case in := <-r.in:
			r.handle(in)
			quiet.Reset(150 * time.Millisecond)
		case <-quiet.C:
			return
		case <-limit:
			return
		}
	}
}

// fillLimit is the most silence a channel may have been given by r.now,
// in frames: wall-clock time since Run started plus fillSlack.
func (r *Receiver) fillLimit() int64 {
	return int64((r.now.Sub(r.start)+fillSlack)/time.Microsecond) * ClockRate / int64(time.Second/time.Microsecond)
}

// takeUpdate applies the pending Update in Run's goroutine.
func (r *Receiver) takeUpdate() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	for i, c := range r.codecs {
		if c != nil && i < len(r.streams) {
			r.streams[i].Codecs = c
		}
	}
	r.codecs = nil
	r.takeRekeys()
	r.takeEvents()
	return r.hold
}

// pad fills quiet channels with silence: up to the busiest channel, and up
// to wall-clock time less PadAfter when every channel is quiet.
func (r *Receiver) pad(m *mixer, start, now time.Time) {
	quiet := 0
	for _, s := range r.streams {
		if s.jb.Len() == 0 && now.Sub(s.last) > r.cfg.PadAfter {
			quiet++
		}
	}
	if quiet == 0 {
		return
	}
	target := m.most()
	if quiet == len(r.streams) {
		wall := int64(now.Sub(start)-r.cfg.PadAfter) * ClockRate / int64(time.Second)
		target = max(target, wall)
	}
	for i, s := range r.streams {
		if s.jb.Len() == 0 && now.Sub(s.last) > r.cfg.PadAfter {
			m.padTo(i, target)
		}
	}
}

// handle takes one datagram; it reports whether it was RTP of the call.
func (r *Receiver) handle(in input) bool {
	s := r.streams[in.stream]
	r.now = in.at
	isRTCP := in.rtcp || (s.Mux && len(in.buf) > 1 && in.buf[1] >= 192 && in.buf[1] <= 223)
	if s.dtls != nil && s.srtp == nil {
		s.dtls.hold(in, &s.stats) // media before the handshake agreed its keys
		return false
	}
	if s.srtp != nil {
		// Decrypted before the source is weighed: only the key's holder
		// can latch a stream.
		plain, err := s.srtp.unprotect(in.buf, isRTCP)
		if err != nil {
			r.srtpFailed(s, in, isRTCP, err)
			return false
		}
		in.buf = plain
	}
	if !r.admit(s, in, isRTCP) {
		s.stats.Dropped++
		return false
	}
	if isRTCP {
		r.handleRTCP(s, in)
		return false
	}
	var p pionrtp.Packet
	if err := p.Unmarshal(in.buf); err != nil || p.Version != 2 {
		s.stats.Dropped++
		return false
	}
	s.flowing = true
	if !s.seen || p.SSRC != s.ssrc {
		if s.seen {
			s.jb.Flush(s.emit)
			s.jb.Reset()
			s.stats.SSRCChanges++
			r.log.Debug("rtp ssrc changed", "channel", in.stream)
		}
		s.seen, s.ssrc = true, p.SSRC
		s.recv = newReception(p.SSRC, ClockRate)
	}
	s.recv.packet(p.SequenceNumber, p.Timestamp, in.at)
	s.stats.Packets++
	s.last = in.at
	c, ok := s.Codecs[p.PayloadType]
	ok = ok && r.cfg.Codec.Compatible(c)
	if ok && c != r.cfg.Codec {
		transcode(p.Payload, c, r.cfg.Codec)
	}
	if s.ev != nil && p.PayloadType == s.Events {
		s.ev.Packet(p.Timestamp, p.Payload, in.at, r.onKey)
	}
	s.jb.Push(Packet{Seq: p.SequenceNumber, Timestamp: p.Timestamp, Payload: p.Payload, Skip: !ok}, in.at, s.emit)
	s.jb.Pop(in.at, s.emit)
	return true
}

// read feeds one socket's datagrams to Run until ctx ends.
func (r *Receiver) read(ctx context.Context, stream int, conn *net.UDPConn, isRTCP bool) {
	buf := make([]byte, 1500)
	s := r.streams[stream]
	for {
		n, from, err := conn.ReadFromUDPAddrPort(buf)
		if ctx.Err() != nil {
			return
		}
		if err != nil {
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				continue
			}
			if errors.Is(err, net.ErrClosed) {
				return
			}
			continue
		}
		if s.dtls != nil && !isRTCP && isDTLS(buf[:n]) {
			s.dtls.deliver(append([]byte(nil), buf[:n]...), from)
			continue
		}
		// Waits while Run is behind: later packets wait in the socket's
		// queue (ReadBuffer), which the kernel bounds; dropping here wasted it.
		in := input{stream: stream, rtcp: isRTCP, buf: append([]byte(nil), buf[:n]...), from: from, at: time.Now()}
		select {
		case r.in <- in:
		case <-ctx.Done():
			return
		}
	}
}
