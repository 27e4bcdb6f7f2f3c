package store_test

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/earshot-dev/earshot/store"
	"github.com/earshot-dev/earshot/store/storetest"
)

// TestSweepBlobsAndAccountBytes: SweepBlobs removes exactly the blobs no
// record names; AccountBytes counts an account's files once per file, hard
// links included.
func TestSweepBlobsAndAccountBytes(t *testing.T) {
	db := storetest.Open(t)
	write := func(name string, n int) {
		t.Helper()
		if _, err := db.WriteBlob(name, strings.NewReader(strings.Repeat("x", n)), 0); err != nil {
			t.Fatal(err)
		}
	}
	write("upload-1", 1000)
	if err := db.PutUpload(&store.Upload{ID: "1", Account: "acme", Blob: "upload-1", CreatedAt: time.Now()}); err != nil {
		t.Fatal(err)
	}
	if err := db.LinkBlob("upload-1", "job-a"); err != nil {
		t.Fatal(err)
	}
	if err := db.CreateJob(&store.Job{ID: "a", Account: "acme", Kind: store.KindPreRecorded, Status: store.StatusQueued, CreatedAt: time.Now(), Blob: "job-a"}); err != nil {
		t.Fatal(err)
	}
	write("live-b.wav", 300)
	if err := db.CreateJob(&store.Job{ID: "b", Account: "acme", Kind: store.KindLive, Status: store.StatusProcessing, CreatedAt: time.Now(), Blob: "live-b.wav"}); err != nil {
		t.Fatal(err)
	}
	write("job-c", 50) // another account's
	if err := db.CreateJob(&store.Job{ID: "c", Account: "other", Kind: store.KindPreRecorded, Status: store.StatusError, CreatedAt: time.Now(), Blob: "job-c"}); err != nil {
		t.Fatal(err)
	}
	write("job-orphan", 7000)
	write("upload-orphan", 10)

	if n, err := db.AccountBytes("acme"); err != nil || n != 1300 {
		t.Errorf("AccountBytes(acme) = %d, %v; want 1300 (the linked upload once, the recording)", n, err)
	}
	removed, err := db.SweepBlobs()
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(removed)
	if !slices.Equal(removed, []string{"job-orphan", "upload-orphan"}) {
		t.Errorf("SweepBlobs removed %v", removed)
	}
	entries, _ := os.ReadDir(filepath.Dir(db.BlobPath("x")))
	var left []string
	for _, e := range entries {
		left = append(left, e.Name())
	}
	if !slices.Equal(left, []string{"job-a", "job-c", "live-b.wav", "upload-1"}) {
		t.Errorf("left %v", left)
	}
	if n, err := db.AccountBytes("nobody"); err != nil || n != 0 {
		t.Errorf("AccountBytes(nobody) = %d, %v", n, err)
	}
}
