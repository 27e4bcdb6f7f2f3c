package daemon

import (
	"fmt"
	"testing"

	"github.com/earshot-dev/earshot/recognizer"
	"github.com/earshot-dev/earshot/recognizer/addons/ner"
)

func TestScratch(t *testing.T) {
	for _, s := range []string{"and mr john guess would have been at leisure to consider", "call me at five five five one two three four and my email is john dot smith at example dot com", "he went to paris on the third of march with mister john dashwood"} {
		var ws []recognizer.Word
		for i, w := range splitWords(s) {
			ws = append(ws, recognizer.Word{Word: w, Start: float64(i) * 0.3, End: float64(i)*0.3 + 0.25})
		}
		ents, uns := ner.Find([]recognizer.Utterance{{Words: ws, Text: s}}, []string{"GDPR", "LOCATION", "DATE", "BOGUS"})
		fmt.Println(ents, uns)
	}
}
func splitWords(s string) []string { var out []string; w := ""; for _, r := range s + " " { if r == ' ' { if w != "" { out = append(out, w) }; w = "" } else { w += string(r) } }; return out }
