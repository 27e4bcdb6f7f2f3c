package rtp

import "bytes"

// maxPending bounds the bytes one channel may hold ahead of the others
// (10 s at 8 kHz); older bytes are dropped beyond it.
const maxPending = 80000

// mixChan is one channel's bytes waiting to be interleaved.
type mixChan struct {
	pending []byte
	// lost marks pending's bytes that stand for lost packets (1): silence
	// bytes the concealer (conceal.go) replaces; one mark a byte.
	lost    []byte
	silence byte
	// debt is silence padded ahead of the stream's own clock; the
	// stream's next timestamp gap fills pay it back instead of adding
	// silence twice.
	debt    int
	dropped int
	// invented is the silence the channel was given so far, gap fills
	// and pads, in frames: time the stream's audio did not cover. fill
	// keeps it within wall-clock time (fillLimit).
	invented int64
	// unfilled counts the samples of timestamp jumps fill refused.
	unfilled int
}

func (c *mixChan) audio(b []byte) {
	c.pending = append(c.pending, b...)
	c.lost = append(c.lost, make([]byte, len(b))...)
	c.bound()
}

// fill fills a timestamp gap of n samples with silence, less what pads
// put ahead of the stream's clock (debt); when lost (packets never came)
// the silence is marked for the concealer. A stream's timestamps advance
// with its sender's sampling clock (RFC 3550 section 5.1), so the silence
// a real stream's gaps need never takes invented past the wall-clock time
// of the call; limit is that plus a slack, in frames. A gap that would
// pass it is no loss to conceal but a jump: a new timeline, as the jitter
// buffer takes a jump over max_gap, filled with nothing (a 10 s call of
// 1-byte packets each 16000 samples on was 82 minutes of silence).
func (c *mixChan) fill(n int, limit int64, lost bool) {
	d := min(c.debt, n)
	if n > d && c.invented+int64(n-d) > limit { // only new silence can pass the limit
		c.unfilled += n
		c.debt = 0 // the new timeline starts where the channel is
		return
	}
	c.debt -= d
	var mark byte
	if lost {
		mark = 1
	}
	c.appendSilence(n-d, mark)
}

func (c *mixChan) pad(n int) {
	c.appendSilence(n, 0)
	c.debt = min(c.debt+n, maxPending)
}

func (c *mixChan) appendSilence(n int, mark byte) {
	c.invented += int64(max(n, 0))
	for range n {
		c.pending = append(c.pending, c.silence)
		c.lost = append(c.lost, mark)
	}
	c.bound()
}

func (c *mixChan) bound() {
	if over := len(c.pending) - maxPending; over > 0 {
		c.dropped += over
		c.pending = c.pending[:copy(c.pending, c.pending[over:])]
		c.lost = c.lost[:copy(c.lost, c.lost[over:])]
	}
}

// mixer interleaves its channels' bytes frame by frame (one byte a sample
// a channel), as far as every channel has bytes.
type mixer struct {
	ch     []*mixChan
	frames int64 // frames taken so far
	out    []byte
	lost   []byte
}

func newMixer(n int, silence byte) *mixer {
	m := &mixer{}
	for range n {
		m.ch = append(m.ch, &mixChan{silence: silence})
	}
	return m
}

// most is the largest number of frames any channel could give, counting
// those already taken.
func (m *mixer) most() int64 {
	var n int
	for _, c := range m.ch {
		n = max(n, len(c.pending))
	}
	return m.frames + int64(n)
}

// padTo pads channel c with silence up to frame position pos.
func (m *mixer) padTo(c int, pos int64) {
	if n := pos - m.frames - int64(len(m.ch[c].pending)); n > 0 {
		m.ch[c].pad(int(n))
	}
}

// take returns the interleaved frames every channel can give and their
// loss marks, interleaved the same way (nil when none is lost); both
// slices are reused by the next call.
func (m *mixer) take() (audio, lost []byte) {
	n := len(m.ch[0].pending)
	for _, c := range m.ch[1:] {
		n = min(n, len(c.pending))
	}
	if n == 0 {
		return nil, nil
	}
	anyLost := false
	for _, c := range m.ch {
		anyLost = anyLost || bytes.IndexByte(c.lost[:n], 1) >= 0
	}
	m.out = interleaveChans(m.out[:0], m.ch, n, func(c *mixChan) []byte { return c.pending })
	if anyLost {
		m.lost = interleaveChans(m.lost[:0], m.ch, n, func(c *mixChan) []byte { return c.lost })
	}
	for _, c := range m.ch {
		c.pending = c.pending[:copy(c.pending, c.pending[n:])]
		c.lost = c.lost[:copy(c.lost, c.lost[n:])]
	}
	m.frames += int64(n)
	if !anyLost {
		return m.out, nil
	}
	return m.out, m.lost
}

// interleaveChans appends the first n bytes of each channel's of, frame by
// frame.
func interleaveChans(dst []byte, chans []*mixChan, n int, of func(*mixChan) []byte) []byte {
	if len(chans) == 1 {
		return append(dst, of(chans[0])[:n]...)
	}
	for i := range n {
		for _, c := range chans {
			dst = append(dst, of(c)[i])
		}
	}
	return dst
}
