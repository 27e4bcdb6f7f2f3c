package pipeline

import (
	"slices"
	"strings"
	"testing"

	"github.com/earshot-dev/earshot/transcript"
)

func TestAlignment(t *testing.T) {
	mk := func(text string) []timedWord {
		var out []timedWord
		for _, w := range strings.Fields(text) {
			out = append(out, timedWord{w: w})
		}
		return out
	}
	a, b := mk("turn up some carrots and"), mk("turnips and carrots and x")
	got := alignment(a, b)
	// Every word of each side once, in order; the agreed words paired.
	var ai, bi []int
	var agreed [][2]int
	for _, st := range got {
		if st[0] >= 0 {
			ai = append(ai, st[0])
		}
		if st[1] >= 0 {
			bi = append(bi, st[1])
		}
		if st[0] >= 0 && st[1] >= 0 && a[st[0]].w == b[st[1]].w {
			agreed = append(agreed, st)
		}
	}
	if !slices.Equal(ai, []int{0, 1, 2, 3, 4}) || !slices.Equal(bi, []int{0, 1, 2, 3, 4}) ||
		!slices.Equal(agreed, [][2]int{{3, 2}, {4, 3}}) || len(got) != 6 {
		t.Errorf("alignment %v", got)
	}
}

// TestCombineRegions: where the passes differ in several places of one
// stretch, each place is decided on its own audio: the record takes the
// live words of one region and keeps the batch words of another, which a
// choice of the whole stretch cannot.
func TestCombineRegions(t *testing.T) {
	type call struct {
		start, end float64
		alts       [][]string
	}
	var calls []call
	// The engine prefers "turnips and" to "turn up some", and the batch
	// pass's "mutton" to "mcbean".
	choose := func(_ int, start, end float64, alts [][]string) (int, error) {
		calls = append(calls, call{start, end, alts})
		if slices.Contains(alts[1], "turnips") {
			return 1, nil
		}
		return 0, nil
	}
	got, live, n := CombineUtterances(combineLive[:3], []transcript.Utterance{
		spanUtt(0, 0.53, 6.10, "he hoped there would be stew for dinner turn up some carrots and bruised potatoes and fat mutton"),
	}, choose)
	want := "he hoped there would be stew for dinner turnips and carrots and bruised potatoes and fat mutton"
	if JoinUtterances(got) != want || live != 1 || n != 1 {
		t.Errorf("record %q (%d of %d stretches from live), want %q", JoinUtterances(got), live, n, want)
	}
	if len(got) != 1 || got[0].Start != 0.53 || got[0].End != 6.10 || len(got[0].Words) != len(strings.Fields(want)) {
		t.Errorf("utterances %+v", got)
	}
	// Two regions, each scored with the agreed word on either side.
	if len(calls) != 2 || strings.Join(calls[0].alts[0], " ") != "dinner turn up some carrots" ||
		strings.Join(calls[0].alts[1], " ") != "dinner turnips and carrots" ||
		strings.Join(calls[1].alts[0], " ") != "and fat mutton" || strings.Join(calls[1].alts[1], " ") != "and fast mcbean" {
		t.Errorf("scored %+v", calls)
	}
	for _, c := range calls {
		if c.start < 0.53-regionPad || c.end > 6.10+regionPad || c.end-c.start > 3 {
			t.Errorf("region scored on %.2f-%.2f", c.start, c.end)
		}
	}
}
