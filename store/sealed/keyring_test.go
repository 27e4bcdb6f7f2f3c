package sealed_test

import (
	"errors"
	"path/filepath"
	"slices"
	"testing"

	"github.com/earshot-dev/earshot/store"
	"github.com/earshot-dev/earshot/store/sealed"
)

// TestFileKeyringKEKsAndAdd: KEKs lists the keys wrapping the entries,
// each once, sorted, and follows a Put's re-wrap and a Delete; Add stores
// an entry only when its id has none.
func TestFileKeyringKEKsAndAdd(t *testing.T) {
	ring, err := sealed.OpenFileKeyring(filepath.Join(t.TempDir(), sealed.KeyringFile), true)
	if err != nil {
		t.Fatal(err)
	}
	defer ring.Close()
	put := func(id, kek string) {
		t.Helper()
		if err := ring.Put(id, sealed.Entry{KEK: kek, Wrapped: []byte("w")}); err != nil {
			t.Fatal(err)
		}
	}
	put("j:1", "bbbb")
	put("j:2", "aaaa")
	put("j:3", "bbbb")
	if got := ring.KEKs(); !slices.Equal(got, []string{"aaaa", "bbbb"}) {
		t.Errorf("KEKs %v", got)
	}
	put("j:2", "bbbb") // re-wrapped
	if got := ring.KEKs(); !slices.Equal(got, []string{"bbbb"}) {
		t.Errorf("after a re-wrap: KEKs %v", got)
	}
	if err := ring.Add("c:acme", sealed.Entry{KEK: "cccc", Wrapped: []byte("1")}); err != nil {
		t.Fatal(err)
	}
	if err := ring.Add("c:acme", sealed.Entry{KEK: "cccc", Wrapped: []byte("2")}); !errors.Is(err, store.ErrExists) {
		t.Errorf("a second Add: %v, want ErrExists", err)
	}
	if e, _ := ring.Get("c:acme"); string(e.Wrapped) != "1" {
		t.Errorf("a refused Add replaced the entry: %q", e.Wrapped)
	}
	if err := ring.Delete("c:acme"); err != nil {
		t.Fatal(err)
	}
	if got := ring.KEKs(); !slices.Equal(got, []string{"bbbb"}) {
		t.Errorf("after a delete: KEKs %v", got)
	}
}
