package rtp

// maxPending bounds the bytes one channel may hold ahead of the others
// (10 s at 8 kHz); older bytes are dropped beyond it.
const maxPending = 80000

// mixChan is one channel's bytes waiting to be interleaved.
type mixChan struct {
	pending []byte
	silence byte
	// debt is silence padded ahead of the stream's own clock; the
	// stream's next timestamp gap fills pay it back instead of adding
	// silence twice.
	debt    int
	dropped int
}

func (c *mixChan) audio(b []byte) {
	c.pending = append(c.pending, b...)
	c.bound()
}

func (c *mixChan) fill(n int) {
	d := min(c.debt, n)
	c.debt -= d
	c.appendSilence(n - d)
}

func (c *mixChan) pad(n int) {
	c.appendSilence(n)
	c.debt = min(c.debt+n, maxPending)
}

func (c *mixChan) appendSilence(n int) {
	for range n {
		c.pending = append(c.pending, c.silence)
	}
	c.bound()
}

func (c *mixChan) bound() {
	if over := len(c.pending) - maxPending; over > 0 {
		c.dropped += over
		c.pending = c.pending[:copy(c.pending, c.pending[over:])]
	}
}

// mixer interleaves its channels' bytes frame by frame (one byte a sample
// a channel), as far as every channel has bytes.
type mixer struct {
	ch     []*mixChan
	frames int64 // frames taken so far
	out    []byte
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

// take returns the interleaved frames every channel can give; the slice is
// reused by the next call.
func (m *mixer) take() []byte {
	n := len(m.ch[0].pending)
	for _, c := range m.ch[1:] {
		n = min(n, len(c.pending))
	}
	if n == 0 {
		return nil
	}
	m.out = m.out[:0]
	if len(m.ch) == 1 {
		m.out = append(m.out, m.ch[0].pending[:n]...)
	} else {
		for i := range n {
			for _, c := range m.ch {
				m.out = append(m.out, c.pending[i])
			}
		}
	}
	for _, c := range m.ch {
		c.pending = c.pending[:copy(c.pending, c.pending[n:])]
	}
	m.frames += int64(n)
	return m.out
}
