package fetch

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/earshot-dev/earshot/store"
)

// TestStoredName: a fetched file's name is stored within the upload's
// 255-byte rule, valid UTF-8, cut on a rune boundary, its extension kept.
func TestStoredName(t *testing.T) {
	long := strings.Repeat("é", 200) // 400 bytes; byte 251 is inside a rune
	tests := []struct {
		name, in, want string
	}{
		{"short", "call 7.mp3", "call 7.mp3"},
		{"empty", "", ""},
		{"exactly 255", strings.Repeat("a", 251) + ".wav", strings.Repeat("a", 251) + ".wav"},
		{"256 keeps extension", strings.Repeat("a", 252) + ".wav", strings.Repeat("a", 251) + ".wav"},
		{"cut on a rune boundary", long + ".flac", strings.Repeat("é", 125) + ".flac"},
		{"no extension", strings.Repeat("é", 200), strings.Repeat("é", 127)},
		{"extension too long to be one", "a." + strings.Repeat("b", 300), "a." + strings.Repeat("b", 253)},
		{"not UTF-8", "a\xffb.wav", "a\uFFFDb.wav"},
		{"9.5 MB", strings.Repeat("x", 9_500_000) + ".wav", strings.Repeat("x", 251) + ".wav"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := storedName(tt.in)
			if got != tt.want {
				t.Errorf("storedName = %q (%d bytes), want %q (%d bytes)", got, len(got), tt.want, len(tt.want))
			}
			if len(got) > store.MaxFilenameBytes || !utf8.ValidString(got) {
				t.Errorf("%d bytes, valid UTF-8 %v", len(got), utf8.ValidString(got))
			}
		})
	}
}
