package recognizer_test

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/earshot-dev/earshot/recognizer"
	"github.com/earshot-dev/earshot/recognizer/recognizertest"
)

// noise returns n samples of white noise with the given RMS, seeded so
// every run sees the same signal.
func noise(n int, rms float64, seed uint64) []int16 {
	r := rand.New(rand.NewPCG(seed, 1))
	out := make([]int16, n)
	for i := range out {
		out[i] = int16(max(-32768, min(32767, r.NormFloat64()*rms)))
	}
	return out
}

// mix adds b onto a (saturating).
func mix(a, b []int16) []int16 {
	out := slices.Clone(a)
	for i := range min(len(a), len(b)) {
		out[i] = int16(max(-32768, min(32767, int(a[i])+int(b[i]))))
	}
	return out
}

func speech(t *testing.T, file string) []int16 {
	t.Helper()
	return recognizertest.ReadWAV16(t, recognizertest.SpeechDir(t)+"/"+file)[0]
}

const sec = recognizer.SampleRate

// checkSpans asserts spans are ordered, non-empty, inside [0, n) and no
// longer than maxLen, and that every loud 10 ms frame (certainly speech:
// louder than loudDB dBFS) is inside one.
func checkSpans(t *testing.T, spans []recognizer.Span, pcm []int16, maxLen int, loudDB float64) {
	t.Helper()
	prevEnd := 0
	for i, s := range spans {
		if s.Start < prevEnd || s.End <= s.Start || s.End > len(pcm) || s.End-s.Start > maxLen {
			t.Fatalf("span %d %+v bad (previous end %d, %d samples, max %d)", i, s, prevEnd, len(pcm), maxLen)
		}
		prevEnd = s.End
	}
	for f := 0; f+160 <= len(pcm); f += 160 {
		var sum float64
		for _, v := range pcm[f : f+160] {
			sum += float64(v) * float64(v)
		}
		if 10*math.Log10(sum/160/(32768*32768)+1e-12) < loudDB {
			continue
		}
		if !slices.ContainsFunc(spans, func(s recognizer.Span) bool { return s.Start <= f && f+160 <= s.End }) {
			t.Errorf("loud frame at %.2f s not in any span %v", float64(f)/sec, spans)
			return
		}
	}
}

func covered(spans []recognizer.Span, at int) bool {
	return slices.ContainsFunc(spans, func(s recognizer.Span) bool { return s.Start <= at && at < s.End })
}

func TestSegmentNoSpeech(t *testing.T) {
	tests := []struct {
		name string
		pcm  []int16
	}{
		{"empty", nil},
		{"digital silence", make([]int16, 3*sec)},
		{"quiet hiss", noise(3*sec, 30, 1)},
		{"loud steady noise", noise(3*sec, 1000, 2)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := recognizer.Segment(tt.pcm, recognizer.VADConfig{}); len(got) != 0 {
				t.Errorf("spans %v in %s", got, tt.name)
			}
		})
	}
}

// TestSegmentPauses checks two clips separated by a pause give separate
// spans that cover their speech and leave the pause out, also when the
// background noise rises by 24 dB at the pause and stays (the floor adapts
// within about 1.5 s).
func TestSegmentPauses(t *testing.T) {
	a := speech(t, "pocketsphinx-goforward.wav")
	b := speech(t, "ls-test-clean-1089-134691-0000.wav")
	tests := []struct {
		name     string
		laterRMS float64 // noise from the pause on
		loudDB   float64 // frames louder than this must be covered
	}{
		{"quiet pause", 20, -35},
		{"noise rises", 300, -25},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pcm := mix(a, noise(len(a), 20, 3))
			pauseAt := len(pcm)
			later := append(make([]int16, 4*sec), b...)
			pcm = append(pcm, mix(later, noise(len(later), tt.laterRMS, 4))...)
			spans := recognizer.Segment(pcm, recognizer.VADConfig{})
			checkSpans(t, spans, pcm, 20*sec, tt.loudDB)
			if len(spans) < 2 {
				t.Errorf("spans %v: want the pause to split them", spans)
			}
			if at := pauseAt + 5*sec/2; covered(spans, at) {
				t.Errorf("pause at %.2f s inside %v", float64(at)/sec, spans)
			}
		})
	}
}

