package recognizer_test

import (
	"testing"

	"github.com/earshot-dev/earshot/params"

	"github.com/earshot-dev/earshot/recognizer"
)

// TestLiveNoSpeech streams sounds that are not speech: nothing may start.
func TestLiveNoSpeech(t *testing.T) {
	t.Parallel()
	e := liveEngine(t, 1)
	tests := []struct {
		name string
		pcm  []int16
	}{
		{"digital silence", make([]int16, 3*recognizer.SampleRate)},
		{"quiet hiss", liveHiss(3*recognizer.SampleRate, 30, 1)},
		{"loud steady hiss", liveHiss(3*recognizer.SampleRate, 2000, 2)},
		{"silence then hiss", cat(make([]int16, recognizer.SampleRate), liveHiss(2*recognizer.SampleRate, 1000, 3))},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			evs := runLive(t, e, recognizer.LiveConfig{Endpointing: params.DefaultEndpointing(), Partials: true}, [][]int16{tt.pcm})
			if len(evs) != 0 {
				t.Errorf("%d events, first %+v", len(evs), evs[0])
			}
		})
	}
}

// TestLiveStartsInSpeech: a session whose first sample is already speech
// (no silence to learn the noise floor from) still transcribes it.
func TestLiveStartsInSpeech(t *testing.T) {
	t.Parallel()
	e := liveEngine(t, 1)
	_, gf := liveClip(t, "pocketsphinx-goforward.wav")
	start := recognizer.SampleRate * 48 / 100 // speech_start of the whole clip is at 0.50 s
	evs := runLive(t, e, recognizer.LiveConfig{Endpointing: params.DefaultEndpointing()}, [][]int16{gf[0][start:]})
	if got := finals(evs, 0); got != "go forward ten meters" {
		t.Errorf("finals %q", got)
	}
	if evs[0].Kind != recognizer.EventSpeechStart || evs[0].Time > 0.1 {
		t.Errorf("first event %v at %.2f s, want speech_start at once", evs[0].Kind, evs[0].Time)
	}
}
