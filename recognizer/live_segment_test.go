package recognizer_test

import (
	"testing"

	"github.com/earshot-dev/earshot/recognizer"
	"github.com/earshot-dev/earshot/recognizer/recognizertest"
)

// TestLiveSegmentContext streams a clip whose read sentence has pauses of
// 0.5 to 1.5 s between its phrases, on the default session settings (50 ms
// endpointing): the decoder segment goes on through the pauses shorter
// than the endpoint and hangover, so each phrase is decoded with the words
// before it, and each final is read from the segment's path a lookahead
// after its endpoint, or from its lattice's best path when the segment
// ends at a longer pause. Measured 2026-11-24: 5 errors in 28 words
// (0.179); with segments ending at 500 ms pauses and finals read at their
// endpoint, 11 (0.393); 2026-11-25, segments ending at the longer pauses
// with their lattice, 5 again. The bound adds two words.
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
	// A final inside a segment waits for its lookahead: some final comes
	// after the next utterance's speech_start (at least one pause here is
	// shorter than the endpoint and hangover, so the segment goes on
	// through it).
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

// TestLiveFinalLookahead: a final is read from the segment's path 400 ms
// after its endpoint and hangover when speech comes back before the
// segment's pause (docs/live-tuning.md, 2026-11-24 22:33 UTC: better than
// 250 ms on the corpus at 16 kHz and for both G.711 laws), and from the
// best path through the segment's lattice as soon as the pause reaches
// 450 ms, where the segment ends (2026-11-25 01:34 UTC; before, segments
// went on through pauses up to 1.5 s and that final came at 0.65 s too),
// for a wideband and a telephone-band session alike. The clip is "go
// forward ten meters", hiss and the words again; the first final's delay
// is measured from its speech_end to the audio written when it came, 20 ms
// at a time.
func TestLiveFinalLookahead(t *testing.T) {
	t.Parallel()
	e := liveEngine(t, 1)
	_, gf := liveClip(t, "pocketsphinx-goforward.wav")
	// LiveConfig's default endpointing, liveHangover, liveFinalLookahead,
	// liveSegmentPause.
	// The clip's words run from about 0.50 to 2.36 s: the short pause is
	// its own quiet, 0.14 s after the first copy's words and 0.28 s before
	// the second's (longer than the endpoint and hangover, shorter than the
	// segment's pause); the long one 1 s of hiss between whole copies.
	short := cat(gf[0][:int(2.50*recognizer.SampleRate)], gf[0][int(0.22*recognizer.SampleRate):])
	for _, tc := range []struct {
		pause string
		pcm   []int16
		want  float64
	}{
		{"0.3 s", short, 0.050 + 0.200 + 0.400},
		{"1 s", cat(gf[0], liveHiss(recognizer.SampleRate, 20, 4), gf[0]), 0.450},
	} {
		pcm := tc.pcm
		for _, narrow := range []bool{false, true} {
			var written int
			end, delay := -1.0, -1.0
			var text string
			l, err := recognizer.NewLive(e, recognizer.LiveConfig{Channels: 1, Narrowband: narrow}, func(ev recognizer.Event) {
				switch {
				case ev.Kind == recognizer.EventSpeechEnd && end < 0:
					end = ev.Time
				case ev.Kind == recognizer.EventFinal && delay < 0:
					delay, text = float64(written)/recognizer.SampleRate-end, ev.Utterance.Text
				}
			})
			if err != nil {
				t.Fatal(err)
			}
			for i := 0; i < len(pcm); i += liveChunk {
				chunk := pcm[i:min(i+liveChunk, len(pcm))]
				written = i + len(chunk)
				if err := l.Write(t.Context(), [][]int16{chunk}); err != nil {
					t.Fatal(err)
				}
			}
			if err := l.Flush(t.Context()); err != nil {
				t.Fatal(err)
			}
			if err := l.Close(); err != nil {
				t.Fatal(err)
			}
			t.Logf("pause %s, narrowband %v: first final %q %.3f s after its speech_end", tc.pause, narrow, text, delay)
			if text != "go forward ten meters" {
				t.Errorf("pause %s, narrowband %v: first final %q, want %q", tc.pause, narrow, text, "go forward ten meters")
			}
			if lo, hi := tc.want-0.005, tc.want+0.060; delay < lo || delay > hi {
				t.Errorf("pause %s, narrowband %v: first final %.3f s after its speech_end, want %.3f to %.3f", tc.pause, narrow, delay, lo, hi)
			}
		}
	}
}
