package recognizer

import (
	"errors"
	"fmt"
	"math"
	"time"
)

// VADConfig tunes Segment, the energy-based voice activity segmentation
// that splits a channel into utterance-sized pieces for batch decoding.
// The zero value plus SetDefaults is the batch default.
type VADConfig struct {
	// FrameMs is the analysis frame length in milliseconds, 5..50.
	// Default 10.
	FrameMs int `yaml:"frame_ms"`
	// Threshold is how far above the local noise floor a frame must be to
	// count as speech, from 0 (4 dB, catches faint speech and some noise)
	// to 1 (16 dB, strict against background sound); the contract's
	// speech_threshold. Default 0.6 (about 11 dB).
	Threshold float64 `yaml:"threshold"`
	// MinSilence is the pause that ends a segment (hangover): shorter
	// pauses stay inside it. Default 500ms.
	MinSilence time.Duration `yaml:"min_silence"`
	// MaxSegment bounds a segment's length; longer speech is cut at its
	// quietest point in the second half of the window. Default 20s.
	MaxSegment time.Duration `yaml:"max_segment"`
	// Padding is added before and after each segment so word edges are
	// not clipped. Default 250ms.
	Padding time.Duration `yaml:"padding"`
}

// SetDefaults fills zero fields with their defaults. A Threshold of 0 is
// taken as unset; use a small positive value for the most sensitive
// setting.
// defaultMinSilence is VADConfig.MinSilence's default: a batch segment's
// pause (the live path compares its endpointing with it too).
const defaultMinSilence = 500 * time.Millisecond

func (c *VADConfig) SetDefaults() {
	if c.FrameMs == 0 {
		c.FrameMs = 10
	}
	if c.Threshold == 0 {
		c.Threshold = 0.6
	}
	if c.MinSilence == 0 {
		c.MinSilence = defaultMinSilence
	}
	if c.MaxSegment == 0 {
		c.MaxSegment = 20 * time.Second
	}
	if c.Padding == 0 {
		c.Padding = 250 * time.Millisecond
	}
}

// Validate reports every out-of-range field, each naming its key.
func (c VADConfig) Validate() error {
	var errs []error
	if c.FrameMs < 5 || c.FrameMs > 50 {
		errs = append(errs, fmt.Errorf("recognizer: vad frame_ms: %d not in 5..50", c.FrameMs))
	}
	if c.Threshold < 0 || c.Threshold > 1 || math.IsNaN(c.Threshold) {
		errs = append(errs, fmt.Errorf("recognizer: vad threshold: %v not in 0..1", c.Threshold))
	}
	if c.MinSilence < 0 {
		errs = append(errs, fmt.Errorf("recognizer: vad min_silence: %v < 0", c.MinSilence))
	}
	if c.MaxSegment < time.Second {
		errs = append(errs, fmt.Errorf("recognizer: vad max_segment: %v < 1s", c.MaxSegment))
	}
	if c.Padding < 0 || c.Padding > time.Second {
		errs = append(errs, fmt.Errorf("recognizer: vad padding: %v not in 0..1s", c.Padding))
	}
	return errors.Join(errs...)
}

// Span is one segment found by Segment: a stretch of one channel's
// samples, [Start, End) in sample indexes at 16 kHz. (It is not called
// Segment because Go cannot have a type and a function of one name.)
type Span struct {
	Start, End int
}

// Tuning of Segment that is not configuration: it follows from speech
// itself, not from a deployment.
const (
	noiseWindow   = 1500 * time.Millisecond // each side: the floor is the quietest level within it
	noiseFloorMin = -70.0                   // dBFS; digital silence does not make hiss look like speech
	// digitalSilence is the level (dBFS) below which a frame is digital
	// silence, a few LSB at most (a call's padding, a muted line, a codec's
	// zeros), which no recorded pause reaches: the developer test set's
	// quietest frames are -55 to -76 dBFS, the zeros a SIP client sends
	// after its file -88. A segment's padding stops at it (Segment).
	digitalSilence = -80.0
	speechMin      = 50 * time.Millisecond  // speech frames a segment needs (drops clicks)
	mergeGap       = 150 * time.Millisecond // padded segments closer than this are joined
	cutSmooth      = 5                      // frames averaged when looking for the quietest cut point
)

