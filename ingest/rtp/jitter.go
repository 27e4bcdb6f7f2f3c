package rtp

import (
	"errors"
	"sort"
	"time"

	"github.com/earshot-dev/earshot/config"
)

// JitterConfig sizes a jitter buffer. Zero fields take their defaults.
type JitterConfig struct {
	// Depth is how many packets may queue behind a missing one before it is
	// declared lost; default 5 (100 ms of 20 ms packets).
	Depth int `yaml:"depth"`
	// Delay is the longest wait for a missing packet, measured from the
	// arrival of the packet after the gap; default 80ms.
	Delay time.Duration `yaml:"delay"`
	// MaxGap is the longest timestamp gap filled with silence, in samples;
	// a longer jump starts a new timeline without fill; default 16000
	// (2 s at 8 kHz). A shorter one is not filled either when the silence
	// would run past the call's wall-clock time plus fillSlack (mixer.go).
	MaxGap int `yaml:"max_gap"`
	// Capacity bounds the packets held; a packet beyond it is dropped;
	// default 64.
	Capacity int `yaml:"capacity"`
	// Conceal is what lost packets become: ConcealPLC (default),
	// spandsp's packet loss concealment (conceal.go), or ConcealSilence,
	// the codec's silence bytes (G.722's decoder fed them).
	Conceal string `yaml:"conceal"`
}

// The values of JitterConfig.Conceal.
const (
	ConcealPLC     = "plc"
	ConcealSilence = "silence"
)

// SetDefaults fills zero fields.
func (c *JitterConfig) SetDefaults() {
	if c.Depth == 0 {
		c.Depth = 5
	}
	if c.Delay == 0 {
		c.Delay = 80 * time.Millisecond
	}
	if c.MaxGap == 0 {
		c.MaxGap = 16000
	}
	if c.Capacity == 0 {
		c.Capacity = 64
	}
	if c.Conceal == "" {
		c.Conceal = ConcealPLC
	}
}

// Validate checks the sizes.
func (c JitterConfig) Validate() error {
	var errs []error
	if c.Depth < 1 || c.Depth > c.Capacity {
		errs = append(errs, config.Errorf("depth", "%d must be 1 to capacity %d", c.Depth, c.Capacity))
	}
	if c.Delay < 0 || c.Delay > 2*time.Second {
		errs = append(errs, config.Errorf("delay", "%s must be 0 to 2s", c.Delay))
	}
	if c.MaxGap < 0 || c.MaxGap > 8000*60 {
		errs = append(errs, config.Errorf("max_gap", "%d must be 0 to 480000 samples", c.MaxGap))
	}
	if c.Capacity < 1 || c.Capacity > 4096 {
		errs = append(errs, config.Errorf("capacity", "%d must be 1 to 4096", c.Capacity))
	}
	if c.Conceal != ConcealPLC && c.Conceal != ConcealSilence {
		errs = append(errs, config.Errorf("conceal", "%q must be %q or %q", c.Conceal, ConcealPLC, ConcealSilence))
	}
	return errors.Join(errs...)
}

// Packet is what a jitter buffer orders: one RTP packet of a G.711
// stream, one byte a sample.
type Packet struct {
	Seq       uint16
	Timestamp uint32
	// Payload is copied by Push.
	Payload []byte
	// Skip marks a packet that takes a sequence number but carries no
	// audio of this stream (RFC 4733 telephone-event, comfort noise): its
	// time is filled with silence when audio resumes.
	Skip bool
}

// JitterStats counts what a jitter buffer did.
type JitterStats struct {
	Released  int // audio packets passed on
	Lost      int // sequence numbers never seen, their time concealed (conceal.go)
	Late      int // packets that came after their slot was played
	Duplicate int // second copies of a held packet
	Overflow  int // packets dropped because the buffer was full
	Resync    int // sequence or timestamp jumps taken as a new timeline
}

// Emit receives a jitter buffer's output in order: either audio bytes
// (valid only during the call) or a count of silent samples. lost says
// the silence stands for packets that never came (a loss, to conceal),
// not for time the sender sent no audio for (silence suppression,
// telephone events, comfort noise).
type Emit func(audio []byte, silence int, lost bool)

// maxDropout is the sequence jump taken as a restart of the sender
// (RFC 3550 appendix A.1 uses 3000).
const maxDropout = 3000

type slot struct {
	ext     int64
	ts      uint32
	payload []byte
	skip    bool
	at      time.Time
}

