package recognizer_test

import (
	"fmt"
	"math"
	"testing"
	"time"

	"github.com/earshot-dev/earshot/recognizer"
	"github.com/earshot-dev/earshot/recognizer/recognizertest"
)

func liveRMS(x []int16) float64 {
	var s float64
	for _, v := range x {
		s += float64(v) * float64(v)
	}
	return math.Sqrt(s / float64(max(1, len(x))))
}

// liveMix adds noise (repeated as needed) to pcm so that the ratio of
// pcm's RMS to the noise's is snrDB.
func liveMix(pcm, noise []int16, snrDB float64) []int16 {
	g := liveRMS(pcm) / liveRMS(noise) / math.Pow(10, snrDB/20)
	out := make([]int16, len(pcm))
	for i, v := range pcm {
		out[i] = int16(max(-32768, min(32767, float64(v)+g*float64(noise[i%len(noise)]))))
	}
	return out
}

// TestLiveEnhancer measures the SpeexDSP enhancer on two clips, clean and
// with white noise at 10 dB SNR, counting word errors over both: it must
// help on the noisy audio and not hurt on the clean audio.
func TestLiveEnhancer(t *testing.T) {
	t.Parallel()
	e := liveEngine(t, 2)
	type run struct {
		clip, cond string
		pcm        []int16
		enh        bool
		ref        []string
		errs       int
	}
	var runs []*run
	for i, file := range []string{"ls-test-clean-1995-1837-0001.wav", "ls-test-clean-1089-134691-0001.wav"} {
		c, pcm := liveClip(t, file)
		pad := make([]int16, recognizer.SampleRate/2) // digital silence around the clip
		clean := cat(pad, pcm[0], pad)
		noisy := liveMix(clean, liveHiss(len(clean), 1000, uint64(6+i)), 10)
		ref := recognizertest.Normalize(c.Transcript)
		for _, enh := range []bool{false, true} {
			runs = append(runs, &run{file, "clean", clean, enh, ref, 0}, &run{file, "noisy", noisy, enh, ref, 0})
		}
	}
	t.Run("run", func(t *testing.T) {
		for _, r := range runs {
			t.Run(fmt.Sprintf("%s/%s/enhancer=%v", r.clip, r.cond, r.enh), func(t *testing.T) {
				t.Parallel()
				cfg := recognizer.LiveConfig{Endpointing: endpointing(300*time.Millisecond, 5*time.Second), AudioEnhancer: r.enh, DecoderWait: time.Minute}
				hyp := finals(runLive(t, e, cfg, [][]int16{r.pcm}), 0)
				r.errs = recognizertest.EditDistance(r.ref, recognizertest.Normalize(hyp))
				t.Logf("%d/%d errors: %q", r.errs, len(r.ref), hyp)
			})
		}
	})
	wer := map[string]float64{} // "clean", "clean+enhancer", ...: over both clips
	words := map[string]int{}
	for _, r := range runs {
		k := r.cond
		if r.enh {
			k += "+enhancer"
		}
		wer[k] += float64(r.errs)
		words[k] += len(r.ref)
	}
	for k := range wer {
		wer[k] /= float64(words[k])
	}
	t.Logf("WER over %d words: clean %.3f, clean+enhancer %.3f, noisy %.3f, noisy+enhancer %.3f",
		words["clean"], wer["clean"], wer["clean+enhancer"], wer["noisy"], wer["noisy+enhancer"])
	// Measured 2026-11-21 (errors of 30 + 17 words): clean 6+3 (0.191),
	// clean+enhancer 5+1 (0.128), noisy 29+15 (0.936), noisy+enhancer
	// 19+13 (0.681). With another noise seed the second clip went 12 -> 13
	// errors: the gain comes mostly from the first clip. (Babble from four
	// other clips at 10 dB on the first clip: 0.867 without, 0.933 with;
	// PocketSphinx fails either way.) In a clean-clone make test on
	// 2026-12-01 (the box loaded): clean 9+4 (0.277), clean+enhancer 9+1
	// (0.213), noisy 28+15 (0.915), noisy+enhancer 23+13 (0.766); a helper
	// run alone that day had clean+enhancer 0.234. The live path changed in
	// between (issues 14 and 41: its search, CMN and segments), which is
	// not traced clip by clip here; the bounds below are relative, and the
	// enhancer's gain held.
	if wer["noisy+enhancer"] >= wer["noisy"]-0.1 {
		t.Errorf("noisy: WER %.3f with the enhancer, %.3f without; want at least 0.1 better", wer["noisy+enhancer"], wer["noisy"])
	}
	if wer["clean+enhancer"] > wer["clean"]+0.045 {
		t.Errorf("clean: WER %.3f with the enhancer, %.3f without; want at most 2 words worse", wer["clean+enhancer"], wer["clean"])
	}
}
