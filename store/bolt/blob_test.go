package bolt_test

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/earshot-dev/earshot/store/bolt"

	"github.com/earshot-dev/earshot/store"
	"github.com/earshot-dev/earshot/store/storetest"
)

func readBlob(t *testing.T, db *bolt.DB, name string) string {
	t.Helper()
	f, err := db.OpenBlob(name)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	b, err := io.ReadAll(f)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// blobFiles lists the blob directory, temporary files included.
func blobFiles(t *testing.T, db *bolt.DB) []string {
	t.Helper()
	entries, err := os.ReadDir(filepath.Join(db.Dir(), "blobs"))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	return names
}

func TestValidName(t *testing.T) {
	tests := []struct {
		name string
		ok   bool
	}{
		{"a", true},
		{"job-1.wav", true},
		{"A_b.c-9", true},
		{"..x", true},
		{strings.Repeat("x", 128), true},
		{strings.Repeat("x", 129), false},
		{"", false},
		{".", false},
		{"..", false},
		{"../x", false},
		{"a/b", false},
		{"/etc/passwd", false},
		{`a\b`, false},
		{"a b", false},
		{"a\x00b", false},
		{"é", false},
		{".tmp-123", false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := store.ValidName(tc.name); got != tc.ok {
				t.Errorf("ValidName(%q) = %t, want %t", tc.name, got, tc.ok)
			}
		})
	}
}

func TestWriteBlob(t *testing.T) {
	db := storetest.Open(t)
	data := strings.Repeat("0123456789", 100) // 1000 bytes
	tests := []struct {
		name    string
		blob    string
		limit   int64
		want    error
		wantLen int64
	}{
		{"no limit", "b1", 0, nil, 1000},
		{"under limit", "b2", 1001, nil, 1000},
		{"exactly limit", "b3", 1000, nil, 1000},
		{"over limit", "b4", 999, store.ErrTooLarge, 0},
		{"traversal", "../x", 0, store.ErrInvalidName, 0},
		{"slash", "a/b", 0, store.ErrInvalidName, 0},
		{"dot dot", "..", 0, store.ErrInvalidName, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			n, err := db.WriteBlob(tc.blob, strings.NewReader(data), tc.limit)
			if tc.want != nil {
				if !errors.Is(err, tc.want) {
					t.Fatalf("WriteBlob = %d, %v; want %v", n, err, tc.want)
				}
				if store.ValidName(tc.blob) {
					if _, err := db.OpenBlob(tc.blob); !errors.Is(err, store.ErrNotFound) {
						t.Errorf("rejected blob exists: %v", err)
					}
				}
				return
			}
			if err != nil || n != tc.wantLen {
				t.Fatalf("WriteBlob = %d, %v; want %d", n, err, tc.wantLen)
			}
			if got := readBlob(t, db, tc.blob); got != data {
				t.Errorf("blob holds %d bytes, want the 1000 written", len(got))
			}
		})
	}
	if got := blobFiles(t, db); !equalSet(got, []string{"b1", "b2", "b3"}) {
		t.Errorf("blob dir holds %v (temporary files left?)", got)
	}
	if _, err := os.Stat(filepath.Join(filepath.Dir(db.Dir()), "x")); !os.IsNotExist(err) {
		t.Error("path traversal wrote outside the blob dir")
	}

	// Overwrite replaces the content.
	if _, err := db.WriteBlob("b1", strings.NewReader("new"), 0); err != nil {
		t.Fatal(err)
	}
	if got := readBlob(t, db, "b1"); got != "new" {
		t.Errorf("overwritten blob = %q", got)
	}
	// A failing reader leaves nothing behind.
	if _, err := db.WriteBlob("b5", io.MultiReader(strings.NewReader("abc"), errReader{}), 0); err == nil {
		t.Error("WriteBlob with failing reader succeeded")
	}
	if got := blobFiles(t, db); !equalSet(got, []string{"b1", "b2", "b3"}) {
		t.Errorf("after failed write blob dir holds %v", got)
	}
}

type errReader struct{}

func (errReader) Read([]byte) (int, error) { return 0, errors.New("read failed") }

func equalSet(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	m := map[string]bool{}
	for _, s := range a {
		m[s] = true
	}
	for _, s := range b {
		if !m[s] {
			return false
		}
	}
	return true
}

func TestLinkBlob(t *testing.T) {
	db := storetest.Open(t)
	if _, err := db.WriteBlob("upload", strings.NewReader("audio bytes"), 0); err != nil {
		t.Fatal(err)
	}
	if _, err := db.WriteBlob("job", strings.NewReader("old"), 0); err != nil {
		t.Fatal(err)
	}
	if err := db.LinkBlob("upload", "job"); err != nil {
		t.Fatal(err)
	}
	if got := readBlob(t, db, "job"); got != "audio bytes" {
		t.Errorf("linked blob = %q", got)
	}
	a, _ := os.Stat(db.BlobPath("upload"))
	b, _ := os.Stat(db.BlobPath("job"))
	if !os.SameFile(a, b) {
		t.Error("LinkBlob copied on a file system that links")
	}
	// Removing one name keeps the other.
	if err := db.RemoveBlob("upload"); err != nil {
		t.Fatal(err)
	}
	if got := readBlob(t, db, "job"); got != "audio bytes" {
		t.Errorf("after removing source, blob = %q", got)
	}
	tests := []struct {
		name     string
		src, dst string
		want     error
	}{
		{"missing source", "upload", "x", store.ErrNotFound},
		{"bad source", "../etc", "x", store.ErrInvalidName},
		{"bad destination", "job", "../x", store.ErrInvalidName},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if err := db.LinkBlob(tc.src, tc.dst); !errors.Is(err, tc.want) {
				t.Errorf("LinkBlob(%q, %q) = %v, want %v", tc.src, tc.dst, err, tc.want)
			}
		})
	}
	if got := blobFiles(t, db); !equalSet(got, []string{"job"}) {
		t.Errorf("blob dir holds %v", got)
	}
}

func TestOpenRemoveBlob(t *testing.T) {
	db := storetest.Open(t)
	if _, err := db.OpenBlob("missing"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("OpenBlob(missing) = %v, want ErrNotFound", err)
	}
	if _, err := db.OpenBlob("../earshot.db"); !errors.Is(err, store.ErrInvalidName) {
		t.Errorf("OpenBlob(traversal) = %v, want ErrInvalidName", err)
	}
	if err := db.RemoveBlob("missing"); err != nil {
		t.Errorf("RemoveBlob(missing) = %v", err)
	}
	if err := db.RemoveBlob("../earshot.db"); !errors.Is(err, store.ErrInvalidName) {
		t.Errorf("RemoveBlob(traversal) = %v, want ErrInvalidName", err)
	}
	if _, err := os.Stat(filepath.Join(db.Dir(), "earshot.db")); err != nil {
		t.Errorf("database file: %v", err)
	}
}
