package speexdsp_test

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/earshot-dev/earshot/recognizer/recognizertest"
	"github.com/earshot-dev/earshot/recognizer/speexdsp"
)

const frame = 160 // 10 ms at 16 kHz

func newPre(t *testing.T, cfg speexdsp.Config) *speexdsp.Preprocessor {
	t.Helper()
	cfg.SetDefaults()
	p, err := speexdsp.New(frame, 16000, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	return p
}

func hiss(n int, rms float64) []int16 {
	r := rand.New(rand.NewPCG(1, 2))
	out := make([]int16, n)
	for i := range out {
		out[i] = int16(max(-32768, min(32767, r.NormFloat64()*rms)))
	}
	return out
}

func rms(x []int16) float64 {
	var s float64
	for _, v := range x {
		s += float64(v) * float64(v)
	}
	return math.Sqrt(s / float64(len(x)))
}

// process runs x through p frame by frame (in place) and returns it.
func process(p *speexdsp.Preprocessor, x []int16) []int16 {
	for i := 0; i+frame <= len(x); i += frame {
		p.Process(x[i : i+frame])
	}
	return x
}

func TestConfig(t *testing.T) {
	tests := []struct {
		name string
		edit func(*speexdsp.Config)
		key  string
	}{
		{"defaults", func(*speexdsp.Config) {}, ""},
		{"all off", func(c *speexdsp.Config) { c.DisableAGC, c.DisableDenoise = true, true }, ""},
		{"suppress +3", func(c *speexdsp.Config) { c.NoiseSuppressDB = 3 }, "noise_suppress_db"},
		{"suppress -90", func(c *speexdsp.Config) { c.NoiseSuppressDB = -90 }, "noise_suppress_db"},
		{"level 40000", func(c *speexdsp.Config) { c.AGCLevel = 40000 }, "agc_level"},
		{"level NaN", func(c *speexdsp.Config) { c.AGCLevel = math.NaN() }, "agc_level"},
		{"max gain 70", func(c *speexdsp.Config) { c.AGCMaxGainDB = 70 }, "agc_max_gain_db"},
		{"increment -1", func(c *speexdsp.Config) { c.AGCIncrementDB = -1 }, "agc_increment_db"},
		{"decrement +1", func(c *speexdsp.Config) { c.AGCDecrementDB = 1 }, "agc_decrement_db"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var c speexdsp.Config
			c.SetDefaults()
			tt.edit(&c)
			err := c.Validate()
			if tt.key == "" {
				if err != nil {
					t.Fatalf("valid config rejected: %v", err)
				}
				p, err := speexdsp.New(frame, 16000, c)
				if err != nil {
					t.Fatal(err)
				}
				p.Close()
				return
			}
			if err == nil || !strings.Contains(err.Error(), "speexdsp: "+tt.key+":") {
				t.Errorf("error %v, want one naming %s", err, tt.key)
			}
			if _, err := speexdsp.New(frame, 16000, c); err == nil {
				t.Error("New accepted an invalid config")
			}
		})
	}
}

func TestNewBadFrame(t *testing.T) {
	var c speexdsp.Config
	c.SetDefaults()
	for _, tt := range []struct{ frame, rate int }{{0, 16000}, {16, 16000}, {1600, 16000}, {160, 4000}, {160, 96000}} {
		if p, err := speexdsp.New(tt.frame, tt.rate, c); err == nil {
			p.Close()
			t.Errorf("frame %d at %d Hz accepted", tt.frame, tt.rate)
		}
	}
}

// TestDenoise: on steady white noise the denoiser attenuates by about its
// configured suppression once its estimate has settled; with denoise and
// AGC off the audio passes unchanged.
func TestDenoise(t *testing.T) {
	in := hiss(3*16000, 1000)
	p := newPre(t, speexdsp.Config{DisableAGC: true})
	out := process(p, append([]int16(nil), in...))
	tail := 16000 // the last second, after adaptation
	gain := 20 * math.Log10(rms(out[len(out)-tail:])/rms(in[len(in)-tail:]))
	t.Logf("steady noise: %.1f dB", gain)
	if gain > -8 {
		t.Errorf("noise attenuated by %.1f dB, want at least 8 (suppression -15 dB)", -gain)
	}

	off := newPre(t, speexdsp.Config{DisableAGC: true, DisableDenoise: true})
	out = process(off, append([]int16(nil), in...))
	if g := 20 * math.Log10(rms(out[tail:])/rms(in[tail:])); math.Abs(g) > 1 {
		t.Errorf("all off: gain %.1f dB, want about 0", g)
	}
}

// TestAGC: quiet real speech (-40 dB) is brought up towards the target
// level, by at most the maximum gain.
func TestAGC(t *testing.T) {
	dir := recognizertest.SpeechDir(t)
	speech := recognizertest.ReadWAV16(t, dir+"/ls-test-clean-1995-1837-0001.wav")[0]
	quiet := make([]int16, len(speech))
	for i, v := range speech {
		quiet[i] = int16(float64(v) / 100)
	}
	p := newPre(t, speexdsp.Config{DisableDenoise: true})
	out := process(p, append([]int16(nil), quiet...))
	half := len(out) / 2
	gain := 20 * math.Log10(rms(out[half:])/rms(quiet[half:]))
	t.Logf("quiet speech: +%.1f dB in the second half", gain)
	if gain < 10 || gain > 20.5 {
		t.Errorf("AGC gain %.1f dB, want 10..20 (max gain 20)", gain)
	}
}

func TestProcessEdges(t *testing.T) {
	p := newPre(t, speexdsp.Config{})
	if p.FrameSize() != frame {
		t.Errorf("FrameSize %d", p.FrameSize())
	}
	x := hiss(frame+10, 3000)
	orig := append([]int16(nil), x...)
	p.Process(x)
	if !equal(x[frame:], orig[frame:]) {
		t.Error("trailing partial frame changed")
	}
	p.Process(x[:frame-1]) // short: untouched, no crash
	for range 2 {
		if err := p.Close(); err != nil {
			t.Fatal(err)
		}
	}
	y := append([]int16(nil), orig...)
	p.Process(y)
	if !equal(y, orig) {
		t.Error("Process after Close changed audio")
	}
}

func equal(a, b []int16) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
