package bolt_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/earshot-dev/earshot/store"
	"github.com/earshot-dev/earshot/store/storetest"
)

func TestNoSpace(t *testing.T) {
	marked := store.NoSpace(&fs.PathError{Op: "write", Path: "x", Err: syscall.ENOSPC})
	tests := []struct {
		name  string
		err   error
		full  bool
		errno error
	}{
		{"ENOSPC", &fs.PathError{Op: "write", Path: "x", Err: syscall.ENOSPC}, true, syscall.ENOSPC},
		{"EDQUOT", &fs.PathError{Op: "write", Path: "x", Err: syscall.EDQUOT}, true, syscall.EDQUOT},
		{"EFBIG", &fs.PathError{Op: "truncate", Path: "x", Err: syscall.EFBIG}, true, syscall.EFBIG},
		{"EIO", &fs.PathError{Op: "write", Path: "x", Err: syscall.EIO}, false, syscall.EIO},
		{"not found", store.ErrNotFound, false, nil},
		{"nil", nil, false, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := store.NoSpace(tc.err)
			if errors.Is(got, store.ErrNoSpace) != tc.full {
				t.Errorf("NoSpace(%v) = %v, ErrNoSpace %v, want %v", tc.err, got, !tc.full, tc.full)
			}
			if tc.errno != nil && !errors.Is(got, tc.errno) {
				t.Errorf("NoSpace(%v) = %v lost the system error", tc.err, got)
			}
			if !tc.full && got != tc.err {
				t.Errorf("NoSpace(%v) = %v, want it unchanged", tc.err, got)
			}
		})
	}
	if got := store.NoSpace(marked); got != marked {
		t.Errorf("NoSpace of a marked error = %v, want it unchanged", got)
	}
}

// withFileSizeLimit runs fn with this process's file-size limit
// (RLIMIT_FSIZE, soft) at limit bytes, as systemd's LimitFSIZE= or a
// quota would hold the daemon: a write or growth past it fails with EFBIG.
// It needs no privilege (lowering a soft limit, then raising it back to
// the hard one), so the disk-full tests never skip. The store tests run
// serially, so nothing else writes meanwhile; fn must not log (a test's
// output may be a file).
func withFileSizeLimit(t *testing.T, limit uint64, fn func()) {
	t.Helper()
	var old syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_FSIZE, &old); err != nil {
		t.Fatal(err)
	}
	if old.Max < limit {
		t.Fatalf("file size limit: hard limit %d below %d", old.Max, limit)
	}
	if err := syscall.Setrlimit(syscall.RLIMIT_FSIZE, &syscall.Rlimit{Cur: limit, Max: old.Max}); err != nil {
		t.Fatalf("lower the file size limit: %v", err)
	}
	defer func() {
		if err := syscall.Setrlimit(syscall.RLIMIT_FSIZE, &old); err != nil {
			t.Fatalf("restore the file size limit: %v", err)
		}
	}()
	fn()
}

// TestWriteBlobNoSpace: a blob that does not fit is ErrNoSpace wrapping the
// system error, leaves no file behind, and what fits is still written.
func TestWriteBlobNoSpace(t *testing.T) {
	t.Run("file size limit", func(t *testing.T) {
		db := storetest.Open(t)
		var big, small error
		withFileSizeLimit(t, 64<<10, func() {
			_, big = db.WriteBlob("big", bytes.NewReader(make([]byte, 1<<20)), 0)
			_, small = db.WriteBlob("small", strings.NewReader("fits"), 0)
		})
		if !errors.Is(big, store.ErrNoSpace) || !errors.Is(big, syscall.EFBIG) {
			t.Fatalf("WriteBlob past the file size limit = %v, want ErrNoSpace wrapping EFBIG", big)
		}
		if small != nil {
			t.Errorf("small write under the limit: %v", small)
		}
		if got := blobFiles(t, db); len(got) != 1 || got[0] != "small" {
			t.Errorf("blob dir holds %v, want only small", got)
		}
	})
	// A real ENOSPC from a full file system (also in create and close):
	// mounting the tmpfs needs CAP_SYS_ADMIN, the case above does not.
	t.Run("full file system", func(t *testing.T) {
		db := storetest.Open(t)
		blobDir := filepath.Join(db.Dir(), "blobs")
		if err := syscall.Mount("tmpfs", blobDir, "tmpfs", 0, "size=64k"); err != nil {
			t.Skipf("cannot mount a small tmpfs (needs CAP_SYS_ADMIN): %v", err)
		}
		t.Cleanup(func() {
			if err := syscall.Unmount(blobDir, 0); err != nil {
				t.Errorf("unmount: %v", err)
			}
		})
		_, err := db.WriteBlob("big", bytes.NewReader(make([]byte, 1<<20)), 0)
		if !errors.Is(err, store.ErrNoSpace) || !errors.Is(err, syscall.ENOSPC) {
			t.Fatalf("WriteBlob on full disk = %v, want ErrNoSpace wrapping ENOSPC", err)
		}
		if got := blobFiles(t, db); len(got) != 0 {
			t.Errorf("full disk left %v", got)
		}
		if _, err := db.WriteBlob("small", strings.NewReader("fits"), 0); err != nil {
			t.Errorf("small write after ENOSPC: %v", err)
		}
	})
}

// TestCommitNoSpace: a transaction the disk cannot take is ErrNoSpace
// wrapping EFBIG, whether its pages fail to be written or the database
// file fails to grow (bbolt reports that as text), and it changes nothing;
// once there is room the same update commits.
func TestCommitNoSpace(t *testing.T) {
	result := json.RawMessage(`{"text":"` + strings.Repeat("a", 1<<20) + `"}`)
	tests := []struct {
		name   string
		limit  func(dbSize uint64) uint64
		result json.RawMessage
	}{
		// Nothing can be written: the pages of even a small update fail.
		{"pages", func(uint64) uint64 { return 0 }, json.RawMessage(`{"text":"a"}`)},
		// What the file holds can be rewritten, but it cannot grow to
		// take a 1 MiB result.
		{"growth", func(size uint64) uint64 { return size }, result},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			db := storetest.Open(t)
			mustCreate(t, db, newJob("j1", "acme", store.KindPreRecorded, store.StatusProcessing, time.Now()))
			fi, err := os.Stat(filepath.Join(db.Dir(), "earshot.db"))
			if err != nil {
				t.Fatal(err)
			}
			finish := func(j *store.Job) ([]*store.Delivery, error) {
				j.Status, j.Result = store.StatusDone, tc.result
				return nil, nil
			}
			var full error
			withFileSizeLimit(t, tc.limit(uint64(fi.Size())), func() {
				_, full = db.UpdateJob("j1", finish)
			})
			if !errors.Is(full, store.ErrNoSpace) || !errors.Is(full, syscall.EFBIG) {
				t.Fatalf("UpdateJob past the file size limit (database %d bytes) = %v, want ErrNoSpace wrapping EFBIG", fi.Size(), full)
			}
			if j, err := db.Job("j1"); err != nil || j.Status != store.StatusProcessing || j.Result != nil {
				t.Fatalf("job after the failed commit: %v %v", j, err)
			}
			if _, err := db.UpdateJob("j1", finish); err != nil {
				t.Fatalf("UpdateJob with room again: %v", err)
			}
			if j, err := db.Job("j1"); err != nil || j.Status != store.StatusDone || !bytes.Equal(j.Result, tc.result) {
				t.Errorf("job after the commit with room: %v", err)
			}
		})
	}
}
