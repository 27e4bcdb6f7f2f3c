package pipeline

import (
	"errors"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/earshot-dev/earshot/transcript"
)

// spanUtt is an utterance of words spread evenly from start to end.
func spanUtt(channel int, start, end float64, text string) transcript.Utterance {
	f := strings.Fields(text)
	u := transcript.Utterance{Start: start, End: end, Channel: channel, Text: text}
	step := (end - start) / float64(len(f))
	for i, w := range f {
		u.Words = append(u.Words, transcript.Word{Word: w, Start: start + float64(i)*step, End: start + float64(i+1)*step})
	}
	return u
}

// The live finals and the batch pass of a G.722 call over
// ls-test-clean-1089-134686-0000 (codecbench, 2026-11-29), and a second
// stretch on which they agree.
var (
	combineLive = []transcript.Utterance{
		spanUtt(0, 0.53, 2.30, "he hoped there would be stew for dinner"),
		spanUtt(0, 2.36, 3.60, "turnips and carrots"),
		spanUtt(0, 3.66, 6.10, "and bruised potatoes and fast mcbean"),
		spanUtt(0, 6.16, 6.60, "pieces"),
		spanUtt(0, 6.66, 7.90, "to be labeled out"),
		spanUtt(0, 7.96, 8.40, "in thick"),
		spanUtt(0, 8.46, 10.12, "peppered flower fat and sauce"),
		spanUtt(0, 12.00, 13.10, "he could wait no longer"),
	}
	combineBatch = []transcript.Utterance{
		spanUtt(0, 0.53, 10.12, "he hoped there would be stew for dinner turn up some carrots and bruised potatoes in fact mutton pieces to be labeled out and thick peppered flower fat and sauce"),
		spanUtt(0, 12.05, 13.00, "he could wait no longer"),
	}
)

func TestStretches(t *testing.T) {
	got := Stretches(combineLive, combineBatch)
	if len(got) != 2 {
		t.Fatalf("%d stretches, want 2: %+v", len(got), got)
	}
	if s := got[0]; len(s.Live) != 7 || len(s.Batch) != 1 || s.Start != 0.53 || s.End != 10.12 {
		t.Errorf("first stretch: %d live, %d batch utterances, %.2f-%.2f", len(s.Live), len(s.Batch), s.Start, s.End)
	}
	if s := got[1]; len(s.Live) != 1 || len(s.Batch) != 1 || s.Start != 12 || s.End != 13.1 {
		t.Errorf("second stretch: %d live, %d batch utterances, %.2f-%.2f", len(s.Live), len(s.Batch), s.Start, s.End)
	}
	// Channels never share a stretch, however their times overlap; a
	// pass with nothing in a stretch leaves it empty there.
	two := Stretches([]transcript.Utterance{spanUtt(0, 1, 2, "a"), spanUtt(1, 1, 2, "b")}, []transcript.Utterance{spanUtt(1, 1.5, 3, "c"), spanUtt(0, 5, 6, "d")})
	if len(two) != 3 || two[0].Channel != 0 || len(two[0].Batch) != 0 || two[1].Channel != 0 || len(two[1].Live) != 0 || two[2].Channel != 1 || len(two[2].Live) != 1 || len(two[2].Batch) != 1 {
		t.Errorf("two channels: %+v", two)
	}
}

func TestCombineUtterances(t *testing.T) {
	type call struct {
		start, end float64
		alts       [][]string
	}
	var calls []call
	pick := func(i int, err error) ChooseFunc {
		return func(channel int, start, end float64, alts [][]string) (int, error) {
			calls = append(calls, call{start, end, alts})
			return i, err
		}
	}
	texts := func(us []transcript.Utterance) string { return JoinUtterances(us) }

	// The engine prefers the live finals: the differing stretch is theirs,
	// the agreeing one stays the batch pass's without being scored.
	calls = nil
	got, live, _ := CombineUtterances(combineLive, combineBatch, pick(1, nil))
	want := JoinUtterances(combineLive[:7]) + " he could wait no longer"
	if live != 1 || texts(got) != want || len(got) != 8 || got[7].Start != 12.05 {
		t.Errorf("live preferred: %d live stretches, %q (%d utterances)", live, texts(got), len(got))
	}
	if len(calls) != 1 || math.Abs(calls[0].start-(0.53-stretchPad)) > 1e-9 || math.Abs(calls[0].end-(10.12+stretchPad)) > 1e-9 ||
		!slices.Equal(calls[0].alts[0], strings.Fields(combineBatch[0].Text)) || strings.Join(calls[0].alts[1], " ") != JoinUtterances(combineLive[:7]) {
		t.Errorf("scored: %+v", calls)
	}
	// The engine prefers the batch pass, or cannot score: the batch pass's.
	for _, c := range []ChooseFunc{pick(0, nil), pick(-1, errors.New("no path"))} {
		got, live, _ := CombineUtterances(combineLive, combineBatch, c)
		if live != 0 || texts(got) != texts(combineBatch) {
			t.Errorf("batch kept: %d live stretches, %q", live, texts(got))
		}
	}
	// Words compare case-blind and without their spacing.
	calls = nil
	_, live, _ = CombineUtterances([]transcript.Utterance{spanUtt(0, 1, 2, "Go Forward")}, []transcript.Utterance{spanUtt(0, 1.1, 2, "go forward")}, pick(1, nil))
	if live != 0 || len(calls) != 0 {
		t.Errorf("same words scored (%d calls) or taken from live (%d)", len(calls), live)
	}
	// A stretch where one pass has no words is the batch pass's, unscored:
	// batch words where the live finals have none stay (the scoring took
	// no words for the best path and dropped them), and live words where
	// the batch pass has none are not taken.
	calls = nil
	got, live, n := CombineUtterances([]transcript.Utterance{spanUtt(0, 1, 2, "go forward")},
		[]transcript.Utterance{spanUtt(0, 5, 6, "ten meters")}, pick(1, nil))
	if live != 0 || n != 2 || texts(got) != "ten meters" || len(calls) != 0 {
		t.Errorf("one-sided stretches: %d of %d live, %q, %d scored", live, n, texts(got), len(calls))
	}
}
