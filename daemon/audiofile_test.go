package daemon

import (
	"bytes"
	"crypto/rand"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/earshot-dev/earshot/store"
	"github.com/earshot-dev/earshot/store/sealed"
	"github.com/earshot-dev/earshot/store/storetest/memstore"
)

// TestBlobFile: a blob of a store that is not local files is copied to a
// scratch file under data_dir (disk, not RAM) when the store is not
// sealed, and to a memory file, nothing under data_dir, when it is; both
// hold the blob's bytes and are gone after release.
func TestBlobFile(t *testing.T) {
	blob := make([]byte, 200<<10)
	_, _ = rand.Read(blob)
	for _, tc := range []struct {
		name   string
		open   func(t *testing.T) store.Store
		memory bool
	}{
		{"unsealed", func(t *testing.T) store.Store { return memstore.New() }, false},
		{"sealed", func(t *testing.T) store.Store {
			s, _ := sealedOver(t, memstore.New())
			return s
		}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := testConfig(t)
			db := tc.open(t)
			d := &Daemon{cfg: cfg, db: db}
			if _, err := db.WriteBlob("b1", bytes.NewReader(blob), 1<<30); err != nil {
				t.Fatal(err)
			}
			path, release, err := d.blobFile("b1")
			if err != nil {
				t.Fatal(err)
			}
			got, err := os.ReadFile(path)
			if err != nil || !bytes.Equal(got, blob) {
				t.Fatalf("copy at %s: %d bytes, %v; want %d", path, len(got), err, len(blob))
			}
			inDataDir := strings.HasPrefix(path, filepath.Join(cfg.DataDir, "scratch")+"/")
			if tc.memory == inDataDir || tc.memory != strings.HasPrefix(path, "/proc/") {
				t.Fatalf("copy at %s; want a memory file: %v", path, tc.memory)
			}
			release()
			if _, err := os.Stat(path); err == nil {
				t.Errorf("%s still there after release", path)
			}
		})
	}
}

// TestDropRecording: a live recording that will not be stored leaves
// nothing under data_dir: on a store that is not local files the local
// file goes, and on a sealed store the spool goes with its data key (the
// keyring holds no "s:" entry after). Before, nothing removed either, and
// a session that never connected left one spool and one key each.
func TestDropRecording(t *testing.T) {
	var ring *sealed.FileKeyring
	for _, tc := range []struct {
		name string
		open func(t *testing.T) store.Store
	}{
		{"unsealed", func(t *testing.T) store.Store { return memstore.New() }},
		{"sealed", func(t *testing.T) store.Store {
			var s *sealed.Store
			s, ring = sealedOver(t, memstore.New())
			return s
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := &Daemon{cfg: testConfig(t), db: tc.open(t)}
			path, err := d.recordingPath("live-x.wav")
			if err != nil {
				t.Fatal(err)
			}
			f, err := d.createRecording(path)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := f.Write(make([]byte, 44)); err != nil {
				t.Fatal(err)
			}
			f.Close()
			if err := d.dropRecording(path); err != nil {
				t.Fatal(err)
			}
			if _, err := os.Stat(path); !errors.Is(err, fs.ErrNotExist) {
				t.Errorf("%s still there (%v)", path, err)
			}
			if tc.name == "sealed" {
				for _, id := range ring.IDs() {
					if strings.HasPrefix(id, "s:") {
						t.Errorf("keyring still holds %s", id)
					}
				}
			}
			if err := d.dropRecording(path); err != nil {
				t.Errorf("dropping it again: %v", err)
			}
		})
	}
}
