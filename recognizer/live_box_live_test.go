package recognizer_test

import (
	"testing"

	"github.com/earshot-dev/earshot/params"

	"github.com/earshot-dev/earshot/recognizer"
	"github.com/earshot-dev/earshot/recognizer/sphinx"
)

// TestLiveBoxCountsSegments: a session's decoder segments on a pool with a
// lean search count in the box's meter while they decode and out when
// they end (at a pause, Flush or Close), so the meter knows how many calls
// decode at once.
func TestLiveBoxCountsSegments(t *testing.T) {
	cfg := sphinx.Config{Decoders: 1, FirstPassOnly: true}
	cfg.SetDefaults()
	e, err := sphinx.New(cfg, recognizer.NewCPU(cfg.LiveDecodes), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	_, chans := liveClip(t, "pocketsphinx-goforward.wav")
	pcm := chans[0]
	box := recognizer.NewBoxLoad()
	for _, end := range []string{"flush", "close"} {
		l, err := recognizer.NewLive(e, recognizer.LiveConfig{Endpointing: params.DefaultEndpointing(), BoxLoad: box}, func(recognizer.Event) {})
		if err != nil {
			t.Fatal(err)
		}
		peak := 0
		for i := 0; i < len(pcm); i += liveChunk {
			if err := l.Write(t.Context(), [][]int16{pcm[i:min(i+liveChunk, len(pcm))]}); err != nil {
				t.Fatal(err)
			}
			peak = max(peak, recognizer.BoxOpen(box))
		}
		if peak != 1 {
			t.Errorf("%s: at most %d segments counted while one decoded, want 1", end, peak)
		}
		if end == "flush" {
			err = l.Flush(t.Context())
		}
		l.Close()
		if n := recognizer.BoxOpen(box); err != nil || n != 0 {
			t.Errorf("%s: %d segments counted after the end (%v), want 0", end, n, err)
		}
	}
}
