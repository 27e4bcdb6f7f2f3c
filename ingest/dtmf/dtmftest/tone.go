package dtmftest

import (
	"math"

	"github.com/earshot-dev/earshot/ingest/dtmf"
)

// ZeroDBm0 is the peak of a 0 dBm0 sine in 16-bit linear PCM (G.711's
// digital milliwatt).
const ZeroDBm0 = 22700.0

// Spec is one key to synthesise.
type Spec struct {
	Digit byte
	// Samples is the tone's length.
	Samples int
	// Low and High are the two tones' levels in dBm0 (a phone sends
	// about -7 and -5).
	Low, High float64
	// Deviation scales both frequencies by 1+Deviation (0.02: 2 % high).
	Deviation float64
}

// Tone returns the tone of s at rate Hz, as float samples in 16-bit
// scale; nil for a digit that is not a DTMF key.
func Tone(rate int, s Spec) []float64 {
	fl, fh, ok := dtmf.Frequencies(s.Digit)
	if !ok {
		return nil
	}
	al := ZeroDBm0 * math.Pow(10, s.Low/20)
	ah := ZeroDBm0 * math.Pow(10, s.High/20)
	wl := 2 * math.Pi * fl * (1 + s.Deviation) / float64(rate)
	wh := 2 * math.Pi * fh * (1 + s.Deviation) / float64(rate)
	out := make([]float64, s.Samples)
	for n := range out {
		out[n] = al*math.Sin(wl*float64(n)) + ah*math.Sin(wh*float64(n)+1)
	}
	return out
}

// Add mixes tone into pcm from sample at (clipping at full scale; what
// falls past the end is dropped).
func Add(pcm []int16, tone []float64, at int) {
	for i, v := range tone {
		j := at + i
		if j < 0 || j >= len(pcm) {
			continue
		}
		pcm[j] = clip(float64(pcm[j]) + v)
	}
}

func clip(v float64) int16 {
	return int16(max(-32768, min(32767, math.Round(v))))
}

// Placed is a key mixed into a signal: where it is.
type Placed struct {
	Spec
	Start int // first sample
}

// Sequence mixes keys into pcm at rate Hz: the digits of keys, each tone
// ms milliseconds long at the levels of tmpl, the first at sample first,
// then one every every samples. It returns where each went (those that
// fit).
func Sequence(pcm []int16, rate int, keys string, tmpl Spec, first, every int) []Placed {
	var out []Placed
	for i := range len(keys) {
		at := first + i*every
		if at+tmpl.Samples > len(pcm) {
			break
		}
		s := tmpl
		s.Digit = keys[i]
		Add(pcm, Tone(rate, s), at)
		out = append(out, Placed{Spec: s, Start: at})
	}
	return out
}

// Level is the level in dBm0 of a sine of freq Hz in pcm at rate Hz (a
// Goertzel correlation over all of pcm): about its dBm0 for a tone there,
// and very low (-100 and under) for digital silence.
func Level(pcm []int16, rate int, freq float64) float64 {
	if len(pcm) == 0 {
		return math.Inf(-1)
	}
	w := 2 * math.Pi * freq / float64(rate)
	var re, im float64
	for n, x := range pcm {
		re += float64(x) * math.Cos(w*float64(n))
		im -= float64(x) * math.Sin(w*float64(n))
	}
	amp := 2 * math.Hypot(re, im) / float64(len(pcm)) // the sine's peak
	return 20 * math.Log10(max(amp, 1e-9)/ZeroDBm0)
}

// RMS is the level of pcm in dBm0 as a sine of the same power would be.
func RMS(pcm []int16) float64 {
	if len(pcm) == 0 {
		return math.Inf(-1)
	}
	var e float64
	for _, x := range pcm {
		e += float64(x) * float64(x)
	}
	return 10 * math.Log10(max(e/float64(len(pcm)), 1e-9)/(ZeroDBm0*ZeroDBm0/2))
}

// Scale sets pcm's level (RMS) to dbm0, in place (clipping at full scale).
func Scale(pcm []int16, dbm0 float64) {
	g := math.Pow(10, (dbm0-RMS(pcm))/20)
	for i, x := range pcm {
		pcm[i] = clip(float64(x) * g)
	}
}
