package webrtc

import (
	"context"
	"errors"
	"log/slog"
	"runtime/debug"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/pion/rtp"
	pionwebrtc "github.com/pion/webrtc/v4"

	"github.com/earshot-dev/earshot/ingest"
	"github.com/earshot-dev/earshot/ingest/codec"
)

// After DELETE, packets that had already arrived still reach the
// recording: the peer closes once its reader has been idle for drainQuiet
// (three packet times), or after maxDrainTotal in all. A reader that is
// behind, or held inside one write, is waited for: on a loaded box a live
// session takes the audio slower than real time for a while. Until
// 2026-11-30 the peer closed 2 s after DELETE (later: 2 s after the last
// write ended) whatever the reader was doing, losing the packets it had
// not reached yet (e2e TestWebRTCWHIP on a slow box: 17 of 154 packets,
// behind one write held for over 2 s).
const (
	drainQuiet    = 150 * time.Millisecond
	maxDrainTotal = 10 * time.Second
)

// maxGapMs bounds the silence written for one RTP timestamp gap; a larger
// jump is a new timeline, not loss.
const maxGapMs = 1000

// peer is one session's PeerConnection. Its supervise goroutine owns the
// end of the session; pion's callbacks only signal it through channels.
type peer struct {
	d        *Door
	sess     ingest.Session
	pc       *pionwebrtc.PeerConnection
	codec    codec.Codec
	resource string
	log      *slog.Logger

	states  chan pionwebrtc.PeerConnectionState // bounded; a full channel drops the state (the latest failed/closed is re-sent by pion's close)
	tracks  chan remoteTrack                    // bounded; extra tracks are dropped
	end     chan struct{}                       // closed by requestEnd (DELETE)
	endOnce sync.Once
	ended   chan struct{} // closed when supervise has finished
	stopErr error         // written by supervise before ended is closed
	lastRTP atomic.Int64  // unix nanoseconds of the last audio packet handled (or of the answer)
	busy    atomic.Bool   // the reader is writing to the session
	packets atomic.Int64  // audio packets written
	keys    ingest.KeyLimiter
}

// remoteTrack is an audio track and the telephone-event payload types
// negotiated beside its codec (payload type to RTP clock).
type remoteTrack struct {
	t      *pionwebrtc.TrackRemote
	events map[uint8]int
}

func newPeer(d *Door, sess ingest.Session, pc *pionwebrtc.PeerConnection, c codec.Codec) *peer {
	p := &peer{
		d: d, sess: sess, pc: pc, codec: c, resource: newResource(),
		log:    d.log.With("session_id", sess.ID()),
		states: make(chan pionwebrtc.PeerConnectionState, 16),
		tracks: make(chan remoteTrack, 4),
		end:    make(chan struct{}),
		ended:  make(chan struct{}),
	}
	p.lastRTP.Store(time.Now().UnixNano())
	pc.OnConnectionStateChange(func(s pionwebrtc.PeerConnectionState) {
		select {
		case p.states <- s:
		default:
		}
	})
	pc.OnTrack(func(t *pionwebrtc.TrackRemote, r *pionwebrtc.RTPReceiver) {
		if t.Kind() != pionwebrtc.RTPCodecTypeAudio {
			return
		}
		rt := remoteTrack{t: t, events: map[uint8]int{}}
		for _, c := range r.GetParameters().Codecs {
			if strings.EqualFold(c.MimeType, mimeTelephoneEvent) {
				rt.events[uint8(c.PayloadType)] = int(c.ClockRate)
			}
		}
		select {
		case p.tracks <- rt:
		default:
		}
	})
	return p
}

func (p *peer) requestEnd() {
	p.endOnce.Do(func() { close(p.end) })
}

// supervise waits for the end of the peer or of its session: DELETE, door
// Close, connection failed or closed, or no RTP for DisconnectGrace end the
// recording (Session.Stop); a session that ended otherwise only closes the
// peer. It reads the first audio track in a goroutine it waits for.
func (p *peer) supervise() {
	var readers sync.WaitGroup
	defer close(p.ended)
	defer func() {
		if r := recover(); r != nil {
			p.log.Error("webrtc peer panicked", "panic", r, "stack", string(debug.Stack()))
			p.pc.Close()
		}
	}()
	grace := p.d.cfg.DisconnectGrace
	tick := time.NewTicker(min(max(grace/4, 20*time.Millisecond), time.Second))
	defer tick.Stop()
	reading := false
	stop, reason := true, ""
loop:
	for {
		select {
		case <-p.sess.Done():
			stop, reason = false, "session ended"
			break loop
		case <-p.end:
			reason = "resource deleted"
			p.drain()
			break loop
		case <-p.d.closing:
			reason = "door closed"
			break loop
		case s := <-p.states:
			p.log.Debug("webrtc connection state", "state", s.String())
			if s == pionwebrtc.PeerConnectionStateFailed || s == pionwebrtc.PeerConnectionStateClosed {
				reason = "connection " + s.String()
				break loop
			}
		case t := <-p.tracks:
			if !reading {
				reading = true
				readers.Go(func() { p.read(t) })
			}
		case now := <-tick.C:
			if now.Sub(time.Unix(0, p.lastRTP.Load())) > grace {
				reason = "no audio for " + grace.String()
				break loop
			}
		}
	}
	// Close first so the reader stops writing before the recording ends.
	if err := p.pc.Close(); err != nil {
		p.log.Debug("close peer connection", "error", err)
	}
	readers.Wait()
	if stop {
		ctx, cancel := context.WithTimeout(context.Background(), stopTimeout)
		p.stopErr = p.sess.Stop(ctx)
		cancel()
	}
	p.d.mu.Lock()
	if p.d.peers[p.sess.ID()] == p {
		delete(p.d.peers, p.sess.ID())
	}
	p.d.mu.Unlock()
	p.log.Info("whip peer ended", "reason", reason, "packets", p.packets.Load(), "error", p.stopErr)
}

