package sphinx

import (
	"strings"
	"testing"
)

func TestLetterToSound(t *testing.T) {
	tests := []struct{ word, want string }{
		{"cat", "K AE T"},
		{"made", "M EY D"},
		{"time", "T AY M"},
		{"ship", "SH IH P"},
		{"phone", "F OW N"},
		{"nation", "N AE SH AH N"},
		{"city", "S IH T IY"},
		{"back", "B AE K"},
		{"little", "L IH T AH L"},
		{"wanted", "W AE N T IH D"},
		{"boxes", "B AA K S IH Z"},
		{"night", "N AY T"},
		{"queen", "K W IY N"},
		{"turnips", "T ER N IH P S"},
		{"Dashwood", "D AE SH W UW D"},
		{"o'brien", "AA B R IY N"},
		{"1234", ""},
		{"", ""},
	}
	for _, tt := range tests {
		if got := strings.Join(letterToSound(tt.word), " "); got != tt.want {
			t.Errorf("letterToSound(%q) = %q, want %q", tt.word, got, tt.want)
		}
	}
}

// TestLetterToSoundPhones checks every output phone is one of the
// dictionary's, on every dictionary word's spelling.
func TestLetterToSoundPhones(t *testing.T) {
	lx, err := loadLexicon(DefaultDict)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for w := range lx.prons {
		for _, p := range letterToSound(w) {
			if !lx.phones[p] {
				t.Fatalf("letterToSound(%q) has %q, not a phone of the model", w, p)
			}
		}
		if n++; n > 20000 {
			break
		}
	}
}
