package ner

import (
	"strings"
	"testing"

	"github.com/earshot-dev/earshot/recognizer"
)

// TestNumberRun checks the digits a spoken run gives and the words it
// covers (end), so a redaction of the run covers separators and homophones.
func TestNumberRun(t *testing.T) {
	tests := []struct {
		text   string
		digits string
		end    int
	}{
		{"four one one one dash two two", "411122", 7},
		{"forty one eleven", "4111", 3},
		{"double five oh", "550", 3},
		{"six one seven uh five five five", "617555", 7},
		{"two oh six to five five five", "2062555", 7},
		{"five five dash", "55", 2},         // a trailing separator is not the run's
		{"five five for the", "55", 2},      // nor a homophone without a digit after it
		{"nine to five thirty", "92530", 4}, // between digits a homophone is read: the caller judges the length
		{"for one one", "", 0},              // a run never starts with a homophone
		{"dash five", "", 0},
		{"", "", 0},
	}
	for _, tt := range tests {
		t.Run(tt.text, func(t *testing.T) {
			d, e := numberRun(strings.Fields(tt.text), 0)
			if d != tt.digits || e != tt.end {
				t.Errorf("numberRun = %q, %d; want %q, %d", d, e, tt.digits, tt.end)
			}
		})
	}
}

// TestNumberRunBounded reads a transcript of nothing but digits and
// separators: each run stops at maxRunWords words, and detection over it
// reads each word a bounded number of times (runs are read once, from
// their first word).
func TestNumberRunBounded(t *testing.T) {
	toks := strings.Fields(strings.Repeat("four dash one uh ", 50_000))
	d, e := numberRun(toks, 0)
	if e > maxRunWords+2 || len(d) > 2*maxDigitToken+2 {
		t.Fatalf("run read %d words, %d digits", e, len(d))
	}
	u := utt(strings.Join(toks, " "))
	ents, _ := Find([]recognizer.Utterance{u}, []string{CreditCard, PhoneNumber, SSN})
	for _, en := range ents {
		if en.LastWord-en.FirstWord > maxRunWords+2 {
			t.Fatalf("entity of %d words", en.LastWord-en.FirstWord+1)
		}
	}
}

func TestExpiryDigits(t *testing.T) {
	tests := []struct{ text, want string }{
		{"oh four twenty six", "04/26"},
		{"four twenty six", "04/26"},
		{"twelve twenty seven", "12/27"},
		{"oh four slash twenty six", "04/26"},
		{"oh four twenty twenty six", "04/26"},
		{"thirteen twenty six", ""},
		{"three", ""},
		{"oh oh twenty six", ""},
	}
	for _, tt := range tests {
		t.Run(tt.text, func(t *testing.T) {
			toks := strings.Fields(tt.text)
			v, e := expiryDigits(toks, 0)
			if v != tt.want || (v != "" && e != len(toks)) {
				t.Errorf("expiryDigits = %q, %d; want %q", v, e, tt.want)
			}
		})
	}
}
