package media

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

var commonRates = []int{8000, 11025, 16000, 22050, 24000, 32000, 44100, 48000}

// fitTone least-squares fits a*sin + b*cos at freq to x (the middle part,
// away from the edges) and returns the fitted amplitude and the residual's
// energy relative to x's, in dB. A tone at exactly freq leaves a tiny
// residual; a shifted frequency or added distortion does not.
func fitTone(x []float32, rate int, freq float64) (amp, residualDB float64) {
	edge := len(x) / 10
	x = x[edge : len(x)-edge]
	var ss, cc, sc, xs, xc, xx float64
	for i, v := range x {
		ph := 2 * math.Pi * freq * float64(i+edge) / float64(rate)
		s, c := math.Sin(ph), math.Cos(ph)
		ss += s * s
		cc += c * c
		sc += s * c
		xs += float64(v) * s
		xc += float64(v) * c
		xx += float64(v) * float64(v)
	}
	det := ss*cc - sc*sc
	a := (xs*cc - xc*sc) / det
	b := (xc*ss - xs*sc) / det
	var res float64
	for i, v := range x {
		ph := 2 * math.Pi * freq * float64(i+edge) / float64(rate)
		d := float64(v) - a*math.Sin(ph) - b*math.Cos(ph)
		res += d * d
	}
	return math.Hypot(a, b), 10 * math.Log10(res/xx+1e-30)
}

func rms(x []float32) float64 {
	var s float64
	for _, v := range x {
		s += float64(v) * float64(v)
	}
	return math.Sqrt(s / float64(len(x)))
}

func resampleAll(t testing.TB, from, to int, in []float32) []float32 {
	t.Helper()
	r, err := NewResampler(from, to)
	if err != nil {
		t.Fatal(err)
	}
	return r.Flush(r.Process(in, nil))
}

// TestResamplerTone checks, for every pair of rates, that a tone well inside
// the passband keeps its frequency (the fit at the expected frequency leaves
// under -60 dB of residual) and its amplitude (within 0.1 dB), and that the
// output has exactly ceil(n*to/from) samples.
func TestResamplerTone(t *testing.T) {
	pairs := [][2]int{{44101, 16000}, {16000, 44101}, {1000, 192000}, {192000, 1000}, {96000, 16000}}
	for _, from := range commonRates {
		for _, to := range commonRates {
			pairs = append(pairs, [2]int{from, to})
		}
	}
	for _, p := range pairs {
		from, to := p[0], p[1]
		t.Run(fmt.Sprintf("%d-%d", from, to), func(t *testing.T) {
			t.Parallel()
			freq := 0.3 * float64(min(from, to)) // 60% of the lower Nyquist
			n := from / 4
			const amp = 0.7
			out := resampleAll(t, from, to, sine(n, from, freq, amp))
			if want := (n*to + from - 1) / from; len(out) != want {
				t.Fatalf("%d samples out, want %d", len(out), want)
			}
			gotAmp, resDB := fitTone(out, to, freq)
			if gain := 20 * math.Log10(gotAmp/amp); math.Abs(gain) > 0.1 {
				t.Errorf("amplitude %.4f, want %.4f (%.3f dB)", gotAmp, amp, gain)
			}
			if resDB > -60 {
				t.Errorf("residual after fitting %.0f Hz is %.1f dB, want < -60 dB", freq, resDB)
			}
		})
	}
}

// TestResamplerAntiAlias checks that tones between the output and input
// Nyquist frequencies are attenuated by at least 40 dB (linear
// interpolation or a filter with its cutoff at the input rate would fold
// them back into the band at nearly full level).
func TestResamplerAntiAlias(t *testing.T) {
	pairs := [][2]int{{48000, 16000}, {44100, 16000}, {22050, 16000}, {32000, 16000}, {16000, 8000}, {48000, 44100}, {44101, 16000}}
	for _, p := range pairs {
		from, to := p[0], p[1]
		for _, frac := range []float64{0.02, 0.5, 0.95} {
			lo, hi := float64(to)/2, float64(from)/2
			freq := lo + frac*(hi-lo)
			t.Run(fmt.Sprintf("%d-%d/%.0fHz", from, to, freq), func(t *testing.T) {
				t.Parallel()
				in := sine(from/4, from, freq, 0.9)
				out := resampleAll(t, from, to, in)
				att := 20 * math.Log10(rms(out[len(out)/10:len(out)*9/10])/rms(in))
				if att > -40 {
					t.Errorf("tone at %.0f Hz (output Nyquist %.0f) comes out at %.1f dB, want <= -40 dB", freq, lo, att)
				}
			})
		}
	}
}

// TestResamplerChunked checks that any chunking of the input, including
// empty and one-sample chunks, gives bit-identical output to one call, and
// that Flush leaves the Resampler ready for a new stream.
func TestResamplerChunked(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, p := range [][2]int{{44100, 16000}, {8000, 16000}, {11025, 16000}, {48000, 16000}, {16000, 16000}, {44101, 16000}} {
		from, to := p[0], p[1]
		t.Run(fmt.Sprintf("%d-%d", from, to), func(t *testing.T) {
			in := make([]float32, from/3)
			for i := range in {
				in[i] = float32(rng.NormFloat64() * 0.2)
			}
			r, err := NewResampler(from, to)
			if err != nil {
				t.Fatal(err)
			}
			want := r.Flush(r.Process(in, nil))
			for round := range 3 {
				var got []float32
				for rest := in; len(rest) > 0; {
					k := min(len(rest), []int{0, 1, 7, 160, 441, 4096}[rng.IntN(6)])
					got = r.Process(rest[:k], got)
					rest = rest[k:]
				}
				got = r.Flush(got)
				if len(got) != len(want) {
					t.Fatalf("round %d: chunked gave %d samples, one-shot %d", round, len(got), len(want))
				}
				for i := range want {
					if got[i] != want[i] {
						t.Fatalf("round %d: sample %d: chunked %v, one-shot %v", round, i, got[i], want[i])
					}
				}
			}
		})
	}
}

func TestResamplerShortStreams(t *testing.T) {
	for _, n := range []int{0, 1, 2, 3, 5} {
		r, err := NewResampler(44100, 16000)
		if err != nil {
			t.Fatal(err)
		}
		out := r.Flush(r.Process(make([]float32, n), nil))
		if want := (n*16000 + 44099) / 44100; len(out) != want {
			t.Errorf("%d samples in: %d out, want %d", n, len(out), want)
		}
	}
}

func TestNewResamplerRates(t *testing.T) {
	for _, tt := range []struct{ from, to int }{{999, 16000}, {16000, 999}, {192001, 16000}, {0, 16000}, {16000, -1}} {
		if _, err := NewResampler(tt.from, tt.to); !errors.Is(err, ErrUnsupported) {
			t.Errorf("NewResampler(%d, %d) err = %v, want ErrUnsupported", tt.from, tt.to, err)
		}
	}
}

func BenchmarkResampler44100To16000(b *testing.B) {
	r, err := NewResampler(44100, 16000)
	if err != nil {
		b.Fatal(err)
	}
	in := sine(44100, 44100, 440, 0.5)
	out := make([]float32, 0, 20000)
	b.SetBytes(int64(len(in) * 4))
	for b.Loop() {
		out = r.Process(in, out[:0])
	}
}
