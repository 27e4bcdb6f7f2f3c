package sphinx

import (
	"testing"
	"time"
)

// TestWarmLoadsPool: the decoders New does not load (Config.Preload) are
// loaded in the background without any stream asking, so the first calls
// on a fresh daemon do not wait for model loads. Before, the pool stayed
// at Preload until streams came (the 5th to 8th concurrent call waited
// 4 to 7 s for their first final in livebench).
func TestWarmLoadsPool(t *testing.T) {
	e := warmed(t, Config{Decoders: 3, Preload: 1}, 2) // pool 3, 1 preloaded
	if total, busy := e.Stats(); total != 3 || busy != 0 {
		t.Fatalf("stats %d/%d after warming, want 3/0", total, busy)
	}
	// Streams opened meanwhile never take the pool past its size.
	a, b, c := openStream(t, e), openStream(t, e), openStream(t, e)
	a.Close()
	b.Close()
	c.Close()
	if total, busy := e.Stats(); total != 3 || busy != 0 {
		t.Errorf("stats %d/%d after three streams, want 3/0", total, busy)
	}
}

// TestWarmRacesStreams: streams that load their own decoders while the
// background loading runs leave the pool at its size once they close, and
// Close during the loading waits for it and frees everything.
func TestWarmRacesStreams(t *testing.T) {
	cfg := Config{Decoders: 3, Preload: 1}
	cfg.SetDefaults()
	e, err := New(cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	a, b, c := openStream(t, e), openStream(t, e), openStream(t, e)
	<-e.warmed
	for _, st := range []*Stream{a, b, c} {
		st.Close()
	}
	if total, _ := e.Stats(); total != 3 {
		t.Errorf("total %d after the streams closed, want 3", total)
	}

	e2, err := New(cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	e2.Close() // while the background load runs
	if total, _ := e2.Stats(); total != 0 {
		t.Errorf("total %d after Close, want 0", total)
	}
	e.Close()
	if total, _ := e.Stats(); total != 0 {
		t.Errorf("total %d after Close, want 0", total)
	}
}

// warmed starts an engine of cfg and waits for its background load to end,
// checking Loading on the way: between 1 and most right after New, 0 at
// the end.
func warmed(t *testing.T, cfg Config, most int) *Engine {
	t.Helper()
	cfg.SetDefaults()
	e, err := New(cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	if n := e.Loading(); n < 1 && !closed(e.warmed) || n > most {
		t.Errorf("Loading() = %d right after New, want 1 to %d", n, most)
	}
	select {
	case <-e.warmed:
	case <-time.After(time.Minute):
		t.Fatal("background loading did not end within a minute")
	}
	if n := e.Loading(); n != 0 {
		t.Errorf("Loading() = %d after the background load ended, want 0", n)
	}
	return e
}

// closed reports whether ch is closed (without waiting).
func closed(ch <-chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}

// TestWarmPreparesFirstPass: a pool that serves live streams
// (PrepareFirstPass, the daemon's wideband pool) makes every decoder's
// first-pass search in the background, and counts it in Loading, so a
// live stream does not make it on the decoder's first live use. Before,
// that cost a 30 s wideband session in livebench a quarter of its CPU
// (two bursts of about 0.8 CPU s, one per decoder, mid-call).
func TestWarmPreparesFirstPass(t *testing.T) {
	// One decoder to load, two searches to make.
	e := warmed(t, Config{Decoders: 2, Preload: 1, PrepareFirstPass: true}, 3)
	e.mu.Lock()
	idle, total := len(e.idle), e.total
	for i, d := range e.idle {
		if !d.hasFirstPass {
			t.Errorf("idle decoder %d has no first-pass search", i)
		}
	}
	e.mu.Unlock()
	if idle != 2 || total != 2 {
		t.Errorf("idle %d total %d, want 2 and 2", idle, total)
	}
	// A live stream then switches to it, and the next stream on the
	// decoder decodes with all passes again.
	st := openStream(t, e)
	st.FirstPassOnly()
	if !st.d.firstPass {
		t.Error("the stream is not on the first-pass search")
	}
	st.Close()
	if total, busy := e.Stats(); total != 2 || busy != 0 {
		t.Errorf("stats %d/%d, want 2/0", total, busy)
	}
}
