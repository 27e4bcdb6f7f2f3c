package sentences

import (
	"strconv"
	"strings"
	"testing"

	"github.com/earshot-dev/earshot/recognizer"
	"github.com/earshot-dev/earshot/recognizer/addons/addonstest"
)

// utt builds an utterance from a script: words, and numbers giving the
// silence in seconds before the next word. Each word lasts 0.3 s; words
// without a number between them abut.
func utt(t *testing.T, channel int, start float64, script string) recognizer.Utterance {
	t.Helper()
	u := recognizer.Utterance{Channel: channel, Language: "en"}
	at := start
	var texts []string
	for _, f := range strings.Fields(script) {
		if g, err := strconv.ParseFloat(f, 64); err == nil {
			at += g
			continue
		}
		u.Words = append(u.Words, recognizer.Word{Word: f, Start: at, End: at + 0.3, Confidence: 0.9})
		texts = append(texts, f)
		at += 0.3
	}
	u.Text = strings.Join(texts, " ")
	u.Start, u.End, u.Confidence = u.Words[0].Start, u.Words[len(u.Words)-1].End, 0.9
	return u
}

func texts(ss []Sentence) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = s.Text
	}
	return out
}

func TestSplit(t *testing.T) {
	tests := []struct {
		name   string
		script string
		want   []string
	}{
		{"long pause ends a sentence", "i went home 0.9 then i slept",
			[]string{"i went home", "then i slept"}},
		{"short pause does not", "i went 0.15 home today",
			[]string{"i went home today"}},
		{"never after an article", "i saw the 1.2 big dog",
			[]string{"i saw the big dog"}},
		{"article gives way to a very long pause", "i saw the 3.5 big dog",
			[]string{"i saw the", "big dog"}},
		{"opener tips a medium pause", "this is done 0.35 but we are not",
			[]string{"this is done", "but we are not"}},
		{"same pause without opener", "this is done 0.35 we are not",
			[]string{"this is done we are not"}},
		{"adaptive: fast talker's pause counts", "we met 0.12 at noon 0.12 by the 0.12 river 0.12 and talked 0.45 trees grew tall",
			[]string{"we met at noon by the river and talked", "trees grew tall"}},
		{"adaptive: slow talker's pause does not", "we met 0.5 at noon 0.5 by the 0.5 river 0.5 and talked 0.55 trees grew tall",
			[]string{"we met at noon by the river and talked trees grew tall"}},
		{"hard gap", "the meeting ended 1.6 lunch was served",
			[]string{"the meeting ended", "lunch was served"}},
		{"punctuated input", "Hello. 0.1 How are you? I am fine",
			[]string{"Hello.", "How are you?", "I am fine"}},
		{"two words need a stronger pause", "yes sir 0.6 we will go now",
			[]string{"yes sir we will go now"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := texts(Split([]recognizer.Utterance{utt(t, 0, 0.5, tc.script)}))
			if strings.Join(got, "|") != strings.Join(tc.want, "|") {
				t.Errorf("got  %q\nwant %q", got, tc.want)
			}
		})
	}
}

func TestQuestion(t *testing.T) {
	tests := []struct {
		script string
		want   bool
	}{
		{"what is your name", true},
		{"how many people came", true},
		{"do you like it", true},
		{"and can we go home", true},
		{"when i was young we lived here", false},
		{"i do not know", false},
		{"how they did it is a mystery", false},
		{"is this right?", true},
	}
	for _, tc := range tests {
		t.Run(tc.script, func(t *testing.T) {
			segs := Segments([]recognizer.Utterance{utt(t, 0, 0, tc.script)})
			if len(segs) != 1 || segs[0].Question != tc.want {
				t.Errorf("got %+v, want one segment with Question %v", segs, tc.want)
			}
		})
	}
}

