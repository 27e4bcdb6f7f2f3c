package sphinx

import (
	"errors"
	"slices"
	"strings"
	"testing"
)

// TestChooseScoresAlternativesAlike: Choose picks the decoder's own
// hypothesis over the text of another clip, whichever order they come in,
// an alternative's identity not its position deciding; and it leaves the
// stream decoding as before.
func TestChooseScoresAlternativesAlike(t *testing.T) {
	e := newEngine(t, 1)
	_, pcm := clip(t, "ls-test-clean-1089-134691-0000.wav")
	st := openStream(t, e)
	before, err := st.Decode(pcm)
	if err != nil {
		t.Fatal(err)
	}
	own := strings.Fields(before.Text)
	// Live finals and the batch pass of this clip through a G.722 call
	// (codecbench, 2026-11-29): they agree here, so a wrong one is made
	// from another clip's batch text.
	other := strings.Fields("for a full hour he had paste up without waking")
	for _, alts := range [][][]string{{own, other}, {other, own}} {
		i, err := st.Choose(pcm, alts)
		if err != nil {
			t.Fatal(err)
		}
		if strings.Join(alts[i], " ") != before.Text {
			t.Errorf("Choose(%q) picked %q, want the decoder's own %q", alts, alts[i], before.Text)
		}
	}
	after, err := st.Decode(pcm)
	if err != nil {
		t.Fatal(err)
	}
	if after.Text != before.Text || len(after.Words) != len(before.Words) || after.Confidence != before.Confidence {
		t.Errorf("Decode after Choose: %q (confidence %v), before: %q (%v)", after.Text, after.Confidence, before.Text, before.Confidence)
	}
}

// TestChooseLiveOrBatch: on real outputs that differ (the live finals and
// the batch pass of a G.722 call over ls-test-clean-1089-134686-0000,
// codecbench 2026-11-29), Choose gives the same answer in either order.
func TestChooseLiveOrBatch(t *testing.T) {
	e := newEngine(t, 1)
	_, pcm := clip(t, "ls-test-clean-1089-134686-0000.wav")
	st := openStream(t, e)
	live := strings.Fields("he hoped there would be stew for dinner turnips and carrots and bruised potatoes and fast mcbean pieces to be labeled out in thick peppered flower fat and sauce")
	batch := strings.Fields("he hoped there would be stew for dinner turn up some carrots and bruised potatoes in fact mutton pieces to be labeled out and thick peppered flower fat and sauce")
	a, err := st.Choose(pcm, [][]string{live, batch})
	if err != nil {
		t.Fatal(err)
	}
	b, err := st.Choose(pcm, [][]string{batch, live})
	if err != nil {
		t.Fatal(err)
	}
	if a != 1-b {
		t.Errorf("live first: %d, batch first: %d; the same alternative should win", a, b)
	}
	// Scores at the decoder's -lw are Choose's: the chosen one scores
	// higher; at another weight the language model's share changes.
	sc, err := st.Scores(pcm, [][]string{live, batch}, 0)
	if err != nil {
		t.Fatal(err)
	}
	if !sc[0].OK || !sc[1].OK || (sc[0].Score > sc[1].Score) != (a == 0) {
		t.Errorf("Scores %+v, Choose picked %d", sc, a)
	}
	sc2, err := st.Scores(pcm, [][]string{live, batch}, 9.5)
	if err != nil {
		t.Fatal(err)
	}
	if sc2[0] == sc[0] || sc2[1] == sc[1] {
		t.Errorf("Scores at -lw %+v and at 9.5 %+v: the weight not applied", sc, sc2)
	}
	t.Logf("chosen: %s", map[int]string{0: "live", 1: "batch"}[a])
}

func TestChooseUnknownWord(t *testing.T) {
	e := newEngine(t, 1)
	_, pcm := clip(t, "pocketsphinx-goforward.wav")
	st := openStream(t, e)
	if _, err := st.Choose(pcm, [][]string{{"go", "forward"}, {"go", "xqzzyv"}}); !errors.Is(err, ErrDecode) {
		t.Fatalf("err %v, want ErrDecode", err)
	}
	if _, err := st.Choose(pcm, [][]string{{"go", "forward", "ten", "meters"}}); err != nil {
		t.Fatalf("after a refused word: %v", err)
	}
}

