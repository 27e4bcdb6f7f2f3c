package recognizertest

import (
	"reflect"
	"strings"
	"testing"
)

// TestAlign: matches pair up, a substitution is one step with both
// indices, a word of one side only has -1 for the other; the steps cost
// EditDistance.
func TestAlign(t *testing.T) {
	for _, c := range []struct {
		a, b string
		want [][2]int
	}{
		{"a b c", "a b c", [][2]int{{0, 0}, {1, 1}, {2, 2}}},
		{"a b c", "a x c", [][2]int{{0, 0}, {1, 1}, {2, 2}}},
		{"a b c", "a c", [][2]int{{0, 0}, {1, -1}, {2, 1}}},
		{"a c", "a b c", [][2]int{{0, 0}, {-1, 1}, {1, 2}}},
		{"", "a", [][2]int{{-1, 0}}},
		{"a", "", [][2]int{{0, -1}}},
		{"", "", nil},
	} {
		a, b := strings.Fields(c.a), strings.Fields(c.b)
		got := Align(a, b)
		if !reflect.DeepEqual(got, c.want) {
			t.Errorf("Align(%q, %q) = %v, want %v", c.a, c.b, got, c.want)
		}
		cost := 0
		for _, op := range got {
			if op[0] < 0 || op[1] < 0 || a[op[0]] != b[op[1]] {
				cost++
			}
		}
		if cost != EditDistance(a, b) {
			t.Errorf("Align(%q, %q) costs %d, EditDistance %d", c.a, c.b, cost, EditDistance(a, b))
		}
	}
}
