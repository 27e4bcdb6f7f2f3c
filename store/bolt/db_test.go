package bolt_test

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/earshot-dev/earshot/store/bolt"

	"github.com/earshot-dev/earshot/store"
)

func TestOpenCreatesLayout(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "a", "data")
	db, err := bolt.Open(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if !filepath.IsAbs(db.Dir()) || db.Dir() != dir {
		t.Errorf("Dir() = %q, want %q", db.Dir(), dir)
	}
	for _, tc := range []struct {
		name string
		path string
		dir  bool
		perm os.FileMode
	}{
		{"data dir", dir, true, 0o700},
		{"database", filepath.Join(dir, "earshot.db"), false, 0o600},
		{"blobs", filepath.Join(dir, "blobs"), true, 0o700},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fi, err := os.Stat(tc.path)
			if err != nil {
				t.Fatal(err)
			}
			if fi.IsDir() != tc.dir || fi.Mode().Perm() != tc.perm {
				t.Errorf("%s: dir=%t perm=%v, want dir=%t perm=%v", tc.path, fi.IsDir(), fi.Mode().Perm(), tc.dir, tc.perm)
			}
		})
	}
	if v, err := db.SchemaVersion(); err != nil || v != 2 {
		t.Errorf("SchemaVersion() = %d, %v; want 2", v, err)
	}
	if err := db.Check(); err != nil {
		t.Errorf("Check on empty store: %v", err)
	}
}

func TestOpenLocked(t *testing.T) {
	dir := t.TempDir()
	db, err := bolt.Open(dir, &bolt.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	_, err = bolt.Open(dir, &bolt.Options{Timeout: 100 * time.Millisecond})
	if !errors.Is(err, store.ErrLocked) {
		t.Fatalf("second Open: %v, want ErrLocked", err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("second Open took %s", d)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	db2, err := bolt.Open(dir, &bolt.Options{Timeout: 100 * time.Millisecond})
	if err != nil {
		t.Fatalf("Open after Close: %v", err)
	}
	db2.Close()
}

func TestCloseIdempotent(t *testing.T) {
	db, err := bolt.Open(t.TempDir(), &bolt.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		if err := db.Close(); err != nil {
			t.Fatalf("Close #%d: %v", i+1, err)
		}
	}
	if err := db.Check(); !errors.Is(err, store.ErrClosed) {
		t.Errorf("Check after Close: %v, want ErrClosed", err)
	}
	if _, err := db.Job("x"); err == nil {
		t.Error("Job after Close succeeded")
	}
}

func TestReopenKeepsEverything(t *testing.T) {
	dir := t.TempDir()
	db, err := bolt.Open(dir, nil) // real fsync
	if err != nil {
		t.Fatal(err)
	}
	mustCreate(t, db, newJob("j1", "acme", store.KindPreRecorded, store.StatusQueued, t0))
	secret, _, err := db.CreateKey("acme", store.KeyGrant{})
	if err != nil {
		t.Fatal(err)
	}
	cb, err := db.CallbackSecret("acme")
	if err != nil {
		t.Fatal(err)
	}
	if err := db.EnqueueDelivery(&store.Delivery{URL: "http://x/", JobID: "j1"}); err != nil {
		t.Fatal(err)
	}
	if err := db.PutUpload(&store.Upload{ID: "u1", Account: "acme", Blob: "b1"}); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}

	db, err = bolt.Open(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Job("j1"); err != nil {
		t.Errorf("job after reopen: %v", err)
	}
	if _, err := db.Authenticate(secret); err != nil {
		t.Errorf("key after reopen: %v", err)
	}
	if cb2, err := db.CallbackSecret("acme"); err != nil || string(cb2) != string(cb) {
		t.Errorf("callback secret changed across reopen: %v", err)
	}
	if n, err := db.PendingDeliveries(); err != nil || n != 1 {
		t.Errorf("PendingDeliveries = %d, %v; want 1", n, err)
	}
	if _, err := db.Upload("u1"); err != nil {
		t.Errorf("upload after reopen: %v", err)
	}
	if j, err := db.ClaimNext(store.KindPreRecorded); err != nil || j.ID != "j1" {
		t.Errorf("queue after reopen: %v", err)
	}
	if err := db.Check(); err != nil {
		t.Error(err)
	}
}

func TestOpenRemovesPartialBlobs(t *testing.T) {
	dir := t.TempDir()
	db, err := bolt.Open(dir, &bolt.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	db.Close()
	partial := filepath.Join(dir, "blobs", ".tmp-12345")
	kept := filepath.Join(dir, "blobs", "kept")
	for _, p := range []string{partial, kept} {
		if err := os.WriteFile(p, []byte("x"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	db, err = bolt.Open(dir, &bolt.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := os.Stat(partial); !os.IsNotExist(err) {
		t.Errorf("partial blob survived Open: %v", err)
	}
	if _, err := os.Stat(kept); err != nil {
		t.Errorf("complete blob removed: %v", err)
	}
}