// TestChooseNoWordsUnscored: an alternative of no words is not chosen
// over words the search scores, in either order. PocketSphinx reports no
// path of fillers only, and Choose took that for a score of 0, above any
// path's (scores are log probabilities): the record then dropped the
// batch pass's words wherever the live finals had none.
func TestChooseNoWordsUnscored(t *testing.T) {
	st := openStream(t, newEngine(t, 1))
	_, pcm := clip(t, "ls-test-clean-1089-134686-0000.wav")
	batch := strings.Fields("he hoped there would be stew for dinner turn up some carrots and bruised potatoes in fact mutton pieces to be labeled out and thick peppered flower fat and sauce")
	for _, alts := range [][][]string{{batch, {}}, {{}, batch}} {
		i, err := st.Choose(pcm, alts)
		if err != nil {
			t.Fatal(err)
		}
		if len(alts[i]) == 0 {
			t.Errorf("Choose(%d words, %d words) chose no words", len(alts[0]), len(alts[1]))
		}
	}
	if i, err := st.Choose(pcm, [][]string{{}}); !errors.Is(err, ErrNoChoice) {
		t.Errorf("no words alone: %d, %v; want ErrNoChoice", i, err)
	}
}

// TestChooseOneSearchAsScores: Choose searches every alternative at once
// (one search, a chain each) and picks what Scores (each scored in that
// search with only its chain reaching the final state) ranks first, among
// sequences that share their first words and one of no words, in two
// orders: the best path's end is the best-scored chain's.
func TestChooseOneSearchAsScores(t *testing.T) {
	st := openStream(t, newEngine(t, 1))
	_, pcm := clip(t, "ls-test-clean-1089-134686-0000.wav")
	alts := [][]string{
		strings.Fields("he hoped there would be stew for dinner turnips and carrots and bruised potatoes and fast mcbean pieces to be labeled out in thick peppered flower fat and sauce"),
		strings.Fields("he hoped there would be stew for dinner turn up some carrots and bruised potatoes in fact mutton pieces to be labeled out and thick peppered flower fat and sauce"),
		strings.Fields("he hoped there would be stew for dinner turnips and carrots and bruised potatoes and fat mutton pieces to be ladled out in thick peppered flour fattened sauce"),
		{},
	}
	for _, r := range []int{0, 3} {
		rot := append(slices.Clone(alts[r:]), alts[:r]...)
		sc, err := st.Scores(pcm, rot, 0)
		if err != nil {
			t.Fatal(err)
		}
		want := -1
		for i, s := range sc {
			if len(rot[i]) > 0 && s.OK && (want < 0 || s.Score > sc[want].Score) {
				want = i
			}
		}
		got, err := st.Choose(pcm, rot)
		if err != nil {
			t.Fatal(err)
		}
		if got != want {
			t.Errorf("rotation %d: Choose picked %d, scored alone the best is %d (scores %+v)", r, got, want, sc)
		}
	}
}

// TestScoresCompareAsChoose: Scores ranks sequences as Choose's search
// does, in either order. On this clip the decoder's words and the same
// with the reference's "you" were scored each in a search of its own, and
// PocketSphinx scores a frame's senones against the best of those its
// search has active, so each came on a scale of its own: the decoder's
// words 316 above, where Choose's one search (and searches of one
// sequence each with every senone scored, -compallsen) put them 228
// below. Choose's pick is the better-scored sequence, as before.
func TestScoresCompareAsChoose(t *testing.T) {
	st := openStream(t, newEngine(t, 1))
	_, pcm := clip(t, "ls-test-clean-1089-134686-0001.wav")
	own := strings.Fields("stuff it into his belly counsel them")
	you := strings.Fields("stuff it into you his belly counsel them")
	for _, alts := range [][][]string{{own, you}, {you, own}} {
		got, err := st.Choose(pcm, alts)
		if err != nil {
			t.Fatal(err)
		}
		sc, err := st.Scores(pcm, alts, 0)
		if err != nil {
			t.Fatal(err)
		}
		if !sc[0].OK || !sc[1].OK {
			t.Fatalf("Scores(%q) = %+v: a sequence without a path", alts, sc)
		}
		best := 0
		if sc[1].Score > sc[0].Score {
			best = 1
		}
		if best != got {
			t.Errorf("Scores(%q) = %+v ranks %d first, Choose picked %d", alts, sc, best, got)
		}
		if !slices.Equal(alts[got], you) {
			t.Errorf("Choose(%q) picked %q", alts, alts[got])
		}
	}
}
