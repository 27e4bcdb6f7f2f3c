package dtmf_test

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/earshot-dev/earshot/ingest/dtmf"
	"github.com/earshot-dev/earshot/ingest/dtmf/dtmftest"
)

const allKeys = "123A456B789C*0#D"

// run filters pcm in chunks of chunk samples and returns the whole output
// and every key.
func run(t *testing.T, rate int, pcm []int16, chunk int) ([]int16, []dtmf.Key) {
	t.Helper()
	f, err := dtmf.New(rate)
	if err != nil {
		t.Fatal(err)
	}
	var out []int16
	var keys []dtmf.Key
	for len(pcm) > 0 {
		n := min(chunk, len(pcm))
		o, k := f.Write(pcm[:n])
		out, keys = append(out, o...), append(keys, k...)
		pcm = pcm[n:]
	}
	o, k := f.Flush()
	return append(out, o...), append(keys, k...)
}

// ms is milliseconds as samples at rate.
func ms(rate int, m float64) int { return int(m * float64(rate) / 1000) }

// toneIn is a signal of 300 ms silence, the tone, 300 ms silence.
func toneIn(rate int, s dtmftest.Spec) ([]int16, int) {
	at := ms(rate, 300)
	pcm := make([]int16, at+s.Samples+ms(rate, 300))
	dtmftest.Add(pcm, dtmftest.Tone(rate, s), at)
	return pcm, at
}

func TestEveryKey(t *testing.T) {
	for _, rate := range []int{8000, 16000} {
		for i := range len(allKeys) {
			d := allKeys[i]
			s := dtmftest.Spec{Digit: d, Samples: ms(rate, 80), Low: -7, High: -5}
			pcm, at := toneIn(rate, s)
			out, keys := run(t, rate, pcm, 160)
			if len(out) != len(pcm) {
				t.Fatalf("%d Hz %c: %d samples out of %d", rate, d, len(out), len(pcm))
			}
			if len(keys) != 1 || keys[0].Digit != d {
				t.Fatalf("%d Hz %c: keys %v", rate, d, keys)
			}
			k := keys[0]
			if e := abs(k.Start - int64(at)); e > int64(ms(rate, 5)) {
				t.Errorf("%d Hz %c: start %d, tone at %d", rate, d, k.Start, at)
			}
			if e := abs(k.Duration - int64(s.Samples)); e > int64(ms(rate, 10)) {
				t.Errorf("%d Hz %c: duration %d, tone %d", rate, d, k.Duration, s.Samples)
			}
			// The tone is gone from the output, speech-free silence kept.
			for j := at; j < at+s.Samples; j++ {
				if out[j] != 0 {
					t.Fatalf("%d Hz %c: sample %d of the tone passed on (%d)", rate, d, j-at, out[j])
				}
			}
		}
	}
}

func abs(x int64) int64 { return max(x, -x) }

// detects reports whether s alone in silence is found as its key.
func detects(t *testing.T, rate int, s dtmftest.Spec) bool {
	t.Helper()
	pcm, _ := toneIn(rate, s)
	out, keys := run(t, rate, pcm, 333)
	if len(keys) == 0 {
		if !slices.Equal(out, pcm) {
			t.Errorf("%+v: no key, but the audio was changed", s)
		}
		return false
	}
	if len(keys) != 1 || keys[0].Digit != s.Digit {
		t.Errorf("%+v: keys %v", s, keys)
	}
	return true
}

func TestQ24Limits(t *testing.T) {
	tests := []struct {
		name      string
		low, high float64 // dBm0
		dev       float64
		ms        float64
		want      bool
	}{
		{"nominal", -7, -5, 0, 60, true},
		{"normal twist 7 dB", -4, -11, 0, 60, true},
		{"normal twist 10 dB", -4, -14, 0, 60, false},
		{"reverse twist 3 dB", -9, -6, 0, 60, true},
		{"reverse twist 6 dB", -10, -4, 0, 60, false},
		{"plus 1.5 %", -7, -5, 0.015, 60, true},
		{"minus 1.5 %", -7, -5, -0.015, 60, true},
		{"plus 3.5 %", -7, -5, 0.035, 60, false},
		{"minus 3.5 %", -7, -5, -0.035, 60, false},
		{"weak -25 dBm0", -25, -25, 0, 60, true},
		{"too weak -36 dBm0", -36, -36, 0, 60, false},
		{"40 ms", -7, -5, 0, 40, true},
		{"23 ms", -7, -5, 0, 23, false},
		{"15 ms", -7, -5, 0, 15, false},
	}
	for _, rate := range []int{8000, 16000} {
		for _, tt := range tests {
			for i := range len(allKeys) {
				s := dtmftest.Spec{Digit: allKeys[i], Samples: ms(rate, tt.ms), Low: tt.low, High: tt.high, Deviation: tt.dev}
				if got := detects(t, rate, s); got != tt.want {
					t.Errorf("%d Hz %s, key %c: detected %v, want %v", rate, tt.name, s.Digit, got, tt.want)
				}
			}
		}
	}
}

