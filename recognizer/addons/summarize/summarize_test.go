package summarize

import (
	"slices"
	"strings"
	"testing"

	"github.com/earshot-dev/earshot/recognizer"
	"github.com/earshot-dev/earshot/recognizer/addons/addonstest"
	"github.com/earshot-dev/earshot/recognizer/addons/sentences"
)

// spoken builds one utterance per sentence, each word 0.4 s, sentences
// 1.6 s apart (a pause every reader would end a sentence at).
func spoken(ss ...string) []recognizer.Utterance {
	var out []recognizer.Utterance
	at := 0.0
	for _, s := range ss {
		u := recognizer.Utterance{Text: s, Start: at, Language: "en"}
		for _, w := range strings.Fields(s) {
			u.Words = append(u.Words, recognizer.Word{Word: w, Start: at, End: at + 0.4, Confidence: 1})
			at += 0.4
		}
		u.End = at
		at += 1.6
		out = append(out, u)
	}
	return out
}

// fromInput asserts that parts are formatted sentences of utts, in spoken
// order, each used once.
func fromInput(t *testing.T, utts []recognizer.Utterance, parts []string) {
	t.Helper()
	var all []string
	for _, s := range sentences.Split(utts) {
		all = append(all, format(s.Text))
	}
	k := 0
	for _, p := range parts {
		i := slices.Index(all[k:], p)
		if i < 0 {
			t.Fatalf("%q is not an input sentence after position %d", p, k)
		}
		k += i + 1
	}
}

