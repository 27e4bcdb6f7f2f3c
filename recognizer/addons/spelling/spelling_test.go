package spelling

import (
	"slices"
	"strings"
	"testing"

	"github.com/earshot-dev/earshot/recognizer"
	"github.com/earshot-dev/earshot/recognizer/addons/addonstest"
	"github.com/earshot-dev/earshot/recognizer/recognizertest"
)

// words builds an utterance whose i-th word spans [i, i+0.5] s.
func words(text string) recognizer.Utterance {
	u := recognizer.Utterance{Text: text, Language: "en"}
	for i, w := range strings.Fields(text) {
		u.Words = append(u.Words, recognizer.Word{Word: w, Start: float64(i), End: float64(i) + 0.5, Confidence: 0.2 * float64(i%5+1)})
	}
	u.Start, u.End = u.Words[0].Start, u.Words[len(u.Words)-1].End
	return u
}

func TestApply(t *testing.T) {
	tests := []struct {
		name string
		text string
		dict map[string][]string
		want string
	}{
		{"single word, any case", "we met SARAH and sarah", map[string][]string{"Sara": {"sarah"}}, "we met Sara and Sara"},
		{"phrase merged", "the gift card is here", map[string][]string{"GiftCard": {"gift card"}}, "the GiftCard is here"},
		{"key is its own variant", "my iphone broke", map[string][]string{"iPhone": nil}, "my iPhone broke"},
		{"punctuation kept", "I love Gift card, really.", map[string][]string{"GiftCard": {"gift card"}}, "I love GiftCard, really."},
		{"phrase not across punctuation", "gift. card", map[string][]string{"GiftCard": {"gift card"}}, "gift. card"},
		{"whole words only", "category cat", map[string][]string{"Kat": {"cat"}}, "category Kat"},
		{"longest variant wins", "new york city", map[string][]string{"NYC": {"new york city"}, "New York": {"new york"}}, "NYC"},
		{"multi-word key", "in newyork today", map[string][]string{"New York": {"newyork"}}, "in New York today"},
		{"empty entries ignored", "a b", map[string][]string{"": {"a"}, "x": {"", "  "}}, "a b"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			in := []recognizer.Utterance{words(tc.text), {Text: tc.text, Channel: 1}}
			orig := slices.Clone(in[0].Words)
			out := Apply(in, tc.dict)
			if out[0].Text != tc.want {
				t.Errorf("got %q, want %q", out[0].Text, tc.want)
			}
			if out[1].Text != tc.want {
				t.Errorf("text-only utterance: got %q, want %q", out[1].Text, tc.want)
			}
			if !slices.Equal(in[0].Words, orig) {
				t.Error("input modified")
			}
			checkInvariants(t, in[0], out[0])
		})
	}
}

// checkInvariants asserts that every output word spans input words
// exactly and that Text and Confidence follow the words.
func checkInvariants(t *testing.T, in, out recognizer.Utterance) {
	t.Helper()
	var texts []string
	var conf float64
	j := 0
	for _, w := range out.Words {
		texts = append(texts, w.Word)
		conf += w.Confidence
		if j >= len(in.Words) || in.Words[j].Start != w.Start {
			t.Fatalf("word %q starts at %v, not at an input word start", w.Word, w.Start)
		}
		var sum float64
		k := j
		for ; k < len(in.Words) && in.Words[k].End <= w.End; k++ {
			sum += in.Words[k].Confidence
		}
		if k == j || in.Words[k-1].End != w.End {
			t.Fatalf("word %q ends at %v, not at an input word end", w.Word, w.End)
		}
		if d := sum/float64(k-j) - w.Confidence; d > 1e-9 || d < -1e-9 {
			t.Errorf("word %q confidence %v, mean of merged %v", w.Word, w.Confidence, sum/float64(k-j))
		}
		j = k
	}
	if j != len(in.Words) {
		t.Errorf("%d of %d input words covered", j, len(in.Words))
	}
	if out.Text != strings.Join(texts, " ") {
		t.Errorf("Text %q, words %q", out.Text, texts)
	}
	if d := out.Confidence - conf/float64(len(out.Words)); d > 1e-9 || d < -1e-9 {
		t.Errorf("confidence %v, mean %v", out.Confidence, conf/float64(len(out.Words)))
	}
}

// TestRealTranscript corrects the engine's known confusions on the long
// LJ Speech clip with a spelling dictionary, as a customer would for
// product names, and checks that the word error rate falls and that each
// phrase became one word spanning the original words.
func TestRealTranscript(t *testing.T) {
	tr := addonstest.Load(t, "ljspeech-LJ001-0007-to-0016-long.wav")
	dict := map[string][]string{
		"movable":     {"multiple"},
		"gutenberg":   {"he got a burger"},
		"letterpress": {"letter press"},
		"calligraphy": {"broccoli griffey"},
		"ugly ones":   {"really wants"},
	}
	out := Apply(tr.Utterances, dict)
	for i := range out {
		checkInvariants(t, tr.Utterances[i], out[i])
	}
	join := func(us []recognizer.Utterance) string {
		var s []string
		for _, u := range us {
			s = append(s, u.Text)
		}
		return strings.Join(s, " ")
	}
	ref := tr.Clip.Transcript
	before, after := recognizertest.WER(ref, join(tr.Utterances)), recognizertest.WER(ref, join(out))
	t.Logf("WER %.3f before, %.3f after the dictionary", before, after)
	if after >= before {
		t.Errorf("WER %.3f after, not below %.3f before", after, before)
	}
	found := false
	for _, u := range out {
		for _, w := range u.Words {
			if w.Word == "gutenberg" {
				found = true
				if d := w.End - w.Start; d < 0.5 {
					t.Errorf("gutenberg spans %.2f s, want the four words' span", d)
				}
			}
		}
	}
	if !found {
		t.Error("no gutenberg in output")
	}
}
