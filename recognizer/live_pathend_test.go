package recognizer_test

import (
	"testing"

	"github.com/earshot-dev/earshot/params"

	"github.com/earshot-dev/earshot/recognizer"
)

// TestLivePathEnded: the clip's speaker ends "go forward ten meters" at
// 2.12 s, and the VAD holds speech through the clip's trailing breath up to
// 2.73 s; its endpoint and hangover then made the final due at 2.98 s, 0.86
// s after the last word. The segment's path has had no new word for the
// endpoint, hangover and livePathStall (0.45 s) by 2.57 s, so the final is
// due at the next block read (pathEnded) and emitted once the lookahead from
// its last word has passed: at most endpoint + hangover + lookahead (0.65 s)
// and a frame after its last word, with the same words.
func TestLivePathEnded(t *testing.T) {
	t.Parallel()
	e := liveEngine(t, 1)
	_, gf := liveClip(t, "pocketsphinx-goforward.wav")
	pcm := cat(gf[0], make([]int16, recognizer.SampleRate))
	evs := runLive(t, e, recognizer.LiveConfig{Endpointing: params.DefaultEndpointing()}, [][]int16{pcm})
	if got := finals(evs, 0); got != "go forward ten meters" {
		t.Errorf("finals %q, want go forward ten meters", got)
	}
	var speechEnd float64
	for _, ev := range evs {
		switch ev.Kind {
		case recognizer.EventSpeechEnd:
			speechEnd = ev.Time
		case recognizer.EventFinal:
			if late := ev.Time - ev.Utterance.End; late > 0.66 {
				t.Errorf("final %q at %.2f s, %.2f s after its last word", ev.Utterance.Text, ev.Time, late)
			}
		}
	}
	// The point of the test: the VAD's speech outlasts the words.
	if last := evs[len(evs)-1]; speechEnd < 2.5 {
		t.Fatalf("speech_end at %.2f s (last event %v): the clip's tail no longer holds the VAD", speechEnd, last.Kind)
	}
}

// TestLivePathEndedInHangover: the goforward clip with its trailing breath
// silenced from 2.58 s and from 2.64 s, so the VAD's speech ends 0.46-0.53
// s after "meters" (2.12 s): past livePathStall, but its endpoint came
// before the next block read of the path (every 200 ms; at 2.64 s the
// endpoint's own frame is the read), and the path-ended rule was not
// applied in the hangover, so the final was due at the hangover's end: 0.72
// and 0.78 s after its last word. It is due at the read as before the
// endpoint: at most endpoint + hangover + lookahead (0.65 s) and a frame
// after its last word, with the same words.
func TestLivePathEndedInHangover(t *testing.T) {
	t.Parallel()
	e := liveEngine(t, 1)
	_, gf := liveClip(t, "pocketsphinx-goforward.wav")
	for _, quiet := range []float64{2.58, 2.64} {
		n := int(quiet * recognizer.SampleRate)
		pcm := cat(gf[0][:n], make([]int16, len(gf[0])-n+recognizer.SampleRate))
		evs := runLive(t, e, recognizer.LiveConfig{Endpointing: params.DefaultEndpointing()}, [][]int16{pcm})
		if got := finals(evs, 0); got != "go forward ten meters" {
			t.Errorf("quiet from %.2f s: finals %q, want go forward ten meters", quiet, got)
		}
		for _, ev := range evs {
			switch ev.Kind {
			case recognizer.EventSpeechEnd:
				// The point of the test: the speech ends past the stall.
				if ev.Time < 2.57 || ev.Time > 2.7 {
					t.Fatalf("quiet from %.2f s: speech_end at %.2f s, want 2.57-2.70", quiet, ev.Time)
				}
			case recognizer.EventFinal:
				if late := ev.Time - ev.Utterance.End; late > 0.66 {
					t.Errorf("quiet from %.2f s: final %q at %.2f s, %.2f s after its last word", quiet, ev.Utterance.Text, ev.Time, late)
				}
			}
		}
	}
}
