package admin

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/earshot-dev/earshot/store/bolt"

	"github.com/earshot-dev/earshot/store"
	"github.com/earshot-dev/earshot/store/storetest"
)

// TestBackup: OpBackup writes a consistent copy only as backup-*.db
// directly in the data directory.
func TestBackup(t *testing.T) {
	db := storetest.Open(t)
	if err := db.CreateJob(&store.Job{ID: "j1", Account: "acme", Kind: store.KindLive, Status: store.StatusDone,
		CreatedAt: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)}); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		path string
		ok   bool
	}{
		{"in data dir", filepath.Join(db.Dir(), "backup-1.db"), true},
		{"relative", "backup-2.db", false},
		{"elsewhere", filepath.Join(t.TempDir(), "backup-3.db"), false},
		{"over the database", filepath.Join(db.Dir(), "earshot.db"), false},
		{"over a blob", filepath.Join(db.Dir(), "blobs", "backup-4.db"), false},
		{"escaping", filepath.Join(db.Dir(), "..", "backup-5.db"), false},
		{"wrong name", filepath.Join(db.Dir(), "copy.db"), false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := backup(db, tc.path)
			if !tc.ok {
				if err == nil {
					t.Fatalf("backup(%s) succeeded, want refused", tc.path)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			dir := t.TempDir()
			if err := os.Rename(tc.path, filepath.Join(dir, "earshot.db")); err != nil {
				t.Fatal(err)
			}
			cp, err := bolt.Open(dir, &bolt.Options{NoSync: true})
			if err != nil {
				t.Fatal(err)
			}
			defer cp.Close()
			if err := cp.Check(); err != nil {
				t.Fatal(err)
			}
			if _, err := cp.Job("j1"); err != nil {
				t.Errorf("backup lacks job: %v", err)
			}
		})
	}
}