func TestTiming(t *testing.T) {
	const rate = 8000
	tone := func(d byte, m float64) []float64 {
		return dtmftest.Tone(rate, dtmftest.Spec{Digit: d, Samples: ms(rate, m), Low: -7, High: -5})
	}
	t.Run("40 ms pauses separate keys", func(t *testing.T) {
		pcm := make([]int16, ms(rate, 1000))
		for i := range 5 {
			dtmftest.Add(pcm, tone('5', 50), ms(rate, 100+float64(i)*90))
		}
		if _, keys := run(t, rate, pcm, 80); len(keys) != 5 {
			t.Errorf("50 ms tones 40 ms apart: %d keys, want 5", len(keys))
		}
	})
	t.Run("a 10 ms break does not split a key", func(t *testing.T) {
		pcm := make([]int16, ms(rate, 600))
		dtmftest.Add(pcm, tone('9', 100), ms(rate, 100))
		dtmftest.Add(pcm, tone('9', 100), ms(rate, 210))
		_, keys := run(t, rate, pcm, 80)
		if len(keys) != 1 {
			t.Fatalf("%d keys, want 1", len(keys))
		}
		if d := keys[0].Duration; abs(d-int64(ms(rate, 210))) > int64(ms(rate, 10)) {
			t.Errorf("duration %d samples, want about %d", d, ms(rate, 210))
		}
	})
	t.Run("keys in a row", func(t *testing.T) {
		pcm := make([]int16, ms(rate, 2000))
		placed := dtmftest.Sequence(pcm, rate, allKeys, dtmftest.Spec{Samples: ms(rate, 60), Low: -7, High: -5}, ms(rate, 50), ms(rate, 110))
		_, keys := run(t, rate, pcm, 80)
		if len(keys) != len(placed) {
			t.Fatalf("%d keys, want %d", len(keys), len(placed))
		}
		for i, k := range keys {
			if k.Digit != placed[i].Digit || abs(k.Start-int64(placed[i].Start)) > int64(ms(rate, 5)) {
				t.Errorf("key %d: %c at %d, want %c at %d", i, k.Digit, k.Start, placed[i].Digit, placed[i].Start)
			}
		}
	})
	t.Run("a held key is one key", func(t *testing.T) {
		pcm := make([]int16, ms(rate, 5000))
		dtmftest.Add(pcm, tone('#', 4000), ms(rate, 200))
		_, keys := run(t, rate, pcm, 160)
		if len(keys) != 1 || abs(keys[0].Duration-int64(ms(rate, 4000))) > int64(ms(rate, 10)) {
			t.Errorf("keys %v, want one of 4 s", keys)
		}
	})
	t.Run("a key sounding at the end", func(t *testing.T) {
		pcm := make([]int16, ms(rate, 300))
		dtmftest.Add(pcm, tone('0', 200), ms(rate, 100))
		out, keys := run(t, rate, pcm, 160)
		if len(keys) != 1 || len(out) != len(pcm) {
			t.Errorf("%d keys, %d samples of %d", len(keys), len(out), len(pcm))
		}
	})
}

// TestChunking: any split of the same input gives the same output and keys,
// and every Write returns exactly what the lookahead lets out.
func TestChunking(t *testing.T) {
	const rate = 8000
	rng := rand.New(rand.NewPCG(1, 2))
	pcm := make([]int16, ms(rate, 3000))
	for i := range pcm {
		pcm[i] = int16(rng.IntN(200) - 100)
	}
	dtmftest.Sequence(pcm, rate, "1470", dtmftest.Spec{Samples: ms(rate, 70), Low: -8, High: -6}, ms(rate, 400), ms(rate, 500))
	want, wantKeys := run(t, rate, pcm, len(pcm))
	if len(wantKeys) != 4 {
		t.Fatalf("%d keys, want 4", len(wantKeys))
	}
	for range 20 {
		f, _ := dtmf.New(rate)
		var out []int16
		var keys []dtmf.Key
		in := 0
		for in < len(pcm) {
			n := min(rng.IntN(700), len(pcm)-in)
			o, k := f.Write(pcm[in : in+n])
			in += n
			out, keys = append(out, o...), append(keys, k...)
			if len(out) != max(0, in-f.Lookahead()) {
				t.Fatalf("after %d samples in, %d out (lookahead %d)", in, len(out), f.Lookahead())
			}
		}
		o, k := f.Flush()
		out, keys = append(out, o...), append(keys, k...)
		if !slices.Equal(out, want) || !slices.Equal(keys, wantKeys) {
			t.Fatal("a different split changed the output")
		}
	}
}

func TestNewRate(t *testing.T) {
	for _, r := range []int{0, -8000, 11025, 48000} {
		if _, err := dtmf.New(r); err == nil {
			t.Errorf("New(%d) took it", r)
		}
	}
}

// BenchmarkFilter is the cost of a second of audio at each rate, written
// 20 ms at a time (a call's packets).
func BenchmarkFilter(b *testing.B) {
	for _, rate := range []int{8000, 16000} {
		b.Run(fmt.Sprint(rate), func(b *testing.B) {
			rng := rand.New(rand.NewPCG(3, 4))
			pcm := make([]int16, rate)
			for i := range pcm {
				pcm[i] = int16(rng.IntN(2000) - 1000)
			}
			f, _ := dtmf.New(rate)
			b.ResetTimer()
			for range b.N {
				for i := 0; i < len(pcm); i += rate / 50 {
					f.Write(pcm[i : i+rate/50])
				}
			}
		})
	}
}
