package webrtc

import (
	"context"
	"log/slog"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"time"

	"github.com/pion/rtp"
	pionwebrtc "github.com/pion/webrtc/v4"

	"github.com/earshot-dev/earshot/ingest"
)

// After DELETE, packets that had already arrived still reach the
// recording: the peer closes once its reader has been idle for drainQuiet
// (three packet times), or after maxDrain at most.
const (
	drainQuiet = 150 * time.Millisecond
	maxDrain   = 2 * time.Second
)

// maxGapSamples bounds the silence written for one RTP timestamp gap (1 s
// at 8 kHz); a larger jump is a new timeline, not loss.
const maxGapSamples = 8000

// peer is one session's PeerConnection. Its supervise goroutine owns the
// end of the session; pion's callbacks only signal it through channels.
type peer struct {
	d        *Door
	sess     ingest.Session
	pc       *pionwebrtc.PeerConnection
	law      codec
	resource string
	log      *slog.Logger

	states  chan pionwebrtc.PeerConnectionState // bounded; a full channel drops the state (the latest failed/closed is re-sent by pion's close)
	tracks  chan *pionwebrtc.TrackRemote        // bounded; extra tracks are dropped
	end     chan struct{}                       // closed by requestEnd (DELETE)
	endOnce sync.Once
	ended   chan struct{} // closed when supervise has finished
	stopErr error         // written by supervise before ended is closed
	lastRTP atomic.Int64  // unix nanoseconds of the last audio packet handled (or of the answer)
	busy    atomic.Bool   // the reader is writing to the session
	packets atomic.Int64  // audio packets written
}

func newPeer(d *Door, sess ingest.Session, pc *pionwebrtc.PeerConnection, law codec) *peer {
	p := &peer{
		d: d, sess: sess, pc: pc, law: law, resource: newResource(),
		log:    d.log.With("session_id", sess.ID()),
		states: make(chan pionwebrtc.PeerConnectionState, 16),
		tracks: make(chan *pionwebrtc.TrackRemote, 4),
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
	pc.OnTrack(func(t *pionwebrtc.TrackRemote, _ *pionwebrtc.RTPReceiver) {
		if t.Kind() != pionwebrtc.RTPCodecTypeAudio {
			return
		}
		select {
		case p.tracks <- t:
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

// read passes the track's audio payloads to the session as they come
// (RFC 3550 §5.1): packets of another payload type (telephone-event,
// comfort noise) are skipped, duplicates and late packets dropped, and a
// timestamp gap (loss, or a sender's silence suppression) up to
// maxGapSamples is filled with the law's silence so the recording keeps
// real time.
func (p *peer) read(t *pionwebrtc.TrackRemote) {
	defer func() {
		if r := recover(); r != nil {
			p.log.Error("webrtc reader panicked", "panic", r, "stack", string(debug.Stack()))
		}
	}()
	pt := uint8(t.PayloadType())
	ctx := context.Background()
	buf := make([]byte, 1500)
	var pkt rtp.Packet
	var gap []byte
	var next uint32 // timestamp expected next
	var lastSeq uint16
	started := false
	for {
		n, _, err := t.Read(buf)
		if err != nil {
			return
		}
		if err := pkt.Unmarshal(buf[:n]); err != nil {
			p.log.Debug("bad rtp packet", "error", err)
			continue
		}
		if pkt.PayloadType != pt || len(pkt.Payload) == 0 {
			continue
		}
		if started {
			if d := pkt.SequenceNumber - lastSeq; d == 0 || d >= 0x8000 {
				continue // duplicate or older than what was written
			}
			if missing := pkt.Timestamp - next; missing > 0 && missing <= maxGapSamples {
				gap = gap[:0]
				for range missing {
					gap = append(gap, p.law.silence())
				}
				if !p.write(ctx, gap) {
					return
				}
			}
		}
		started = true
		lastSeq = pkt.SequenceNumber
		next = pkt.Timestamp + uint32(len(pkt.Payload))
		p.packets.Add(1)
		if !p.write(ctx, pkt.Payload) {
			return
		}
	}
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

// drain waits until the reader has been idle for drainQuiet, at most
// maxDrain.
func (p *peer) drain() {
	deadline := time.Now().Add(maxDrain)
	t := time.NewTicker(drainQuiet / 6)
	defer t.Stop()
	for now := range t.C {
		if now.After(deadline) || !p.busy.Load() && now.Sub(time.Unix(0, p.lastRTP.Load())) > drainQuiet {
			return
		}
	}
}
