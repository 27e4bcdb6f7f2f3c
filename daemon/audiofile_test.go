package daemon

import (
	"bytes"
	"crypto/rand"
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
	keyDir := t.TempDir()
	if _, err := sealed.GenerateKeyFile(filepath.Join(keyDir, "k")); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name   string
		open   func(t *testing.T) store.Store
		memory bool
	}{
		{"unsealed", func(t *testing.T) store.Store { return memstore.New() }, false},
		{"sealed", func(t *testing.T) store.Store {
			kek, err := sealed.LoadKeyFile(filepath.Join(keyDir, "k"))
			if err != nil {
				t.Fatal(err)
			}
			ring, err := sealed.OpenFileKeyring(filepath.Join(t.TempDir(), sealed.KeyringFile), true)
			if err != nil {
				t.Fatal(err)
			}
			s, err := sealed.Open(memstore.New(), sealed.Options{Keys: []*sealed.KEK{kek}, Keyring: ring})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { s.Close() })
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
