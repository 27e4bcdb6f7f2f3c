package sealed

import (
	"encoding/json"
	"testing"
)

// FuzzPlainString: what plainString takes, json.Unmarshal reads as the
// same string, so the fast path never changes what a field opens to.
func FuzzPlainString(f *testing.F) {
	for _, s := range []string{`"es1.abc-_"`, `""`, `"a\"b"`, `"a\\u0041"`, `"é"`, "\"a\x01\"", `"`, `x`, `"a"b"`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		got, ok := plainString(raw)
		if !ok {
			return
		}
		var want string
		if err := json.Unmarshal(raw, &want); err != nil {
			t.Fatalf("plainString took %q, which is not a JSON string: %v", raw, err)
		}
		if got != want {
			t.Fatalf("plainString(%q) = %q, json.Unmarshal %q", raw, got, want)
		}
	})
}
