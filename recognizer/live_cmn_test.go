package recognizer_test

import (
	"testing"

	"github.com/earshot-dev/earshot/recognizer"
	"github.com/earshot-dev/earshot/recognizer/recognizertest"
)

// TestLiveShortFirstUtterance: a session whose first sound is short (the
// word "go" of another voice, 0.3 s, then 0.25 s of digital silence)
// transcribes the speech after it about as well as a session without it.
// The first segment's normalisation starts from the short sound blended
// with the model's CMN prior and then follows the speech; before, it was
// the short sound's mean alone, kept for the next 3 s: 19 errors in the
// 36 words, 12 now (without the short sound: 8 before, 11 now).
func TestLiveShortFirstUtterance(t *testing.T) {
	t.Parallel()
	e := liveEngine(t, 1)
	_, gf := liveClip(t, "pocketsphinx-goforward.wav")
	goWord := gf[0][recognizer.SampleRate*48/100 : recognizer.SampleRate*80/100]
	c, pcm := liveClip(t, "ls-dev-clean-2412-153948-0000.wav")
	evs := runLive(t, e, recognizer.LiveConfig{}, [][]int16{cat(goWord, make([]int16, recognizer.SampleRate/4), pcm[0])})
	got := recognizertest.Normalize(finals(evs, 0))
	if len(got) > 0 && got[0] == "go" {
		got = got[1:]
	}
	ref := recognizertest.Normalize(c.Transcript)
	errs := recognizertest.EditDistance(ref, got)
	t.Logf("%d errors in %d words: %q", errs, len(ref), got)
	if errs > 14 { // measured 12; 19 before the CMN prior
		t.Errorf("%d word errors in %d after a short first sound, want at most 14", errs, len(ref))
	}
}
