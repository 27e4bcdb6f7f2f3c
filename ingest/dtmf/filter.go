package dtmf

import (
	"fmt"
	"math"
	"math/cmplx"
)

// Timing, in hops (6.375 ms each; a block is two hops).
const (
	// confirmHops is how many blocks in a row must hold a key before it is
	// accepted: they span 4 hops + a block = 38.25 ms, so a 40 ms tone
	// (Q.24's shortest to operate) passes at any alignment in quiet, and a
	// 23 ms one (its longest not to) never does.
	confirmHops = 5
	// gapHops is how many blocks in a row without the key end it: 25.5 ms,
	// longer than the blocks a 10 ms interruption spoils (at most 3), and
	// shorter than those of a 40 ms pause between keys (6 at least).
	gapHops = 4
	// lookaheadHops is the delay: a key is confirmed confirmHops-1 hops
	// and a block after its first block starts, and its muting starts a
	// block before that, to take the partial block at the onset (the tone
	// can start before the first block that holds it, more so in speech).
	lookaheadHops = confirmHops - 1 + 4
)

// Filter finds DTMF keys in a mono stream and replaces their tones with
// silence, delaying the audio by Lookahead samples. Not safe for
// concurrent use.
type Filter struct {
	a    *analyzer
	ring []int16 // the last Lookahead samples written, not yet passed on
	in   int64   // samples written
	out  int64   // samples passed on
	buf  []int16 // Write's result, reused

	// muteFrom, muteTo: the samples [from, to) passed on as silence.
	muteFrom, muteTo int64

	run  run
	keys []Key // Write's keys, reused
}

// run is the current stretch of blocks holding one key.
type run struct {
	digit          byte // 0: none
	row, col       int
	first, end     int64 // first block's first sample, last block's end
	hits, gap      int
	confirmed      bool
	advRow, advCol complex128 // summed phase advances (analyzer.deviation)
}

// New returns a Filter for rate 8000 or 16000 Hz (else ErrRate).
func New(rate int) (*Filter, error) {
	if rate != 8000 && rate != 16000 {
		return nil, fmt.Errorf("%w: %d", ErrRate, rate)
	}
	a := newAnalyzer(rate)
	return &Filter{a: a, ring: make([]int16, lookaheadHops*a.hop)}, nil
}

// Rate is the filter's sample rate.
func (f *Filter) Rate() int { return f.a.rate }

// Lookahead is the delay in samples: Write returns the samples written
// up to Lookahead ago (51 ms).
func (f *Filter) Lookahead() int { return len(f.ring) }

// Write takes the next samples and returns those now passed on (the
// samples written Lookahead before, with any key's tone replaced by
// zeros) and the keys that ended. Both results are reused by the next
// call.
func (f *Filter) Write(pcm []int16) (out []int16, keys []Key) {
	f.buf, f.keys = f.buf[:0], f.keys[:0]
	n := int64(len(f.ring))
	for _, x := range pcm {
		if v, ok := f.a.push(x); ok {
			f.step(v)
		}
		slot := f.in % n
		if f.in >= n {
			f.buf = append(f.buf, f.emit(f.ring[slot]))
		}
		f.ring[slot] = x
		f.in++
	}
	return f.buf, f.keys
}

// Flush ends the stream: it returns the samples still held and the key
// sounding at the end, if confirmed. The Filter is then spent.
func (f *Filter) Flush() (out []int16, keys []Key) {
	f.buf, f.keys = f.buf[:0], f.keys[:0]
	if f.run.confirmed {
		f.end()
	}
	n := int64(len(f.ring))
	for f.out < f.in {
		f.buf = append(f.buf, f.emit(f.ring[f.out%n]))
	}
	return f.buf, f.keys
}

// emit passes sample f.out on, muted when it is part of a key.
func (f *Filter) emit(x int16) int16 {
	t := f.out
	f.out++
	if t >= f.muteFrom && t < f.muteTo {
		return 0
	}
	return x
}

// step takes one block's verdict; the block ends at sample f.in+1.
func (f *Filter) step(v verdict) {
	hop := int64(f.a.hop)
	end := f.in + 1
	r := &f.run
	if r.digit != 0 && v.digit == r.digit {
		r.hits++
		r.gap = 0
		r.end = end
		r.advRow += v.advRow
		r.advCol += v.advCol
		switch {
		case r.confirmed:
			f.mute(r.end + 2*hop)
		case r.hits >= confirmHops && f.inTolerance():
			r.confirmed = true
			// A block before the first one that held the key: the
			// lookahead is just long enough for it.
			if from := r.first - 2*hop; f.muteTo < from {
				f.muteFrom = from // the last key's span is passed on
			}
			f.mute(r.end + 2*hop)
		}
		return
	}
	if r.confirmed {
		r.gap++
		if r.gap < gapHops {
			return
		}
		f.end()
	}
	*r = run{}
	if v.digit != 0 {
		*r = run{digit: v.digit, row: v.row, col: v.col, first: end - 2*hop, end: end, hits: 1}
	}
}

// mute extends the muted span to end at to.
func (f *Filter) mute(to int64) { f.muteTo = max(f.muteTo, to) }

// inTolerance reports whether the run's two tones, measured over its
// blocks, are within freqTolerance of their nominal frequencies.
func (f *Filter) inTolerance() bool {
	r := &f.run
	for _, c := range [2]struct {
		k   int
		adv complex128
	}{{r.row, r.advRow}, {r.col + 4, r.advCol}} {
		if cmplx.Abs(c.adv) == 0 || math.Abs(f.a.deviation(c.k, c.adv)) > freqTolerance {
			return false
		}
	}
	return true
}

// end reports the confirmed run as a key and clears it.
func (f *Filter) end() {
	r := f.run
	f.keys = append(f.keys, Key{Digit: r.digit, Start: r.first, Duration: r.end - r.first})
	f.run = run{}
}
