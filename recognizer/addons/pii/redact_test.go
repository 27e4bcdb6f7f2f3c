package pii

import (
	"strings"
	"testing"

	"github.com/earshot-dev/earshot/recognizer"
	"github.com/earshot-dev/earshot/recognizer/addons/addonstest"
	"github.com/earshot-dev/earshot/recognizer/addons/ner"
)

func utt(text string) recognizer.Utterance {
	var ws []recognizer.Word
	for i, w := range strings.Fields(text) {
		ws = append(ws, recognizer.Word{Word: w, Start: float64(i), End: float64(i) + 0.9, Confidence: 0.5 + float64(i%3)/10})
	}
	return recognizer.Utterance{Text: text, Words: ws, End: float64(len(ws)), Confidence: 0.6}
}

func TestRedact(t *testing.T) {
	tests := []struct {
		name  string
		text  string
		types []string
		mode  string
		want  string
	}{
		{"marker name and phone", "hi my name is john smith call me on five five five one two three four", []string{"GDPR"}, Marker,
			"hi my name is [NAME] call me on [PHONE_NUMBER]"},
		{"default mode is marker", "write to john dot smith at example dot com", []string{"EMAIL_ADDRESS"}, "",
			"write to [EMAIL_ADDRESS]"},
		{"mask", "my name is john smith", []string{"NAME"}, Mask, "my name is **** *****"},
		{"mask lower case mode", "born on may second", []string{"DATE"}, "mask", "born on *** ******"},
		{"given and family markers", "this is mary jones", []string{"NAME_GIVEN", "NAME_FAMILY"}, Marker,
			"this is [NAME_GIVEN] [NAME_FAMILY]"},
		{"nothing found", "the weather is nice today", []string{"GDPR"}, Marker, "the weather is nice today"},
		{"card and expiry", "card four one one one one one one one one one one one one one one one expires oh four twenty six", []string{"PCI"}, Marker,
			"card [CREDIT_CARD] expires [CREDIT_CARD_EXPIRATION]"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := []recognizer.Utterance{utt("before"), utt(tt.text)}
			orig := in[1].Text
			ents, _ := ner.Find(in, tt.types)
			out := Redact(in, ents, tt.mode)
			if out[1].Text != tt.want {
				t.Errorf("got %q\nwant %q", out[1].Text, tt.want)
			}
			if in[1].Text != orig || len(in[1].Words) != len(strings.Fields(orig)) {
				t.Error("input modified")
			}
			if out[0].Text != "before" {
				t.Errorf("untouched utterance changed: %q", out[0].Text)
			}
			assertComplete(t, in, out, ents)
		})
	}
}

// assertComplete checks that no word of an entity survives: every output
// word overlapping an entity's time span is a marker or a mask, and the
// entity's text is not in the output text.
func assertComplete(t *testing.T, in, out []recognizer.Utterance, ents []ner.Entity) {
	t.Helper()
	for _, e := range ents {
		u := out[e.Utterance]
		for _, w := range u.Words {
			if w.End <= e.Start || w.Start >= e.End {
				continue
			}
			if !strings.HasPrefix(w.Word, "[") && strings.Trim(w.Word, "*") != "" {
				t.Errorf("word %q of %s %q survived", w.Word, e.Type, e.Text)
			}
		}
		if strings.Contains(" "+u.Text+" ", " "+e.Text+" ") {
			t.Errorf("text %q still holds %s %q", u.Text, e.Type, e.Text)
		}
		var words []string
		for _, w := range u.Words {
			words = append(words, w.Word)
		}
		if strings.Join(words, " ") != u.Text {
			t.Errorf("text %q not rebuilt from words %q", u.Text, words)
		}
	}
}

func TestRedactMarkerTimes(t *testing.T) {
	in := []recognizer.Utterance{utt("call five five five one two three four now")}
	ents, _ := ner.Find(in, []string{"PHONE_NUMBER"})
	out := Redact(in, ents, Marker)
	ws := out[0].Words
	if len(ws) != 3 || ws[1].Word != "[PHONE_NUMBER]" || ws[1].Start != 1 || ws[1].End != 7.9 || ws[1].Confidence != 0.5 {
		t.Fatalf("words %+v", ws)
	}
}