func TestSpansUtterancesNotChannels(t *testing.T) {
	utts := []recognizer.Utterance{
		utt(t, 0, 0, "the committee met on monday"),
		utt(t, 1, 0.2, "nobody told me about it"),
		// The detector cut here mid-sentence after a short pause.
		utt(t, 0, 1.7, "and approved the budget 0.9 but nobody came"),
		{Channel: 1, Start: 5, End: 6, Text: "text without words"},
	}
	got := Split(utts)
	want := []Sentence{
		{Text: "the committee met on monday and approved the budget", Start: 0, End: 2.9, Channel: 0},
		{Text: "nobody told me about it", Start: 0.2, End: 1.7, Channel: 1},
		{Text: "but nobody came", Start: 3.8, End: 4.7, Channel: 0},
		{Text: "text without words", Start: 5, End: 6, Channel: 1},
	}
	if len(got) != len(want) {
		t.Fatalf("got %+v", got)
	}
	for i := range want {
		g, w := got[i], want[i]
		if g.Text != w.Text || g.Channel != w.Channel || !near(g.Start, w.Start) || !near(g.End, w.End) {
			t.Errorf("sentence %d: got %+v, want %+v", i, g, w)
		}
	}
	segs := Segments(utts)
	if p := segs[0].Words[5]; p != (Position{Utterance: 2, Word: 0}) {
		t.Errorf("sixth word of first sentence at %+v, want utterance 2 word 0", p)
	}
}

func TestLongSentenceIsCut(t *testing.T) {
	script := strings.Repeat("we walk 0.05 ", 50) // 100 words, no real pause
	script = strings.Replace(script, "0.05", "0.18", 23)
	for _, s := range Split([]recognizer.Utterance{utt(t, 0, 0, script)}) {
		if n := len(strings.Fields(s.Text)); n > maxWords || n < minPieceOnSplit {
			t.Errorf("sentence of %d words: %q", n, s.Text)
		}
	}
}

func TestTypicalPause(t *testing.T) {
	tests := []struct {
		name string
		gaps []float64
		want float64
	}{
		{"too few pauses", []float64{0, 0.5, 0.5, 0, 0.01}, defaultPause},
		{"median", []float64{0.1, 0.2, 0.3, 0.4, 0.5, 0, 0}, 0.3},
		{"clamped low", []float64{0.04, 0.04, 0.05, 0.05}, minTypical},
		{"clamped high", []float64{2, 2, 2, 2}, maxTypical},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := TypicalPause(tc.gaps); !near(got, tc.want) {
				t.Errorf("got %v, want %v", got, tc.want)
			}
		})
	}
}

// TestRealTranscripts runs the rule on the engine's output for real
// recordings and checks that every word lands in exactly one sentence, in
// order, with sane times.
func TestRealTranscripts(t *testing.T) {
	for _, clip := range addonstest.GoldenClips {
		t.Run(clip, func(t *testing.T) {
			tr := addonstest.Load(t, clip)
			segs := Segments(tr.Utterances)
			seen := map[Position]bool{}
			total := 0
			for _, u := range tr.Utterances {
				total += len(u.Words)
			}
			for _, s := range segs {
				if len(s.Words) > maxWords {
					t.Errorf("%d words: %q", len(s.Words), s.Text)
				}
				if s.Start > s.End || s.Start < 0 || s.End > tr.Clip.Duration+0.01 {
					t.Errorf("times [%.2f, %.2f] outside [0, %.2f]", s.Start, s.End, tr.Clip.Duration)
				}
				var ws []string
				for _, p := range s.Words {
					if seen[p] {
						t.Errorf("word %+v in two sentences", p)
					}
					seen[p] = true
					u := tr.Utterances[p.Utterance]
					if u.Channel != s.Channel {
						t.Errorf("word of channel %d in sentence of channel %d", u.Channel, s.Channel)
					}
					ws = append(ws, u.Words[p.Word].Word)
				}
				if strings.Join(ws, " ") != s.Text {
					t.Errorf("text %q, words %q", s.Text, ws)
				}
				t.Logf("ch%d [%6.2f %6.2f] q=%v %s", s.Channel, s.Start, s.End, s.Question, s.Text)
			}
			if len(seen) != total {
				t.Errorf("%d of %d words in sentences", len(seen), total)
			}
		})
	}
	// The LibriSpeech reading has one sentence end, after a 0.73 s pause
	// before "the narrative"; the other pauses (0.31, 0.34 s) are commas.
	got := texts(Split(addonstest.Load(t, "ls-dev-clean-2412-153948-0000.wav").Utterances))
	if len(got) != 2 || !strings.HasPrefix(got[1], "the narrative") {
		t.Errorf("ls-dev-clean-2412: got %q, want a break before \"the narrative\"", got)
	}
}

func near(a, b float64) bool { return a-b < 1e-6 && b-a < 1e-6 }
