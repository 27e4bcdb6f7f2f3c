package sphinx

import "testing"

// TestSpareDecoder: a checkout that leaves no idle decoder loads one more
// in the background, up to the pool size, so the next stream does not
// wait for a model load. Before, the pool grew only when a stream found
// none idle and loaded its own (on a fresh daemon the 3rd to 8th
// concurrent call waited 4 to 7 s for their first finals in livebench).
func TestSpareDecoder(t *testing.T) {
	cfg := Config{Decoders: 3, Preload: 1}
	cfg.SetDefaults()
	e, err := New(cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	stats := func(wantTotal, wantBusy int) {
		t.Helper()
		e.loads.Wait()
		if total, busy := e.Stats(); total != wantTotal || busy != wantBusy {
			t.Fatalf("stats %d/%d, want %d/%d", total, busy, wantTotal, wantBusy)
		}
	}
	stats(1, 0) // nothing loaded beyond Preload until it is used
	a := openStream(t, e)
	stats(2, 1) // a took the preloaded one; a spare loaded
	e.mu.Lock()
	idle := len(e.idle)
	e.mu.Unlock()
	if idle != 1 {
		t.Fatalf("%d idle decoders after the spare loaded, want 1", idle)
	}
	b := openStream(t, e)
	stats(3, 2)
	c := openStream(t, e)
	stats(3, 3) // the pool is full: no spare past it
	a.Close()
	b.Close()
	c.Close()
	stats(3, 0)
}

// TestSpareRacesStreams: streams that load their own decoders while a
// spare loads leave the pool at its size once they close, and Close
// during a spare's load waits for it and frees everything.
func TestSpareRacesStreams(t *testing.T) {
	cfg := Config{Decoders: 2, Preload: 1}
	cfg.SetDefaults()
	e, err := New(cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	a, b := openStream(t, e), openStream(t, e) // b may load its own beside the spare
	e.loads.Wait()
	a.Close()
	b.Close()
	if total, _ := e.Stats(); total != 2 {
		t.Errorf("total %d after the streams closed, want 2", total)
	}
	e.Close()
	if total, _ := e.Stats(); total != 0 {
		t.Errorf("total %d after Close, want 0", total)
	}

	e2, err := New(cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	s := openStream(t, e2) // starts a spare's load
	s.Close()
	e2.Close() // while the spare may still load
	if total, _ := e2.Stats(); total != 0 {
		t.Errorf("total %d after Close, want 0", total)
	}
}
