package dtmf

import (
	"math"
	"math/cmplx"
)

// The Q.24 checks on one block, as power ratios. Levels are in dBm0 as
// G.711 defines it: a sine of peak 22,700 in 16-bit linear PCM (mu-law's
// digital milliwatt, 3.17 dB under full scale) is 0 dBm0.
const (
	// minLevel is the weakest tone of a pair accepted, in dBm0 (Q.24's
	// operate levels reach about -25 dBm0 per frequency on the worst
	// national networks; quieter than this is reception noise).
	minLevel = -30.0
	// normalTwist bounds how much louder the low tone may be than the
	// high one (dB), reverseTwist the other way (Q.24).
	normalTwist  = 8.0
	reverseTwist = 4.0
	// relativePeak is how much louder the chosen tone of a group must be
	// than each other tone of that group (dB).
	relativePeak = 8.0
	// toneFraction is the share of the block's energy the two tones must
	// carry: 1 for a clean DTMF pair; speech spreads its energy over
	// harmonics and formants and rarely comes near.
	toneFraction = 0.70
	// maxHarmonic bounds a tone's second harmonic relative to the tone
	// (dB), where the harmonic's bin is clear of every other DTMF tone.
	maxHarmonic = -14.0
	// freqTolerance is the largest deviation from the nominal frequency a
	// key's tones may have, measured over its confirmation (Q.24: accept
	// 1.5 %, reject 3.5 %).
	freqTolerance = 0.025
)

// zeroDBm0 is the mean square of a 0 dBm0 sine in 16-bit linear PCM.
const zeroDBm0 = 22700.0 * 22700.0 / 2

// nbins is the frequencies correlated: the eight DTMF tones, then their
// second harmonics in the same order.
const nbins = 16

// analyzer correlates the stream with the DTMF tones in half-blocks of hop
// samples and judges each block of two consecutive halves.
type analyzer struct {
	rate, hop int
	freq      [nbins]float64
	cos, sin  [nbins][]float64  // e^{-jωn} over one half-block
	shift     [nbins]complex128 // e^{-jω·hop}: the second half's phase in a block
	// clearHarmonic says whether a tone's second harmonic lies clear of
	// every DTMF tone (2·697 = 1394 Hz is 58 Hz from 1336: a key's own
	// high tone would leak into it).
	clearHarmonic [8]bool
	minPower      float64 // minLevel as a block's tone power

	acc      [nbins]complex128 // the half-block in progress
	energy   float64
	pos      int
	prev     [nbins]complex128 // the last whole half-block
	prevE    float64
	halves   int           // half-blocks completed (only 0, 1 or 2 matter)
	block    [8]complex128 // the last block's tones, for the phase advance
	hasBlock bool
}

// verdict is one block's judgement.
type verdict struct {
	digit    byte // 0: no key
	row, col int
	// adv is each tone's phase advance since the previous block
	// (B_now·conj(B_prev)); zero when there was none.
	advRow, advCol complex128
}

func newAnalyzer(rate int) *analyzer {
	a := &analyzer{rate: rate, hop: rate * 51 / 8000}
	for i := range 8 {
		f := Low[i%4]
		if i >= 4 {
			f = High[i-4]
		}
		a.freq[i], a.freq[i+8] = f, 2*f
	}
	for k, f := range a.freq {
		w := 2 * math.Pi * f / float64(rate)
		a.cos[k] = make([]float64, a.hop)
		a.sin[k] = make([]float64, a.hop)
		for n := range a.hop {
			a.cos[k][n], a.sin[k][n] = math.Cos(w*float64(n)), -math.Sin(w*float64(n))
		}
		a.shift[k] = cmplx.Exp(complex(0, -w*float64(a.hop)))
	}
	// A bin is clear when no DTMF tone is within 1.5 bins (bins are
	// rate/block Hz wide).
	bin := float64(rate) / float64(2*a.hop)
	for k := range 8 {
		a.clearHarmonic[k] = true
		for _, f := range a.freq[:8] {
			if math.Abs(a.freq[k+8]-f) < 1.5*bin {
				a.clearHarmonic[k] = false
			}
		}
	}
	// A sine of mean square m over N samples has power N·m in its bin
	// (power below is |B|²·2/N).
	a.minPower = float64(2*a.hop) * zeroDBm0 * math.Pow(10, minLevel/10)
	return a
}

// push takes one sample; at the end of each half-block after the first it
// judges the block the last two halves make, and returns true with it.
func (a *analyzer) push(x int16) (verdict, bool) {
	v := float64(x)
	p := a.pos
	for k := range nbins {
		a.acc[k] += complex(v*a.cos[k][p], v*a.sin[k][p])
	}
	a.energy += v * v
	a.pos++
	if a.pos < a.hop {
		return verdict{}, false
	}
	a.pos = 0
	var b [nbins]complex128
	for k := range nbins {
		b[k] = a.prev[k] + a.acc[k]*a.shift[k]
	}
	e := a.prevE + a.energy
	a.prev, a.prevE = a.acc, a.energy
	a.acc, a.energy = [nbins]complex128{}, 0
	a.halves++
	if a.halves < 2 {
		return verdict{}, false
	}
	a.halves = 2
	vd := a.judge(&b, e)
	if a.hasBlock && vd.digit != 0 {
		// A tone at the bin's frequency advances by ω·hop: shift takes
		// it out, leaving the deviation's advance.
		vd.advRow = b[vd.row] * cmplx.Conj(a.block[vd.row]) * a.shift[vd.row]
		vd.advCol = b[vd.col+4] * cmplx.Conj(a.block[vd.col+4]) * a.shift[vd.col+4]
	}
	copy(a.block[:], b[:8])
	a.hasBlock = true
	return vd, true
}

// judge applies the Q.24 checks to one block's correlations b and energy e.
func (a *analyzer) judge(b *[nbins]complex128, e float64) verdict {
	var p [nbins]float64
	n := float64(2 * a.hop)
	for k := range nbins {
		re, im := real(b[k]), imag(b[k])
		p[k] = (re*re + im*im) * 2 / n
	}
	r, c := peak(p[0:4]), peak(p[4:8])
	pr, pc := p[r], p[c+4]
	peakRatio := math.Pow(10, relativePeak/10)
	switch {
	case pr < a.minPower || pc < a.minPower:
		return verdict{}
	case pr > pc*math.Pow(10, normalTwist/10) || pc > pr*math.Pow(10, reverseTwist/10):
		return verdict{}
	case pr+pc < toneFraction*e:
		return verdict{}
	}
	for k := range 4 {
		if k != r && p[k]*peakRatio > pr || k != c && p[k+4]*peakRatio > pc {
			return verdict{}
		}
	}
	harmonic := math.Pow(10, maxHarmonic/10)
	for _, k := range [2]int{r, c + 4} {
		if a.clearHarmonic[k] && p[k+8] > harmonic*p[k] {
			return verdict{}
		}
	}
	return verdict{digit: digits[r][c], row: r, col: c}
}

// deviation is the relative deviation from the nominal frequency of bin k
// that a summed phase advance adv (over one hop) measures.
func (a *analyzer) deviation(k int, adv complex128) float64 {
	df := cmplx.Phase(adv) * float64(a.rate) / (2 * math.Pi * float64(a.hop))
	return df / a.freq[k]
}

// peak is the index of the largest of p.
func peak(p []float64) int {
	best := 0
	for i := range p {
		if p[i] > p[best] {
			best = i
		}
	}
	return best
}
