package sphinx

import (
	"strings"
	"testing"

	"github.com/earshot-dev/earshot/recognizer"
)

// TestFirstPassOnlyPool: a pool made first-pass only (the telephone live
// pool) decodes with -fwdflat off from ps_init (its lattice pass stays:
// TestFirstPassLattice), so a live
// stream's FirstPassOnly makes no search of its own: before, each decoder
// built two more searches (their lexicon trees) on its first live stream,
// and 8 calls on a fresh daemon spent their first 10 s CPU-bound on it
// (livebench N = 8: finals 3 to 4.6 s late). Path and a whole utterance
// still give the clip's words.
func TestFirstPassOnlyPool(t *testing.T) {
	cfg := Config{Decoders: 1, FirstPassOnly: true}
	cfg.SetDefaults()
	if got := strings.Join(searchArgs(cfg), " "); got != "-fwdflat no" {
		t.Errorf("search arguments %q", got)
	}
	e, err := New(cfg, recognizer.NewCPU(cfg.LiveDecodes), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	c, pcm := clip(t, "pocketsphinx-goforward.wav")
	st := openStream(t, e)
	st.FirstPassOnly()
	writeChunks(t, st, pcm)
	if got := pathText(st); got != c.Transcript {
		t.Errorf("path %q, want %q", got, c.Transcript)
	}
	if st.d.hasFirstPass || st.d.firstPass {
		t.Error("the stream made a first-pass search of its own on a first-pass-only decoder")
	}
	if fwdflat, bestpath := st.d.configInt("-fwdflat"), st.d.configInt("-bestpath"); fwdflat != 0 || bestpath != 1 {
		t.Errorf("decoder -fwdflat %d -bestpath %d, want 0 1", fwdflat, bestpath)
	}
	st.Close()
	st = openStream(t, e)
	writeChunks(t, st, pcm)
	if u, err := st.Finish(); err != nil || u.Text != c.Transcript {
		t.Fatalf("next stream: %q, %v", u.Text, err)
	}
}

// TestFirstPassCap: the wideband live pool (Config.Live) caps the HMMs per
// frame at DefaultFirstPassMaxHMMsPerFrame unless the setting is given; a
// full pool's first-pass search (FirstPassOnly on a batch decoder) keeps
// the decoder's own -maxhmmpf, PocketSphinx's 30000 (before, wideband
// streams there got the cap; since 2026-11-28 they decode on the live
// pool). Both decode the clear clip.
func TestFirstPassCap(t *testing.T) {
	for _, c := range []struct{ set, want int }{{0, DefaultFirstPassMaxHMMsPerFrame}, {30000, 30000}, {6000, 6000}} {
		if got := (Config{MaxHMMsPerFrame: c.set}).Live().MaxHMMsPerFrame; got != c.want {
			t.Errorf("max_hmms_per_frame %d: live pool %d, want %d", c.set, got, c.want)
		}
	}
	for _, c := range []struct{ live, all, want int }{{5000, 0, 5000}, {5000, 30000, 5000}, {0, 6000, 6000}} {
		cfg := Config{LiveMaxHMMsPerFrame: c.live, MaxHMMsPerFrame: c.all}
		if got := cfg.Live().MaxHMMsPerFrame; got != c.want {
			t.Errorf("live_max_hmms_per_frame %d, max_hmms_per_frame %d: live pool %d, want %d", c.live, c.all, got, c.want)
		}
		if got := cfg.MaxHMMsPerFrame; got != c.all {
			t.Errorf("live_max_hmms_per_frame %d: the batch pool's -maxhmmpf %d, want %d", c.live, got, c.all)
		}
	}
	c, pcm := clip(t, "pocketsphinx-goforward.wav")
	for _, narrow := range []bool{false, true} {
		e := newEngine(t, 1)
		st, err := e.NewStream(t.Context(), recognizer.StreamOptions{Narrowband: narrow})
		if err != nil {
			t.Fatal(err)
		}
		s := st.(*Stream)
		s.FirstPassOnly()
		if !s.d.firstPass || !s.d.hasFirstPass {
			t.Fatalf("narrowband %v: first pass %v, search made %v; want true, true", narrow, s.d.firstPass, s.d.hasFirstPass)
		}
		if hmm := s.d.configInt("-maxhmmpf"); hmm != 30000 {
			t.Errorf("narrowband %v: decoder -maxhmmpf %d after making the first-pass search, want 30000", narrow, hmm)
		}
		writeChunks(t, s, pcm)
		if got := pathText(s); got != c.Transcript {
			t.Errorf("narrowband %v: path %q, want %q", narrow, got, c.Transcript)
		}
		s.Close()
	}
}

// pathText is the words of the stream's first-pass path so far.
func pathText(s *Stream) string {
	var texts []string
	for _, w := range s.Path() {
		texts = append(texts, w.Word)
	}
	return strings.Join(texts, " ")
}

// TestFirstPassLattice: a first-pass stream's Finish runs the lattice
// pass (the best path through the first pass's word exits, with posterior
// confidences), which recognizer.Live reads a segment's last finals from
// when the segment ends at a pause: wideband, telephone-band on the
// wideband model, and on a first-pass-only pool (the telephone live
// pool's). Before, the first-pass searches had -bestpath off and Finish
// gave the path with every confidence 1.
func TestFirstPassLattice(t *testing.T) {
	c, pcm := clip(t, "pocketsphinx-goforward.wav")
	pool := Config{Decoders: 1, FirstPassOnly: true}
	pool.SetDefaults()
	firstPassPool, err := New(pool, recognizer.NewCPU(pool.LiveDecodes), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { firstPassPool.Close() })
	for _, tc := range []struct {
		name   string
		e      *Engine
		narrow bool
	}{
		{"wideband", newEngine(t, 1), false},
		{"narrowband", newEngine(t, 1), true},
		{"first-pass-only pool", firstPassPool, true},
	} {
		st, err := tc.e.NewStream(t.Context(), recognizer.StreamOptions{Narrowband: tc.narrow})
		if err != nil {
			t.Fatal(err)
		}
		s := st.(*Stream)
		s.FirstPassOnly()
		writeChunks(t, s, pcm)
		u, err := s.Finish()
		s.Close()
		if err != nil || u.Text != c.Transcript {
			t.Fatalf("%s: Finish %q, %v; want %q", tc.name, u.Text, err, c.Transcript)
		}
		posterior := false
		for _, w := range u.Words {
			posterior = posterior || w.Confidence < 0.999
		}
		if !posterior {
			t.Errorf("%s: no posterior confidence (%+v)", tc.name, u.Words)
		}
	}
}

// TestFirstPassPath: a first-pass-only stream reports the words of its
// open utterance (Path) as they come, with times inside the audio and
// confidences in 0..1; its decoder goes back to the full search, so the
// next stream on it decodes with all passes (posterior confidences).
func TestFirstPassPath(t *testing.T) {
	e := newEngine(t, 1)
	c, pcm := clip(t, "pocketsphinx-goforward.wav")
	st := openStream(t, e)
	st.FirstPassOnly()
	if p := st.Path(); p != nil {
		t.Errorf("Path before any audio: %+v", p)
	}
	half := len(pcm) / 2
	writeChunks(t, st, pcm[:half])
	early := st.Path()
	writeChunks(t, st, pcm[half:])
	words := st.Path()
	var texts []string
	for _, w := range words {
		texts = append(texts, w.Word)
		if w.Start < 0 || w.End < w.Start || w.End > float64(len(pcm))/recognizer.SampleRate || w.Confidence < 0 || w.Confidence > 1 {
			t.Errorf("word %+v", w)
		}
	}
	if got := strings.Join(texts, " "); got != c.Transcript {
		t.Errorf("path %q, want %q", got, c.Transcript)
	}
	if len(early) == 0 || len(early) >= len(words) {
		t.Errorf("path at half the audio has %d words, at the end %d", len(early), len(words))
	}
	st.Close()

	st = openStream(t, e)
	u, err := st.Decode(pcm)
	if err != nil || u.Text != c.Transcript {
		t.Fatalf("next stream: %q, %v", u.Text, err)
	}
}

// TestFirstPassThenFullSearch: after a stream on the first-pass-only
// search, the next stream on the same decoder decodes incrementally with
// the full search again. Making the first-pass search had set the shared
// acoustic model up for a one-pass search (no frames kept for the second
// pass), so the next incremental utterance failed to end ("end utterance")
// and a live session with a long endpointing got no finals.
func TestFirstPassThenFullSearch(t *testing.T) {
	e := newEngine(t, 1)
	c, pcm := clip(t, "pocketsphinx-goforward.wav")
	st := openStream(t, e)
	st.FirstPassOnly()
	writeChunks(t, st, pcm)
	if len(st.Path()) == 0 {
		t.Fatal("no first-pass path")
	}
	st.Close()
	st = openStream(t, e)
	writeChunks(t, st, pcm)
	u, err := st.Finish()
	if err != nil || u.Text != c.Transcript {
		t.Fatalf("next stream: %q, %v", u.Text, err)
	}
}