// TestSegmentLong checks long speech is cut into pieces no longer than
// MaxSegment that together still cover all of it.
func TestSegmentLong(t *testing.T) {
	pcm := speech(t, "ljspeech-LJ001-0007-to-0016-long.wav")
	for _, maxSeg := range []time.Duration{20 * time.Second, 5 * time.Second} {
		t.Run(maxSeg.String(), func(t *testing.T) {
			spans := recognizer.Segment(pcm, recognizer.VADConfig{MaxSegment: maxSeg})
			checkSpans(t, spans, pcm, int(maxSeg.Seconds()*sec), -35)
			if min := int(66 / maxSeg.Seconds()); len(spans) < min {
				t.Errorf("%d spans, want at least %d", len(spans), min)
			}
		})
	}
}

func TestSegmentThreshold(t *testing.T) {
	pcm := mix(append(speech(t, "ls-test-clean-1089-134691-0001.wav"), make([]int16, sec)...), noise(7*sec, 150, 5))
	total := func(th float64) int {
		n := 0
		for _, s := range recognizer.Segment(pcm, recognizer.VADConfig{Threshold: th}) {
			n += s.End - s.Start
		}
		return n
	}
	lax, strict := total(0.01), total(1)
	if lax < strict || strict == 0 {
		t.Errorf("threshold 0.01 keeps %d samples, 1.0 keeps %d", lax, strict)
	}
}

func TestVADConfig(t *testing.T) {
	tests := []struct {
		name string
		c    recognizer.VADConfig
		ok   bool
	}{
		{"defaults", recognizer.VADConfig{}, true},
		{"frame too long", recognizer.VADConfig{FrameMs: 100}, false},
		{"threshold above 1", recognizer.VADConfig{Threshold: 1.5}, false},
		{"threshold NaN", recognizer.VADConfig{Threshold: math.NaN()}, false},
		{"negative silence", recognizer.VADConfig{MinSilence: -time.Second}, false},
		{"tiny max segment", recognizer.VADConfig{MaxSegment: time.Millisecond}, false},
		{"huge padding", recognizer.VADConfig{Padding: time.Minute}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := tt.c
			c.SetDefaults()
			if err := c.Validate(); (err == nil) != tt.ok {
				t.Errorf("Validate() = %v", err)
			}
		})
	}
}

// TestSegmentPaddingStopsAtDigitalSilence: speech followed by zeros (a
// SIP client's padding after its file) gets no padding into the zeros,
// while the same speech followed by a quiet recorded pause keeps its full
// padding.
func TestSegmentPaddingStopsAtDigitalSilence(t *testing.T) {
	pcm := speech(t, "pocketsphinx-goforward.wav")
	tight := recognizer.VADConfig{Padding: time.Millisecond}
	spans := recognizer.Segment(pcm, tight)
	if len(spans) != 1 {
		t.Fatalf("%d segments in the clip, want 1", len(spans))
	}
	speechStart, speechEnd := spans[0].Start+16, spans[0].End-16
	cut := speechEnd + recognizer.SampleRate/20 // 50 ms after the speech
	var vad recognizer.VADConfig
	vad.SetDefaults()
	pad := int(vad.Padding.Seconds() * recognizer.SampleRate)
	const frame = recognizer.SampleRate / 100
	zeros := append(slices.Clone(pcm[:cut]), make([]int16, recognizer.SampleRate)...)
	got := recognizer.Segment(zeros, vad)
	if len(got) != 1 || got[0].End > cut+2*frame || got[0].End < speechEnd {
		t.Errorf("speech ending at %d, zeros from %d: segments %v, want one ending at the zeros", speechEnd, cut, got)
	}
	if got[0].Start != max(0, speechStart-pad) {
		t.Errorf("start %d, want %d (the padding before the speech)", got[0].Start, max(0, speechStart-pad))
	}
	hiss := append(slices.Clone(pcm[:cut]), noise(recognizer.SampleRate, 30, 7)...)
	if got := recognizer.Segment(hiss, vad); len(got) != 1 || got[0].End != speechEnd+pad {
		t.Errorf("speech ending at %d, then a quiet pause: segments %v, want one ending at %d", speechEnd, got, speechEnd+pad)
	}
}