// read passes the track's audio to the session as it comes (RFC 3550
// §5.1): G.711 payloads as they are, Opus decoded to 16 kHz PCM by a
// decoder read owns. Telephone-events (RFC 4733) of the negotiated types
// are keys, handed to the session in line with the audio (events.go);
// packets of another payload type (comfort noise) are skipped, duplicates
// and late packets dropped, and a timestamp gap (loss, or a sender's
// silence suppression) up to maxGap is filled with silence so the
// recording keeps real time.
func (p *peer) read(rt remoteTrack) {
	t := rt.t
	ev := p.newEvents(rt.events)
	defer ev.flush()
	defer func() {
		if r := recover(); r != nil {
			p.log.Error("webrtc reader panicked", "panic", r, "stack", string(debug.Stack()))
		}
	}()
	var dec codec.Decoder
	if p.codec.Wideband() {
		var err error
		if dec, err = codec.NewDecoder(p.codec); err != nil {
			p.log.Error("webrtc decoder", "error", err)
			return
		}
		defer dec.Close()
	}
	// ticks is the RTP clock ticks a second of the session's audio takes.
	ticks := p.codec.ClockRate()
	rate := p.codec.Format(1).SampleRate
	pt := uint8(t.PayloadType())
	ctx := context.Background()
	buf := make([]byte, 1500)
	var pkt rtp.Packet
	var gap, out []byte
	var pcm []int16
	var next uint32 // timestamp expected next
	var lastSeq uint16
	started := false
	for {
		n, _, err := t.Read(buf)
		// ErrCodecNotFound comes with the packet read all the same: a
		// payload type pion's media engine does not map (the answer did
		// not name it; or Chromium's telephone-event, which the engine
		// matched only partly). Its type decides below; the track goes on.
		if err != nil && !errors.Is(err, pionwebrtc.ErrCodecNotFound) {
			return
		}
		if err := pkt.Unmarshal(buf[:n]); err != nil {
			p.log.Debug("bad rtp packet", "error", err)
			continue
		}
		ev.tick()
		if ev.packet(&pkt) || pkt.PayloadType != pt || len(pkt.Payload) == 0 {
			continue
		}
		audio, dur := pkt.Payload, uint32(len(pkt.Payload))
		if dec != nil {
			if pcm, err = dec.Decode(pkt.Payload, pcm[:0]); err != nil {
				p.log.Debug("undecodable packet", "codec", p.codec.String(), "error", err)
				continue
			}
			out = codec.AppendLE(out[:0], pcm)
			audio, dur = out, uint32(len(pcm)*ticks/rate)
		}
		if started {
			if d := pkt.SequenceNumber - lastSeq; d == 0 || d >= 0x8000 {
				continue // duplicate or older than what was written
			}
			if missing := pkt.Timestamp - next; missing > 0 && int(missing) <= ticks*maxGapMs/1000 {
				gap = p.silence(gap[:0], int(missing)*rate/ticks)
				if !p.write(ctx, gap) {
					return
				}
			}
		}
		started = true
		lastSeq = pkt.SequenceNumber
		next = pkt.Timestamp + dur
		p.packets.Add(1)
		if !p.write(ctx, audio) {
			return
		}
	}
}

// silence appends n samples of silence in the session's format.
func (p *peer) silence(b []byte, n int) []byte {
	if p.codec.G711() {
		for range n {
			b = append(b, p.codec.Silence())
		}
		return b
	}
	for range 2 * n {
		b = append(b, 0)
	}
	return b
}

// write passes audio to the session; false when the session refused it
// (it has ended, or another connection took it over).
func (p *peer) write(ctx context.Context, b []byte) bool {
	p.busy.Store(true)
	err := p.sess.Write(ctx, b)
	p.lastRTP.Store(time.Now().UnixNano())
	p.busy.Store(false)
	if err != nil {
		p.log.Debug("session refused audio", "error", err)
		return false
	}
	return true
}

// drain waits until the reader has been idle for drainQuiet, for as long
// as it keeps writing or is held in a write, at most maxDrainTotal.
func (p *peer) drain() {
	start := time.Now()
	t := time.NewTicker(drainQuiet / 6)
	defer t.Stop()
	for now := range t.C {
		last := time.Unix(0, p.lastRTP.Load()) // the last write's end
		if now.Sub(start) > maxDrainTotal || !p.busy.Load() && now.Sub(last) > drainQuiet {
			return
		}
	}
}
