package sphinx

import (
	"sync"
	"testing"
)

// TestLiveDecodesGated: streams of one process written at the same time
// decode at most LiveDecodes at once, and each still gets its words.
// Before, every stream decoded as its audio came, so as many decoders as
// calls ran C code at once: 8 narrowband calls on a 2-CPU VM cost 0.22 to
// 0.26 CPU s per call-second at PocketSphinx's own search settings, 0.15
// held to one decode per CPU (livebench, docs/live-tuning.md 2026-11-28).
func TestLiveDecodesGated(t *testing.T) {
	const streams = 3
	cfg := Config{Decoders: streams, LiveDecodes: 1}
	cfg.SetDefaults()
	e, err := New(cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	if e.gate == nil || cap(e.gate.slots) != 1 {
		t.Fatalf("engine's gate %+v, want one slot", e.gate)
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
	if p := e.gate.peak.Load(); p != 1 {
		t.Errorf("%d live decodes ran at once, want 1", p)
	}
	for i, got := range texts {
		if got != c.Transcript {
			t.Errorf("stream %d: %q, want %q", i, got, c.Transcript)
		}
	}
}

// TestLiveDecodesSetting: the gate's size comes from LiveDecodes (0: one
// per CPU Go uses), engines with the same setting share one gate, and -1
// means none.
func TestLiveDecodesSetting(t *testing.T) {
	if g := gateOf(Config{LiveDecodes: -1}); g != nil {
		t.Errorf("LiveDecodes -1: gate %+v, want none", g)
	}
	g := gateOf(Config{})
	if g == nil || cap(g.slots) < 1 {
		t.Fatalf("LiveDecodes 0: gate %+v, want one slot per CPU", g)
	}
	if g2 := gateOf(Config{}); g2 != g {
		t.Error("two engines with the same setting got two gates")
	}
	if g5 := gateOf(Config{LiveDecodes: 5}); g5 == nil || cap(g5.slots) != 5 {
		t.Errorf("LiveDecodes 5: gate %+v, want 5 slots", g5)
	}
	var nilGate *decodeGate
	ran := false
	nilGate.do(func() { ran = true })
	if !ran {
		t.Error("a nil gate did not run its decode")
	}
}