// Jitter reorders the packets of one RTP stream (one SSRC) by sequence
// number, drops duplicates and late packets, and emits timestamp gaps as
// silence to fill, marked lost when packets never came (RFC 3550 sections
// 5.1 and 6.4.1 for the numbering). An in-order packet is released at once; a gap holds later
// packets until the missing one comes, Depth packets queue or Delay
// passes. It is not safe for concurrent use: one goroutine owns it.
type Jitter struct {
	cfg      JitterConfig
	started  bool
	expected int64 // extended sequence number of the next packet to release
	haveTS   bool
	nextTS   uint32 // timestamp just after the last audio released
	buf      []slot // sorted by ext
	free     [][]byte
	stats    JitterStats
}

// NewJitter returns an empty buffer; cfg is defaulted.
func NewJitter(cfg JitterConfig) *Jitter {
	cfg.SetDefaults()
	return &Jitter{cfg: cfg}
}

// Stats returns the counters so far.
func (j *Jitter) Stats() JitterStats { return j.stats }

// Len is how many packets are held.
func (j *Jitter) Len() int { return len(j.buf) }

// Push adds a packet that arrived at now. Call Pop after it.
func (j *Jitter) Push(p Packet, now time.Time, emit Emit) {
	if !j.started {
		j.started = true
		j.expected = 1<<16 + int64(p.Seq)
	}
	d := int64(int16(p.Seq - uint16(j.expected)))
	ext := j.expected + d
	switch {
	case d < 0:
		if d > -maxDropout {
			j.stats.Late++
			return
		}
		fallthrough
	case d > maxDropout:
		// The sender restarted its numbering: play what is held, then
		// continue from this packet.
		j.stats.Resync++
		j.Flush(emit)
		ext = 1<<16 + int64(p.Seq)
		j.expected = ext
	}
	i := sort.Search(len(j.buf), func(i int) bool { return j.buf[i].ext >= ext })
	if i < len(j.buf) && j.buf[i].ext == ext {
		j.stats.Duplicate++
		return
	}
	if len(j.buf) >= j.cfg.Capacity {
		j.stats.Overflow++
		return
	}
	var b []byte
	if n := len(j.free); n > 0 {
		b, j.free = j.free[n-1][:0], j.free[:n-1]
	}
	s := slot{ext: ext, ts: p.Timestamp, payload: append(b, p.Payload...), skip: p.Skip, at: now}
	j.buf = append(j.buf, slot{})
	copy(j.buf[i+1:], j.buf[i:])
	j.buf[i] = s
}

// Pop releases every packet that is due at now: in order, or after a gap
// that waited long enough.
func (j *Jitter) Pop(now time.Time, emit Emit) {
	for len(j.buf) > 0 {
		h := j.buf[0]
		if h.ext != j.expected && len(j.buf) < j.cfg.Depth && now.Sub(h.at) < j.cfg.Delay {
			return
		}
		j.release(emit)
	}
}

// Flush releases everything held (end of call, SSRC change).
func (j *Jitter) Flush(emit Emit) {
	for len(j.buf) > 0 {
		j.release(emit)
	}
}

// Reset forgets the stream after Flush: the next packet starts a new
// timeline (a new SSRC) with no gap filled before it.
func (j *Jitter) Reset() {
	j.started, j.haveTS = false, false
	j.buf = j.buf[:0]
}

func (j *Jitter) release(emit Emit) {
	h := j.buf[0]
	copy(j.buf, j.buf[1:])
	j.buf = j.buf[:len(j.buf)-1]
	lost := h.ext > j.expected
	if lost {
		j.stats.Lost += int(h.ext - j.expected)
	}
	j.expected = h.ext + 1
	defer func() { j.free = append(j.free, h.payload) }()
	if h.skip {
		return
	}
	audio := h.payload
	if j.haveTS {
		gap := int64(int32(h.ts - j.nextTS))
		switch {
		case gap > 0 && gap <= int64(j.cfg.MaxGap):
			emit(nil, int(gap), lost)
		case gap < 0 && -gap < int64(len(audio)):
			audio = audio[-gap:] // overlaps what was played
		case gap != 0:
			j.stats.Resync++
		}
	}
	j.haveTS = true
	j.nextTS = h.ts + uint32(len(h.payload))
	j.stats.Released++
	if len(audio) > 0 {
		emit(audio, 0, false)
	}
}
