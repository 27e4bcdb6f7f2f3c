package sphinx

import (
	"slices"
	"testing"

	"github.com/earshot-dev/earshot/config"
	"github.com/earshot-dev/earshot/recognizer"
)

// TestLeanSearch: a first-pass-only pool's decoder decodes on its lean
// search (OverloadMaxHMMsPerFrame) when a stream asks for it, and the next
// stream of the same decoder is back on the full search. With a cap of
// 100 HMMs per frame the lean search cannot hold the clip's words, so a
// lean stream giving the full search's transcript would mean the cap was
// not applied. A pool that is not first pass only has no lean search.
func TestLeanSearch(t *testing.T) {
	cfg := Config{Decoders: 1, FirstPassOnly: true, OverloadMaxHMMsPerFrame: 100}
	cfg.SetDefaults()
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	e, err := New(cfg, recognizer.NewCPU(cfg.LiveDecodes), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	<-e.warmed
	c, pcm := clip(t, "pocketsphinx-goforward.wav")

	st := openStream(t, e)
	if !st.d.hasLean {
		t.Error("the background load did not make the lean search")
	}
	if !st.Lean(true) {
		t.Fatal("Lean(true) on a first-pass-only decoder: not on the lean search")
	}
	writeChunks(t, st, pcm)
	lean, err := st.Finish()
	if err != nil {
		t.Fatal(err)
	}
	if lean.Text == c.Transcript {
		t.Errorf("lean search at 100 HMMs per frame gave the full transcript %q", lean.Text)
	}
	st.Close()

	st = openStream(t, e)
	writeChunks(t, st, pcm)
	if u, err := st.Finish(); err != nil || u.Text != c.Transcript {
		t.Errorf("next stream on the same decoder: %q, %v; want %q", u.Text, err, c.Transcript)
	}
	if st.Lean(false) {
		t.Error("Lean(false) left the stream on the lean search")
	}
	st.Close()

	full := newEngine(t, 1)
	st = openStream(t, full)
	if st.Lean(true) {
		t.Error("a pool that is not first pass only switched to a lean search")
	}
	st.Close()
}

// TestLeanSearchConfig: the lean search's cap defaults for first-pass-only
// pools, -1 turns it off, other pools have none, and out-of-range values
// are refused naming the key.
func TestLeanSearchConfig(t *testing.T) {
	for _, c := range []struct {
		firstPassOnly  bool
		own, set, want int
	}{
		{true, 0, 0, DefaultOverloadMaxHMMsPerFrame}, {true, 5000, 0, DefaultOverloadMaxHMMsPerFrame},
		{true, 5000, 3000, 3000}, {true, 0, -1, 0}, {false, 0, 0, 0}, {false, 0, 3000, 0},
		{true, 800, 0, 0}, {true, 3000, 3000, 0}, // not leaner than the pool's own search
	} {
		cfg := Config{FirstPassOnly: c.firstPassOnly, MaxHMMsPerFrame: c.own, OverloadMaxHMMsPerFrame: c.set}
		if got := cfg.leanMaxHMMs(); got != c.want {
			t.Errorf("first pass only %v, max_hmms_per_frame %d, overload_max_hmms_per_frame %d: lean %d, want %d",
				c.firstPassOnly, c.own, c.set, got, c.want)
		}
	}
	for _, n := range []int{-2, 99, 100001} {
		cfg := Config{OverloadMaxHMMsPerFrame: n}
		cfg.SetDefaults()
		var keys []string
		err := cfg.Validate()
		for _, p := range config.Problems(err) {
			keys = append(keys, p.Key)
		}
		if !slices.Contains(keys, "overload_max_hmms_per_frame") {
			t.Errorf("overload_max_hmms_per_frame %d: %v", n, err)
		}
	}
}
