package ner

import (
	"bufio"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/earshot-dev/earshot/recognizer"
)

// marked is one entity marked in a tuning sentence, in word indexes.
type marked struct {
	typ         string
	first, last int
}

// parseMarked reads "[TYPE word word]" markup (testdata/tuning.txt).
func parseMarked(t *testing.T, line string) (words []string, ms []marked) {
	t.Helper()
	open, typ := -1, ""
	for _, f := range strings.Fields(line) {
		if tp, ok := strings.CutPrefix(f, "["); ok {
			open, typ = len(words), tp
			continue
		}
		w, closing := strings.CutSuffix(f, "]")
		words = append(words, w)
		if closing {
			if open < 0 {
				t.Fatalf("unopened entity in %q", line)
			}
			ms = append(ms, marked{typ, open, len(words) - 1})
			open = -1
		}
	}
	if open >= 0 {
		t.Fatalf("entity not closed in %q", line)
	}
	return words, ms
}

// TestTuning checks every example the spoken-PII rules were written
// against: each marked entity found with its type and exact words, and
// nothing else found of the types asked.
func TestTuning(t *testing.T) {
	f, err := os.Open("testdata/tuning.txt")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	types := []string{CreditCard, CreditCardExpiration, CVV, SSN, PhoneNumber, EmailAddress, Name, Location}
	sc := bufio.NewScanner(f)
	n := 0
	for sc.Scan() {
		n++
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		words, want := parseMarked(t, line)
		ents, _ := Find([]recognizer.Utterance{utt(strings.Join(words, " "))}, types)
		var got []marked
		for _, e := range ents {
			got = append(got, marked{e.Type, e.FirstWord, e.LastWord})
		}
		if !slices.Equal(got, want) {
			t.Errorf("line %d %q:\n got  %s\n want %s", n, strings.Join(words, " "), show(words, got), show(words, want))
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
}

func show(words []string, ms []marked) string {
	var b strings.Builder
	for _, m := range ms {
		fmt.Fprintf(&b, "[%s %s]", m.typ, strings.Join(words[m.first:m.last+1], " "))
	}
	return b.String()
}
