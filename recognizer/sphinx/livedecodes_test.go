package sphinx

import (
	"sync"
	"testing"

	"github.com/earshot-dev/earshot/recognizer"
)

// TestLiveDecodesGated: streams of one process written at the same time
// decode at most LiveDecodes at once (the process's recognizer.CPU), and each still gets its words.
// Before, every stream decoded as its audio came, so as many decoders as
// calls ran C code at once: 8 narrowband calls on a 2-CPU VM cost 0.22 to
// 0.26 CPU s per call-second at PocketSphinx's own search settings, 0.15
// held to one decode per CPU (livebench, docs/live-tuning.md 2026-11-28).
func TestLiveDecodesGated(t *testing.T) {
	const streams = 3
	cfg := Config{Decoders: streams, LiveDecodes: 1}
	cfg.SetDefaults()
	e, err := New(cfg, recognizer.NewCPU(cfg.LiveDecodes), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	if e.cpu.LiveDecodes() != 1 {
		t.Fatalf("engine's live decodes bound %d, want 1", e.cpu.LiveDecodes())
	}
	c, pcm := clip(t, "pocketsphinx-goforward.wav")
	texts := make([]string, streams)
	var wg sync.WaitGroup
	for i := range streams {
		st := openStream(t, e)
		wg.Go(func() {
			for k := 0; k < len(pcm); k += 160 { // 10 ms, as recognizer.Live writes
				if err := st.Write(pcm[k:min(k+160, len(pcm))]); err != nil {
					t.Error(err)
					return
				}
			}
			u, err := st.Finish()
			if err != nil {
				t.Error(err)
			}
			texts[i] = u.Text
		})
	}
	wg.Wait()
	if p := e.cpu.LivePeak(); p != 1 {
		t.Errorf("%d live decodes ran at once, want 1", p)
	}
	for i, got := range texts {
		if got != c.Transcript {
			t.Errorf("stream %d: %q, want %q", i, got, c.Transcript)
		}
	}
}
