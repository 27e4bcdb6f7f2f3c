package recognizer_test

import (
	"testing"

	"github.com/earshot-dev/earshot/recognizer"
	"github.com/earshot-dev/earshot/recognizer/recognizertest"
)

// TestLiveSegmentContext streams a clip whose read sentence has pauses of
// 0.5 to 1.5 s between its phrases, on the default session settings (50 ms
// endpointing): the decoder segment goes on through those pauses, so each
// phrase is decoded with the words before it, and each final is read from
// the segment's path a lookahead after its endpoint. Measured 2026-11-24:
// 5 errors in 28 words (0.179); with segments ending at 500 ms pauses and
// finals read at their endpoint, 11 (0.393). The bound adds two words.
func TestLiveSegmentContext(t *testing.T) {
	t.Parallel()
	e := liveEngine(t, 1)
	c, pcm := liveClip(t, "ls-test-clean-1089-134686-0000.wav")
	evs := runLive(t, e, recognizer.LiveConfig{}, pcm)
	hyp := finals(evs, 0)
	wer := recognizertest.WER(c.Transcript, hyp)
	t.Logf("%d finals, WER %.3f: %q", count(evs, recognizer.EventFinal), wer, hyp)
	if wer > 0.25 {
		t.Errorf("WER %.3f, want <= 0.25", wer)
	}
	// A final waits for its lookahead: some final comes after the next
	// utterance's speech_start (the pauses here are shorter than the
	// endpoint, hangover and lookahead together for at least one cut).
	after := false
	open := false
	for _, ev := range evs {
		switch ev.Kind {
		case recognizer.EventSpeechStart:
			open = true
		case recognizer.EventSpeechEnd:
			open = false
		case recognizer.EventFinal:
			after = after || open
		}
	}
	if !after {
		t.Error("no final came after a later utterance's speech_start: finals are not read after a lookahead")
	}
}
