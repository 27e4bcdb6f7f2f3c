package recognizer_test

import (
	"math"
	"slices"
	"testing"

	"github.com/earshot-dev/earshot/params"

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
	evs := runLive(t, e, recognizer.LiveConfig{Endpointing: params.DefaultEndpointing()}, pcm)
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
// for a wideband and a telephone-band session alike; the 400 ms count
// from the end of the final's last word when the VAD's speech_end trails
// it (2026-11-28 03:40 UTC). The clip is "go forward ten meters", hiss and
// the words again; the first final's time is the audio written when it
// came, 20 ms at a time.
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
	// The lookahead counts from the earlier of the speech_end and the end
	// of the final's last word: the VAD holds this clip's speech 0.4 to
	// 0.6 s past "meters" (its room noise), and while the lookahead counted
	// from the speech_end the first final of the 0.3 s case came 1.06 s
	// after its last word. The final is due when the path has had no new
	// word for the endpoint, hangover and 200 ms, though the VAD still holds
	// speech (pathEnded, checked at the decoder's 200 ms blocks, so by the
	// lookahead's start); before (2026-11-29), at the utterance's close,
	// the VAD's endpoint and hangover: 2.98 s here, 0.86 s after the last
	// word.
	const endpointing, hangover, lookahead = 0.050, 0.200, 0.400
	due := func(speechEnd, wordsEnd float64) float64 {
		return min(speechEnd, wordsEnd) + endpointing + hangover + lookahead
	}
	for _, tc := range []struct {
		pause string
		pcm   []int16
		want  func(speechEnd, wordsEnd float64) float64 // when the first final comes
	}{
		{"0.3 s", short, due},
		{"1 s", cat(gf[0], liveHiss(recognizer.SampleRate, 20, 4), gf[0]), func(se, we float64) float64 {
			return min(due(se, we), se+0.450) // or the segment's end
		}},
	} {
		pcm := tc.pcm
		for _, narrow := range []bool{false, true} {
			var written int
			end, at, wordsEnd := -1.0, -1.0, -1.0
			var text string
			l, err := recognizer.NewLive(e, recognizer.LiveConfig{Endpointing: params.DefaultEndpointing(), Channels: 1, Narrowband: narrow}, func(ev recognizer.Event) {
				switch {
				case ev.Kind == recognizer.EventSpeechEnd && end < 0:
					end = ev.Time
				case ev.Kind == recognizer.EventFinal && at < 0:
					at, wordsEnd, text = float64(written)/recognizer.SampleRate, ev.Utterance.End, ev.Utterance.Text
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
			t.Logf("pause %s, narrowband %v: first final %q at %.3f s: %.3f s after its speech_end, %.3f after its last word", tc.pause, narrow, text, at, at-end, at-wordsEnd)
			if text != "go forward ten meters" {
				t.Errorf("pause %s, narrowband %v: first final %q, want %q", tc.pause, narrow, text, "go forward ten meters")
			}
			want := tc.want(end, wordsEnd)
			if lo, hi := want-0.005, want+0.060; at < lo || at > hi {
				t.Errorf("pause %s, narrowband %v: first final at %.3f s (speech_end %.3f, last word's end %.3f), want %.3f to %.3f", tc.pause, narrow, at, end, wordsEnd, lo, hi)
			}
		}
	}
}

// TestLiveSegmentEvents: with LiveConfig.Segments, each decoder segment
// that gave finals ends with an EventSegment after its last final, naming
// exactly the IDs of its finals, with the segment's audio: "go forward ten
// meters" twice, 1 s of hiss between (longer than the segment's 450 ms
// pause: two segments), the audio ending where the segment ended and
// lying within the session's. Without Segments the same session emits
// none and the same finals.
func TestLiveSegmentEvents(t *testing.T) {
	t.Parallel()
	e := liveEngine(t, 1)
	_, gf := liveClip(t, "pocketsphinx-goforward.wav")
	pcm := cat(gf[0], liveHiss(recognizer.SampleRate, 20, 4), gf[0])
	cfg := recognizer.LiveConfig{Endpointing: params.DefaultEndpointing(), Segments: true}
	evs := runLive(t, e, cfg, [][]int16{pcm})
	var ids, segments []int
	for i, ev := range evs {
		switch ev.Kind {
		case recognizer.EventFinal:
			ids = append(ids, ev.ID)
		case recognizer.EventSegment:
			seg := ev.Segment
			if !slices.Equal(seg.IDs, ids) {
				t.Errorf("event %d: segment names finals %v, want %v (the finals since the last segment)", i, seg.IDs, ids)
			}
			end := seg.Start + float64(len(seg.Audio))/recognizer.SampleRate
			if seg.Start < 0 || math.Abs(end-ev.Time) > 1e-9 {
				t.Errorf("event %d: segment audio [%.3f, %.3f], event at %.3f", i, seg.Start, end, ev.Time)
			}
			a := int(math.Round(seg.Start * recognizer.SampleRate))
			if !slices.Equal(seg.Audio, pcm[a:a+len(seg.Audio)]) {
				t.Errorf("event %d: segment audio is not the session's from %.3f s", i, seg.Start)
			}
			segments = append(segments, len(seg.IDs))
			ids = nil
		}
	}
	if len(segments) != 2 || len(ids) != 0 {
		t.Errorf("segments with %v finals, %v finals after the last; want 2 segments, every final in one", segments, ids)
	}
	cfg.Segments = false
	off := runLive(t, e, cfg, [][]int16{pcm})
	if n := count(off, recognizer.EventSegment); n != 0 {
		t.Errorf("%d segment events without LiveConfig.Segments", n)
	}
	if got, want := finals(off, 0), finals(evs, 0); got != want {
		t.Errorf("finals without Segments %q, with %q", got, want)
	}
}
