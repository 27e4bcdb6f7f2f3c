package media

import (
	"fmt"
	"math"
)

// Resampler design constants. The filter passes up to passEdge of the lower
// Nyquist frequency and stops from the lower Nyquist frequency on, with
// stopbandDB attenuation: nothing above the output Nyquist can alias when
// downsampling, and no image is left when upsampling.
const (
	minRate    = 1000
	maxRate    = 192000
	passEdge   = 0.80 // passband edge, fraction of min(from, to)/2
	stopbandDB = 80.0 // Kaiser design attenuation

	// maxTableLen bounds the precomputed polyphase table (float32 entries).
	// Every pair of the common rates (8000..48000) fits; ratios with a huge
	// reduced numerator interpolate coefficients from a finely sampled
	// prototype instead.
	maxTableLen = 1 << 20
	// protoOversample is the prototype's samples per input sample for that
	// fallback; linear interpolation error is then far below the stopband.
	protoOversample = 4096
)

// Resampler converts a stream of float32 samples from one rate to another
// with a Kaiser-windowed sinc low-pass filter evaluated polyphase at the
// exact rational ratio to/from (reduced by their gcd). It keeps its history
// between Process calls, so any chunking of the input gives bit-identical
// output to a single call, and the output is aligned with the input (output
// sample n is the band-limited input at time n*from/to; the filter's
// look-ahead is drained by Flush). The output of N input samples has exactly
// ceil(N*to/from) samples once flushed.
//
// Cost: 2*W multiply-adds per output sample, where W is about 26 input
// samples, times from/to when downsampling (70 for 44100 to 16000). A
// Resampler is not safe for concurrent use; use one per channel.
type Resampler struct {
	from, to int
	l, m     int64 // to/g, from/g
	w        int   // half-width in input samples; 2*w taps per output
	taps     int

	table []float32 // l phases of taps coefficients, or nil (interpolated)
	proto []float32 // fallback: g(tau) for tau in [0, w] at protoOversample
	scr   []float32 // fallback: one phase's coefficients

	buf    []float32 // input from absolute index base on
	base   int64     // absolute input index of buf[0]
	nIn    int64     // real input samples received
	nOut   int64     // output samples emitted
	phaseI int64     // floor(nOut*m/l)
	phaseF int64     // nOut*m mod l
}

// NewResampler returns a resampler from one sample rate to another (Hz). Any
// pair in 1000..192000 works, identity included; the common rates 8000,
// 11025, 16000, 22050, 24000, 32000, 44100 and 48000 all use a precomputed
// table. Rates outside that range return an error wrapping ErrUnsupported.
func NewResampler(from, to int) (*Resampler, error) {
	if from < minRate || from > maxRate || to < minRate || to > maxRate {
		return nil, fmt.Errorf("%w: resample %d Hz to %d Hz (rates must be %d..%d)", ErrUnsupported, from, to, minRate, maxRate)
	}
	g := gcd(from, to)
	r := &Resampler{from: from, to: to, l: int64(to / g), m: int64(from / g)}
	if from == to {
		return r, nil
	}
	lo := float64(min(from, to))
	fc := (1 + passEdge) / 2 * lo / 2 / float64(from) // cutoff, cycles per input sample
	tw := (1 - passEdge) * lo / 2 / float64(from)     // transition width, same units
	n := (stopbandDB - 8) / (2.285 * 2 * math.Pi * tw)
	r.w = int(math.Ceil(n/2)) + 1
	r.taps = 2 * r.w
	beta := 0.1102 * (stopbandDB - 8.7)
	g0 := func(tau float64) float64 { return kernel(tau, fc, float64(r.w), beta) }

	if r.l*int64(r.taps) <= maxTableLen {
		r.table = make([]float32, int(r.l)*r.taps)
		for p := range int(r.l) {
			phase := r.table[p*r.taps : (p+1)*r.taps]
			frac := float64(p) / float64(r.l)
			sum := 0.0
			for k := range phase {
				sum += g0(frac + float64(r.w-1-k))
			}
			for k := range phase {
				phase[k] = float32(g0(frac+float64(r.w-1-k)) / sum)
			}
		}
	} else {
		r.proto = make([]float32, r.w*protoOversample+2)
		for i := range r.proto {
			r.proto[i] = float32(g0(float64(i) / protoOversample))
		}
		r.scr = make([]float32, r.taps)
	}
	r.reset()
	return r, nil
}

// kernel is the Kaiser-windowed sinc low-pass with cutoff fc (cycles per
// sample) and half-width w, at offset tau samples.
func kernel(tau, fc, w, beta float64) float64 {
	x := tau / w
	if x <= -1 || x >= 1 {
		return 0
	}
	s := 2 * fc
	if tau != 0 {
		a := 2 * math.Pi * fc * tau
		s = math.Sin(a) / (math.Pi * tau)
	}
	return s * besselI0(beta*math.Sqrt(1-x*x)) / besselI0(beta)
}