// splitSummary cuts a general or concise summary back into the formatted
// sentences it joined (each ends with ". " except the last).
func splitSummary(s string) []string {
	var out []string
	for _, p := range strings.SplitAfter(s, ". ") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

func TestSummarizeRealTranscript(t *testing.T) {
	tr := addonstest.Load(t, "ljspeech-LJ001-0007-to-0016-long.wav")
	n := len(sentences.Split(tr.Utterances))
	for _, typ := range []string{TypeGeneral, TypeConcise, TypeBulletPoints, "unknown"} {
		t.Run(typ, func(t *testing.T) {
			got := Summarize(tr.Utterances, typ)
			if again := Summarize(tr.Utterances, typ); again != got {
				t.Fatalf("not deterministic:\n%s\n%s", got, again)
			}
			t.Logf("%d sentences in, summary:\n%s", n, got)
			var parts []string
			if typ == TypeBulletPoints {
				for _, l := range strings.Split(got, "\n") {
					p, ok := strings.CutPrefix(l, "- ")
					if !ok || p == "" {
						t.Fatalf("bullet line %q", l)
					}
					parts = append(parts, p)
				}
			} else {
				if strings.Contains(got, "\n") {
					t.Fatalf("%s summary has a line break", typ)
				}
				parts = splitSummary(got)
			}
			fromInput(t, tr.Utterances, parts)
			switch typ {
			case TypeConcise:
				if len(parts) < 1 || len(parts) > 2 {
					t.Errorf("concise summary of %d sentences", len(parts))
				}
			default:
				if len(parts) < 1 || len(parts) >= n {
					t.Errorf("%d of %d sentences", len(parts), n)
				}
			}
		})
	}
}

func TestTextRankPicksTheCentralSentence(t *testing.T) {
	// The first sentence shares words with every other about printing;
	// the others share words only with it.
	utts := spoken(
		"printing made books and newspapers cheap for readers",
		"books were rare before printing",
		"my cat sleeps all afternoon",
		"newspapers reached many readers",
	)
	got := Summarize(utts, TypeConcise)
	want := "Printing made books and newspapers cheap for readers."
	if got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}

func TestEmpty(t *testing.T) {
	if got := Summarize(nil, TypeGeneral); got != "" {
		t.Errorf("summary of nothing: %q", got)
	}
	if got := Chapters(nil); got != nil {
		t.Errorf("chapters of nothing: %+v", got)
	}
}

func checkChapters(t *testing.T, utts []recognizer.Utterance, chs []Chapter) {
	t.Helper()
	first, last := utts[0].Start, 0.0
	for _, u := range utts {
		first = min(first, u.Words[0].Start)
		last = max(last, u.Words[len(u.Words)-1].End)
	}
	if len(chs) == 0 {
		t.Fatal("no chapters")
	}
	if chs[0].Start != first || chs[len(chs)-1].End != last {
		t.Errorf("chapters cover [%v, %v], words [%v, %v]", chs[0].Start, chs[len(chs)-1].End, first, last)
	}
	for i, c := range chs {
		if c.End <= c.Start || i > 0 && c.Start != chs[i-1].End {
			t.Errorf("chapter %d [%v, %v] overlaps or leaves a hole after %v", i, c.Start, c.End, chs[max(i-1, 0)].End)
		}
		if c.Headline == "" || c.Gist == "" || len(c.Keywords) == 0 {
			t.Errorf("chapter %d incomplete: %+v", i, c)
		}
		fromInput(t, utts, splitSummary(c.Summary))
	}
}

func TestChaptersTwoTopics(t *testing.T) {
	cooking := []string{
		"first boil plenty of salted water for the pasta",
		"chop the garlic and the tomatoes while the water heats",
		"fry the garlic gently in olive oil until golden",
		"add the tomatoes to the garlic and simmer the sauce",
		"the sauce should simmer until the tomatoes soften",
		"drain the pasta and keep some cooking water",
		"toss the pasta with the tomato sauce and the cooking water",
		"serve the pasta with grated cheese and basil",
	}
	football := []string{
		"the match started with the home team pressing high",
		"their striker scored the first goal after ten minutes",
		"the referee gave a penalty when the defender fouled the striker",
		"the goalkeeper saved the penalty with a brilliant dive",
		"the visiting team equalised with a header from a corner",
		"in the second half the players looked tired",
		"a late goal from the striker won the match",
		"the fans sang as the players left the pitch",
	}
	utts := spoken(append(slices.Clone(cooking), football...)...)
	chs := Chapters(utts)
	for _, c := range chs {
		t.Logf("[%6.1f %6.1f] %s | %s | %v | %s", c.Start, c.End, c.Headline, c.Gist, c.Keywords, c.Summary)
	}
	checkChapters(t, utts, chs)
	if len(chs) != 2 || chs[1].Start != utts[len(cooking)].Start {
		t.Fatalf("want two chapters split at %v", utts[len(cooking)].Start)
	}
	for _, k := range chs[0].Keywords {
		if strings.Contains(strings.Join(football, " "), k) {
			t.Errorf("cooking chapter keyword %q is from the football part", k)
		}
	}
	if !slices.Contains(chs[0].Keywords, "pasta") || !slices.ContainsFunc(chs[1].Keywords, func(k string) bool { return strings.Contains(k, "striker") }) {
		t.Errorf("keywords %v / %v miss the topics", chs[0].Keywords, chs[1].Keywords)
	}
}

func TestChaptersRealTranscript(t *testing.T) {
	tr := addonstest.Load(t, "ljspeech-LJ001-0007-to-0016-long.wav")
	chs := Chapters(tr.Utterances)
	for _, c := range chs {
		t.Logf("[%6.2f %6.2f] %s | %s | %v | %s", c.Start, c.End, c.Headline, c.Gist, c.Keywords, c.Summary)
	}
	checkChapters(t, tr.Utterances, chs)
	again := Chapters(tr.Utterances)
	if len(again) != len(chs) || again[0].Headline != chs[0].Headline || !slices.Equal(again[0].Keywords, chs[0].Keywords) {
		t.Error("not deterministic")
	}
}

func TestStem(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"types", "type"}, {"printing", "print"}, {"printed", "print"}, {"stories", "story"},
		{"class", "class"}, {"stopped", "stop"}, {"falling", "fall"}, {"was", "was"}, {"books", "book"}, {"churches", "church"}, {"status", "status"},
	} {
		if got := stem(tc.in); got != tc.want {
			t.Errorf("stem(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}
