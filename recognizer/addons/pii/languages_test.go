package pii

import (
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/earshot-dev/earshot/recognizer/addons/ner"
)

// TestProtocolListsEntityTypes: docs/PROTOCOL.md's table of entity types
// per language lists, for each language pii_redaction reads, exactly the
// single types ner detects, and each preset with exactly the types it
// stands for (GDPR_SENSITIVE as GDPR's plus its own).
func TestProtocolListsEntityTypes(t *testing.T) {
	b, err := os.ReadFile("../../../docs/PROTOCOL.md")
	if err != nil {
		t.Fatal(err)
	}
	rows := map[string][]string{} // first cell, unquoted, to the backquoted words of the second
	for _, line := range strings.Split(string(b), "\n") {
		cells := strings.Split(strings.TrimSpace(line), "|")
		if len(cells) != 4 {
			continue
		}
		key := strings.Fields(strings.Trim(strings.TrimSpace(cells[1]), "`"))
		if len(key) == 0 {
			continue
		}
		var words []string
		for i, part := range strings.Split(cells[2], "`") {
			if i%2 == 1 {
				words = append(words, part)
			}
		}
		rows[strings.Trim(key[0], "`")] = words
	}
	sorted := func(s []string) []string { s = slices.Clone(s); slices.Sort(s); return slices.Compact(s) }
	for _, lang := range Languages() {
		if got, want := sorted(rows[lang]), sorted(ner.Supported()); !slices.Equal(got, want) {
			t.Errorf("PROTOCOL.md lists for %s %v, ner detects %v", lang, got, want)
		}
	}
	for _, p := range ner.Presets() {
		listed := rows[p]
		if i := slices.Index(listed, "GDPR"); i >= 0 && p != "GDPR" {
			listed = append(slices.Delete(slices.Clone(listed), i, i+1), rows["GDPR"]...)
		}
		want, _ := ner.Expand([]string{p})
		if got := sorted(listed); !slices.Equal(got, sorted(want)) {
			t.Errorf("PROTOCOL.md lists preset %s as %v, ner expands it to %v", p, got, sorted(want))
		}
	}
}
