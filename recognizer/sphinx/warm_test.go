package sphinx

import (
	"testing"
	"time"

	"github.com/earshot-dev/earshot/recognizer"
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
	e, err := New(cfg, recognizer.NewCPU(cfg.LiveDecodes), nil)
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

	e2, err := New(cfg, recognizer.NewCPU(cfg.LiveDecodes), nil)
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
	e, err := New(cfg, recognizer.NewCPU(cfg.LiveDecodes), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	if n := e.Loading(); n < 1 && !closed(e.warmed) || n > most {
		t.Errorf("Loading() = %d right after New, want 1 to %d", n, most)
	}
	waitWarmed(t, e)
	if n := e.Loading(); n != 0 {
		t.Errorf("Loading() = %d after the background load ended, want 0", n)
	}
	return e
}

// waitWarmed waits for e's background load to end, a minute at most.
func waitWarmed(t *testing.T, e *Engine) {
	t.Helper()
	select {
	case <-e.warmed:
	case <-time.After(time.Minute):
		t.Fatal("background loading did not end within a minute")
	}
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

// TestLivePool: the wideband model's live pool (Engine.Live) has
// LiveDecoders decoders, as many as Decoders loaded at once and the rest
// in the background, each searching with the first pass only at the
// first-pass cap and without a lean search, and shares the engine's
// lexicon and dictionary; its streams get their words. Before, live
// streams decoded on the engine's own pool of Decoders.
func TestLivePool(t *testing.T) {
	cfg := Config{Decoders: 1, LiveDecoders: 3}
	cfg.SetDefaults()
	e, err := New(cfg, recognizer.NewCPU(cfg.LiveDecodes), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	l, err := e.Live(nil)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	if l.lex != e.lex || &l.dict[0] != &e.dict[0] {
		t.Error("the live pool read its own lexicon or dictionary")
	}
	waitWarmed(t, l)
	if total, _ := l.Stats(); total != 3 {
		t.Errorf("live pool has %d decoders, want 3", total)
	}
	if total, _ := e.Stats(); total != 1 {
		t.Errorf("engine has %d decoders, want 1", total)
	}
	st := openStream(t, l)
	defer st.Close()
	d := st.d
	if !d.firstPassOnly || d.hasLean || d.canLean() {
		t.Errorf("live decoder: first pass only %v, lean search %v/%v; want true, false/false", d.firstPassOnly, d.hasLean, d.canLean())
	}
	if got := d.configInt("-maxhmmpf"); got != DefaultFirstPassMaxHMMsPerFrame {
		t.Errorf("live decoder -maxhmmpf %d, want %d", got, DefaultFirstPassMaxHMMsPerFrame)
	}
	if got := d.configInt("-fwdflat"); got != 0 {
		t.Errorf("live decoder -fwdflat %d, want 0", got)
	}
	st.FirstPassOnly()
	if d.firstPass || d.hasFirstPass {
		t.Error("a live decoder made a first-pass search of its own")
	}
	_, pcm := clip(t, "librivox-sense-and-sensibility-01-0870.wav")
	writeChunks(t, st, pcm)
	u, err := st.Finish()
	if err != nil {
		t.Fatal(err)
	}
	if len(u.Words) < 5 {
		t.Errorf("live pool stream got %d words: %q", len(u.Words), u.Text)
	}
}
