package store_test

import (
	"path/filepath"
	"testing"

	"github.com/earshot-dev/earshot/store"
)

// FuzzValidName checks that every valid name stays inside the blob
// directory.
func FuzzValidName(f *testing.F) {
	for _, s := range []string{"a", "..", "../x", "a/b", ".tmp-1", "x.wav", "\x00", "..."} {
		f.Add(s)
	}
	dir := "/data/blobs"
	f.Fuzz(func(t *testing.T, name string) {
		if !store.ValidName(name) {
			return
		}
		p := filepath.Join(dir, name)
		if filepath.Dir(p) != dir || filepath.Base(p) != name {
			t.Errorf("valid name %q resolves to %q", name, p)
		}
	})
}
