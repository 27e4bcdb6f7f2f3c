package sphinx

import (
	"strings"
	"testing"
)

func TestWordText(t *testing.T) {
	tests := []struct {
		in   string
		want string
		ok   bool
	}{
		{"hello", "hello", true},
		{"read(2)", "read", true},
		{"i'm", "i'm", true},
		{"<s>", "", false},
		{"</s>", "", false},
		{"<sil>", "", false},
		{"[NOISE]", "", false},
		{"++GARBAGE++", "", false},
		{"", "", false},
	}
	for _, tt := range tests {
		got, ok := wordText(tt.in)
		if got != tt.want || ok != tt.ok {
			t.Errorf("wordText(%q) = %q, %v; want %q, %v", tt.in, got, ok, tt.want, tt.ok)
		}
	}
	if got := strings.Join(cleanHyp("<s> go(2) [NOISE] forward </s>"), " "); got != "go forward" {
		t.Errorf("cleanHyp: %q", got)
	}
}