func TestRedactOverlapAndBadIndexes(t *testing.T) {
	in := []recognizer.Utterance{utt("a b c d e f")}
	ents := []ner.Entity{
		{Type: "NAME", Utterance: 0, FirstWord: 1, LastWord: 2},
		{Type: "LOCATION", Utterance: 0, FirstWord: 2, LastWord: 3},
		{Type: "DATE", Utterance: 0, FirstWord: 5, LastWord: 9},  // clipped to the last word
		{Type: "DATE", Utterance: 3, FirstWord: 0, LastWord: 0},  // no such utterance
		{Type: "DATE", Utterance: 0, FirstWord: 4, LastWord: 3},  // empty
		{Type: "DATE", Utterance: -1, FirstWord: 0, LastWord: 0}, // no such utterance
	}
	out := Redact(in, ents, Marker)
	if out[0].Text != "a [NAME] e [DATE]" {
		t.Fatalf("got %q", out[0].Text)
	}
}

// TestRedactRealTranscript redacts real recogniser output with every
// entity type and checks completeness on it.
func TestRedactRealTranscript(t *testing.T) {
	for _, clip := range addonstest.GoldenClips {
		tr := addonstest.Load(t, clip)
		ents, _ := ner.Find(tr.Utterances, nil)
		for _, mode := range []string{Marker, Mask} {
			out := Redact(tr.Utterances, ents, mode)
			if len(out) != len(tr.Utterances) {
				t.Fatalf("%s: %d utterances out, %d in", clip, len(out), len(tr.Utterances))
			}
			assertComplete(t, tr.Utterances, out, ents)
		}
	}
	// Synthetic call on top of real audio timings: one utterance of the
	// long clip with personal data spliced in as words.
	tr := addonstest.Load(t, "ljspeech-LJ001-0001.wav")
	u := tr.Utterances[0]
	extra := strings.Fields("my name is sarah miller and my number is four one five five five five one two three four")
	for i, w := range extra {
		u.Words = append(u.Words, recognizer.Word{Word: w, Start: u.End + float64(i), End: u.End + float64(i) + 0.5})
	}
	u.Text += " " + strings.Join(extra, " ")
	ents, _ := ner.Find([]recognizer.Utterance{u}, []string{"GDPR"})
	out := Redact([]recognizer.Utterance{u}, ents, Marker)
	if !strings.HasSuffix(out[0].Text, "my name is [NAME] and my number is [PHONE_NUMBER]") {
		t.Errorf("got %q", out[0].Text)
	}
	assertComplete(t, []recognizer.Utterance{u}, out, ents)
}

// TestRedactAcrossUtterances: a card number the utterances cut into groups
// (live endpointing at each pause) is redacted in every utterance, unless
// the pauses are too long for one number.
func TestRedactAcrossUtterances(t *testing.T) {
	spaced := func(gap float64, texts ...string) []recognizer.Utterance {
		var out []recognizer.Utterance
		at := 0.0
		for _, text := range texts {
			u := utt(text)
			for k := range u.Words {
				u.Words[k].Start += at
				u.Words[k].End += at
			}
			u.Start, u.End = at, at+float64(len(u.Words))
			out = append(out, u)
			at = u.End + gap
		}
		return out
	}
	texts := []string{"my card is four one one one", "one one one one", "one one one one", "one one one one thanks"}
	in := spaced(5, texts...)
	ents, _ := ner.Find(in, []string{"PCI"})
	if out := Redact(in, ents, Marker); out[0].Text != texts[0] {
		t.Errorf("groups 5 s apart joined: %q", out[0].Text)
	}
	in = spaced(0.5, texts...)
	ents, _ = ner.Find(in, []string{"PCI"})
	out := Redact(in, ents, Marker)
	want := []string{"my card is [CREDIT_CARD]", "[CREDIT_CARD]", "[CREDIT_CARD]", "[CREDIT_CARD] thanks"}
	for i, w := range want {
		if out[i].Text != w {
			t.Errorf("utterance %d: %q, want %q", i, out[i].Text, w)
		}
	}
	assertComplete(t, in, out, ents)
}