// besselI0 is the modified Bessel function of the first kind, order 0.
func besselI0(x float64) float64 {
	sum, term := 1.0, 1.0
	for k := 1; k < 200; k++ {
		h := x / (2 * float64(k))
		term *= h * h
		sum += term
		if term < sum*1e-17 {
			break
		}
	}
	return sum
}

func gcd(a, b int) int {
	for b != 0 {
		a, b = b, a%b
	}
	return a
}

// reset returns the resampler to its initial state: w-1 zeros of history
// before the first input sample.
func (r *Resampler) reset() {
	r.buf = r.buf[:0]
	for range r.w - 1 {
		r.buf = append(r.buf, 0)
	}
	r.base = -int64(r.w - 1)
	r.nIn, r.nOut, r.phaseI, r.phaseF = 0, 0, 0, 0
}

// Process resamples in, appending to out and returning it. It emits every
// output sample whose filter window is complete; the rest follow from later
// input or from Flush.
func (r *Resampler) Process(in []float32, out []float32) []float32 {
	if r.from == r.to {
		return append(out, in...)
	}
	r.buf = append(r.buf, in...)
	r.nIn += int64(len(in))
	return r.run(r.nIn, -1, out)
}

// Flush emits the remaining output samples, filling the filter's look-ahead
// with silence, so that the stream's total output is ceil(N*to/from) samples
// for N input samples. It then resets the Resampler, ready for a new stream.
func (r *Resampler) Flush(out []float32) []float32 {
	if r.from == r.to {
		return out
	}
	want := (r.nIn*r.l + r.m - 1) / r.m
	for range r.w + 1 {
		r.buf = append(r.buf, 0)
	}
	out = r.run(r.nIn+int64(r.w)+1, want, out)
	r.reset()
	return out
}

// run emits outputs while their window [i-w+1, i+w] lies below avail (an
// absolute input index), stopping after limit outputs when limit >= 0, then
// drops history no later output needs.
func (r *Resampler) run(avail, limit int64, out []float32) []float32 {
	step, stepF := r.m/r.l, r.m%r.l
	taps := r.taps
	for r.phaseI+int64(r.w) < avail && (limit < 0 || r.nOut < limit) {
		start := int(r.phaseI - int64(r.w-1) - r.base)
		x := r.buf[start : start+taps]
		var h []float32
		if r.table != nil {
			off := int(r.phaseF) * taps
			h = r.table[off : off+taps]
		} else {
			h = r.interpolatedPhase(r.phaseF)
		}
		out = append(out, dot(x, h))
		r.nOut++
		r.phaseI += step
		r.phaseF += stepF
		if r.phaseF >= r.l {
			r.phaseF -= r.l
			r.phaseI++
		}
	}
	// Keep from the next output's first tap on.
	if drop := int(r.phaseI - int64(r.w-1) - r.base); drop > 0 {
		drop = min(drop, len(r.buf))
		n := copy(r.buf, r.buf[drop:])
		r.buf = r.buf[:n]
		r.base += int64(drop)
	}
	return out
}

// interpolatedPhase fills r.scr with the coefficients for fractional offset
// p/l from the oversampled prototype, normalised to unity DC gain.
func (r *Resampler) interpolatedPhase(p int64) []float32 {
	frac := float64(p) / float64(r.l)
	sum := float32(0)
	for k := range r.scr {
		tau := math.Abs(frac + float64(r.w-1-k))
		pos := tau * protoOversample
		i := int(pos)
		v := float32(0)
		if i+1 < len(r.proto) {
			t := float32(pos - float64(i))
			v = r.proto[i] + t*(r.proto[i+1]-r.proto[i])
		}
		r.scr[k] = v
		sum += v
	}
	for k := range r.scr {
		r.scr[k] /= sum
	}
	return r.scr
}

// dot returns the inner product of x and h (same length), eight lanes wide
// (independent sums let the CPU overlap the multiply-adds).
func dot(x, h []float32) float32 {
	h = h[:len(x)]
	var s0, s1, s2, s3, s4, s5, s6, s7 float32
	for len(x) >= 8 && len(h) >= 8 {
		s0 += x[0] * h[0]
		s1 += x[1] * h[1]
		s2 += x[2] * h[2]
		s3 += x[3] * h[3]
		s4 += x[4] * h[4]
		s5 += x[5] * h[5]
		s6 += x[6] * h[6]
		s7 += x[7] * h[7]
		x, h = x[8:], h[8:]
	}
	for i := range x {
		s0 += x[i] * h[i]
	}
	return ((s0 + s1) + (s2 + s3)) + ((s4 + s5) + (s6 + s7))
}
