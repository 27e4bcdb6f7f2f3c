package media

import (
	"math"
	"testing"
)

func TestTmpMeasure(t *testing.T) {
	worstRes, worstGain := -999.0, 0.0
	for _, from := range commonRates {
		for _, to := range commonRates {
			freq := 0.3 * float64(min(from, to))
			out := resampleAll(t, from, to, sine(from/4, from, freq, 0.7))
			a, r := fitTone(out, to, freq)
			worstRes = math.Max(worstRes, r)
			worstGain = math.Max(worstGain, math.Abs(20*math.Log10(a/0.7)))
			// passband edge
		}
	}
	t.Logf("tone: worst residual %.1f dB, worst gain error %.4f dB", worstRes, worstGain)
	for _, p := range [][2]int{{48000, 16000}, {44100, 16000}, {22050, 16000}, {16000, 8000}, {44101, 16000}} {
		from, to := p[0], p[1]
		worst := -999.0
		for f := float64(to) / 2; f < float64(from)/2; f += 50 {
			in := sine(from/4, from, f, 0.9)
			out := resampleAll(t, from, to, in)
			att := 20 * math.Log10(rms(out[len(out)/10:len(out)*9/10])/rms(in))
			worst = math.Max(worst, att)
		}
		// passband gain at 0.8 nyquist
		f := 0.8 * float64(to) / 2
		out := resampleAll(t, from, to, sine(from/4, from, f, 0.9))
		a, _ := fitTone(out, to, f)
		t.Logf("%d->%d: worst stopband %.1f dB; gain at 0.8*Nyq %.2f dB", from, to, worst, 20*math.Log10(a/0.9))
	}
}
