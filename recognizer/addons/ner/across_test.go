package ner

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/earshot-dev/earshot/recognizer"
)

// utts builds utterances from texts separated by "|", each starting gap
// seconds after the previous one ends; a text starting "2:" is on channel 2.
func utts(text string, gap float64) []recognizer.Utterance {
	var out []recognizer.Utterance
	t := 0.0
	for _, part := range strings.Split(text, "|") {
		ch := 0
		if p, ok := strings.CutPrefix(strings.TrimSpace(part), "2:"); ok {
			ch, part = 2, p
		}
		u := recognizer.Utterance{Channel: ch, Start: t}
		for _, w := range strings.Fields(part) {
			u.Words = append(u.Words, recognizer.Word{Word: w, Start: t, End: t + 0.4})
			t += 0.5
		}
		u.Text, u.End = strings.Join(strings.Fields(part), " "), t
		out = append(out, u)
		t += gap
	}
	return out
}

func TestAcrossUtterances(t *testing.T) {
	tests := []struct {
		name string
		text string
		gap  float64
		want []string // "utterance:first-last:TYPE"
	}{
		{"card in four groups", "my card number is four one one one | one one one one | one one one one | one one one one thanks", 0.3,
			[]string{"0:4-7:CREDIT_CARD", "1:0-3:CREDIT_CARD", "2:0-3:CREDIT_CARD", "3:0-3:CREDIT_CARD"}},
		{"card in two halves", "it's four one one one one one one one | one one one one one one one one", 1,
			[]string{"0:1-8:CREDIT_CARD", "1:0-7:CREDIT_CARD"}},
		{"phone with its area code apart", "call me on four one five | five five five two six seven one", 1,
			[]string{"0:3-5:PHONE_NUMBER", "1:0-6:PHONE_NUMBER"}},
		{"another channel between the groups", "four one one one one one one one | 2:okay | one one one one one one one one", 1,
			[]string{"0:0-7:CREDIT_CARD", "2:0-7:CREDIT_CARD"}},
		{"too long a pause", "four one one one one one one one | one one one one one one one one", 5,
			[]string{"0:0-7:PHONE_NUMBER", "1:0-7:PHONE_NUMBER"}},
		{"words after a head end the number", "four one one one | one one one one and then | one one one one one one one one", 0.3,
			[]string{"0:0-3:PHONE_NUMBER", "1:0-3:PHONE_NUMBER", "2:0-7:PHONE_NUMBER"}},
		{"counts are not numbers", "we need twenty two | three more chairs", 0.3, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ents, _ := Find(utts(tt.text, tt.gap), []string{CreditCard, PhoneNumber, SSN})
			var got []string
			for _, e := range ents {
				got = append(got, fmt.Sprintf("%d:%d-%d:%s", e.Utterance, e.FirstWord, e.LastWord, e.Type))
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("got %v, want %v", got, tt.want)
			}
		})
	}
}

// TestAcrossBounded reads a long call of nothing but digit groups, each
// its own utterance (a number joins at most maxAcrossPieces of them, and
// each utterance's runs are read once): no two entities overlap, and every
// group is found as part of a number.
func TestAcrossBounded(t *testing.T) {
	const n = 20_000
	us := utts(strings.Repeat("one one one one | ", n-1)+"one one one one", 0.3)
	ents, _ := Find(us, []string{CreditCard, PhoneNumber, SSN})
	covered := make([]bool, n)
	for i, e := range ents {
		if i > 0 && ents[i-1].Utterance == e.Utterance && e.FirstWord <= ents[i-1].LastWord {
			t.Fatalf("entities overlap: %+v and %+v", ents[i-1], e)
		}
		covered[e.Utterance] = true
	}
	for i, c := range covered {
		if !c {
			t.Fatalf("group %d of %d not found", i, n)
		}
	}
}
