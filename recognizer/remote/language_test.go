package remote

import (
	"slices"
	"testing"
)

func TestLanguageCode(t *testing.T) {
	tests := []struct{ in, want string }{
		{"en", "en"}, {"english", "en"}, {"English", "en"}, {" EN ", "en"}, {"en-US", "en"}, {"pt_BR", "pt"},
		{"haw", "haw"}, {"hawaiian", "haw"}, {"haitian creole", "ht"}, {"mandarin", "zh"}, {"yue", "zh"},
		{"castilian", "es"}, {"jv", "jw"}, {"", ""}, {"klingon", ""}, {"xx-YY", ""}, {"wo", ""},
	}
	for _, tc := range tests {
		if got := languageCode(tc.in); got != tc.want {
			t.Errorf("languageCode(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestLanguageTables(t *testing.T) {
	if !slices.IsSorted(specLanguages) || len(specLanguages) != 99 || len(slices.Compact(slices.Clone(specLanguages))) != 99 {
		t.Errorf("spec languages must be the 99 sorted, distinct codes of SPEC 2.6")
	}
	covered := map[string]bool{}
	for name, code := range languageNames {
		if !slices.Contains(specLanguages, code) {
			t.Errorf("%q maps to %q, not a SPEC code", name, code)
		}
		covered[code] = true
	}
	for _, c := range specLanguages {
		if !covered[c] {
			t.Errorf("no language name maps to %q", c)
		}
	}
}