// Segment finds the speech in pcm (16 kHz mono) and returns it as ordered,
// non-overlapping segments. A frame is speech when its energy is
// Threshold-dependent decibels above the local noise floor, the minimum
// smoothed energy within ±1.5 s, so the floor follows slowly changing
// background noise. Pauses shorter than MinSilence stay inside a segment
// (hangover); each segment is padded by Padding and padded segments that
// touch or nearly touch are merged. A segment longer than MaxSegment is cut
// at its quietest frame in the second half of the window, and the pieces
// are adjacent, so no audio between them is lost. Invalid fields are
// replaced by their defaults.
func Segment(pcm []int16, c VADConfig) []Span {
	c.SetDefaults()
	if c.Validate() != nil {
		c = VADConfig{}
		c.SetDefaults()
	}
	frameLen := SampleRate * c.FrameMs / 1000
	nf := len(pcm) / frameLen
	if len(pcm)%frameLen != 0 {
		nf++
	}
	if nf == 0 {
		return nil
	}
	frames := func(d time.Duration) int {
		return max(1, int(d/time.Millisecond)/c.FrameMs)
	}

	// Frame energies in dBFS, lightly smoothed over 3 frames.
	ms := make([]float64, nf)
	for i := range nf {
		end := min((i+1)*frameLen, len(pcm))
		var sum float64
		for _, s := range pcm[i*frameLen : end] {
			v := float64(s)
			sum += v * v
		}
		ms[i] = sum / float64(end-i*frameLen)
	}
	energy := make([]float64, nf)
	for i := range nf {
		sum, n := 0.0, 0
		for j := max(0, i-1); j <= min(nf-1, i+1); j++ {
			sum += ms[j]
			n++
		}
		energy[i] = db(sum / float64(n))
	}

	floor := slidingMin(energy, frames(noiseWindow))
	margin := 4 + 12*c.Threshold
	speech := make([]bool, nf)
	for i := range nf {
		speech[i] = energy[i] > max(floor[i], noiseFloorMin)+margin
	}

	// Hangover: a segment runs from its first speech frame to its last one
	// before a pause of at least MinSilence.
	var segs []Span // in frames for now
	hang := frames(c.MinSilence)
	minSpeech := frames(speechMin)
	start, last, count := -1, -1, 0
	flush := func() {
		if start >= 0 && count >= minSpeech {
			segs = append(segs, Span{start, last + 1})
		}
		start, last, count = -1, -1, 0
	}
	for i := range nf {
		if !speech[i] {
			if start >= 0 && i-last >= hang {
				flush()
			}
			continue
		}
		if start < 0 {
			start = i
		}
		last = i
		count++
	}
	flush()

	// Pad, merge, convert to samples.
	pad := int(c.Padding / time.Millisecond * SampleRate / 1000)
	gap := int(mergeGap / time.Millisecond * SampleRate / 1000)
	maxLen := int(c.MaxSegment / time.Millisecond * SampleRate / 1000)
	var out []Span
	for _, s := range segs {
		seg := Span{max(0, s.Start*frameLen-pad), min(len(pcm), s.End*frameLen+pad)}
		// The padding keeps word edges, not digital silence: cepstra of
		// frames of zeros are far from any speech, and a segment decoded
		// in one pass normalises over them too (a SIP client sends zeros
		// after its speech; on the 18 G.722 recordings of codecbench the
		// batch decode made 0.251 instead of 0.254 without them, issue 41).
		for f := s.Start - 1; f >= 0 && f*frameLen >= seg.Start; f-- {
			if db(ms[f]) < digitalSilence {
				seg.Start = (f + 1) * frameLen
				break
			}
		}
		for f := s.End; f < nf && f*frameLen < seg.End; f++ {
			if db(ms[f]) < digitalSilence {
				seg.End = f * frameLen
				break
			}
		}
		if n := len(out); n > 0 && seg.Start-out[n-1].End < gap {
			prev := &out[n-1]
			if seg.End-prev.Start <= maxLen {
				prev.End = seg.End
				continue
			}
			if seg.Start < prev.End { // overlap: split it in the middle
				mid := (seg.Start + prev.End) / 2
				prev.End, seg.Start = mid, mid
			}
		}
		out = append(out, seg)
	}

	// Cut segments longer than MaxSegment at their quietest frame.
	var res []Span
	for _, s := range out {
		for s.End-s.Start > maxLen {
			cut := quietest(ms, frameLen, s.Start+maxLen/2, s.Start+maxLen)
			res = append(res, Span{s.Start, cut})
			s.Start = cut
		}
		res = append(res, s)
	}
	return res
}

// quietest returns the sample index, a frame boundary in [lo, hi), at the
// start of the cutSmooth frames with the least energy.
func quietest(ms []float64, frameLen, lo, hi int) int {
	f0 := (lo + frameLen - 1) / frameLen
	f1 := hi / frameLen
	best, bestE := f0, math.Inf(1)
	for f := f0; f < f1; f++ {
		var e float64
		for j := max(0, f-cutSmooth/2); j <= min(len(ms)-1, f+cutSmooth/2); j++ {
			e += ms[j]
		}
		if e < bestE {
			best, bestE = f, e
		}
	}
	if best*frameLen <= lo || best*frameLen >= hi {
		return (lo + hi) / 2
	}
	return best * frameLen
}

// db converts a mean square of 16-bit samples to dBFS.
func db(meanSquare float64) float64 {
	return 10 * math.Log10(meanSquare/(32768*32768)+1e-12)
}

// slidingMin returns, for each i, the minimum of x[i-w..i+w], in O(n).
func slidingMin(x []float64, w int) []float64 {
	out := make([]float64, len(x))
	dq := make([]int, 0, 2*w+2) // indexes with increasing values
	next := 0
	for i := range x {
		for ; next < len(x) && next <= i+w; next++ {
			for len(dq) > 0 && x[dq[len(dq)-1]] >= x[next] {
				dq = dq[:len(dq)-1]
			}
			dq = append(dq, next)
		}
		for dq[0] < i-w {
			dq = dq[1:]
		}
		out[i] = x[dq[0]]
	}
	return out
}
