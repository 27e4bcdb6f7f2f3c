package main

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/earshot-dev/earshot/app"
	"github.com/earshot-dev/earshot/store/bolt"
	"github.com/earshot-dev/earshot/store/sealed"

	"github.com/earshot-dev/earshot/store"
)

func TestBackupRestoreCommands(t *testing.T) {
	dir := t.TempDir()
	db, err := bolt.Open(dir, &bolt.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	job := func(id string) *store.Job {
		return &store.Job{ID: id, Account: "acme", Kind: store.KindPreRecorded, Status: store.StatusDone,
			CreatedAt: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)}
	}
	if err := db.CreateJob(job("before-backup")); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), "earshot-backup.db")
	out, err := earshotd(t, "backup", "--data-dir", dir, file)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(out, file+"\t") {
		t.Errorf("backup printed %q", out)
	}

	// Work goes on, then the backup is restored.
	db, err = bolt.Open(dir, &bolt.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	if err := db.CreateJob(job("after-backup")); err != nil {
		t.Fatal(err)
	}
	// Refused while the store is held, as by a running daemon.
	if _, err := earshotd(t, "restore", "--data-dir", dir, file); err == nil || !strings.Contains(err.Error(), "stop it first") {
		t.Errorf("restore while the daemon runs: %v, want refusal", err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	out, err = earshotd(t, "restore", "--data-dir", dir, file)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out, "earshot.db.bak") {
		t.Errorf("restore printed %q; want it to name the kept database", out)
	}
	db, err = bolt.Open(dir, &bolt.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if err := db.Check(); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Job("before-backup"); err != nil {
		t.Errorf("restored store: %v", err)
	}
	if _, err := db.Job("after-backup"); err == nil {
		t.Error("restored store holds a job created after the backup")
	}

	for _, args := range [][]string{
		{"backup", "--data-dir", t.TempDir(), file},                           // no database there
		{"backup", "--data-dir", dir},                                         // no FILE
		{"restore", "--data-dir", dir, filepath.Join(t.TempDir(), "none.db")}, // no backup
	} {
		if _, err := earshotd(t, args...); err == nil {
			t.Errorf("earshotd %v succeeded", args)
		}
	}
	if entries, _ := os.ReadDir(filepath.Dir(file)); len(entries) != 1 {
		t.Errorf("backup dir holds %d files, want 1", len(entries))
	}
}

// openSealed opens the sealed store of dir with the key file key, as the
// daemon does (app.OpenStore).
func openSealed(t *testing.T, dir, key string) (store.Store, error) {
	t.Helper()
	cfg, err := loadConfig("", nil, func(c *app.Config) error {
		c.DataDir, c.Store.EncryptionKeyFile = dir, key
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return app.OpenStore(t.Context(), cfg.Config, &bolt.Options{NoSync: true})
}

// TestRestoreSealed: a sealed store's backup (FILE and FILE.keys),
// restored into a fresh data dir, reads back identical with the key; into
// the data dir it came from, after the job was deleted (its data key
// shredded), the job reads back again; a backup from before a rotation is
// refused without the old key and restored re-wrapped with --key-file.
func TestRestoreSealed(t *testing.T) {
	keyDir := t.TempDir()
	keyA, keyB := filepath.Join(keyDir, "a"), filepath.Join(keyDir, "b")
	for _, k := range []string{keyA, keyB} {
		if _, err := earshotd(t, "keys", "generate-data-key", k); err != nil {
			t.Fatal(err)
		}
	}
	dir := t.TempDir()
	db, err := openSealed(t, dir, keyA)
	if err != nil {
		t.Fatal(err)
	}
	want := &store.Job{ID: "j1", Account: "acme", Kind: store.KindPreRecorded, Status: store.StatusDone,
		CreatedAt: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC), Result: []byte(`{"words":"go forward ten meters"}`),
		CustomMetadata: store.Metadata{"ticket": "ZEBRA-7"}}
	if err := db.CreateJob(want); err != nil {
		t.Fatal(err)
	}
	db.Close()
	file := filepath.Join(t.TempDir(), "sealed.db")
	if _, err := earshotd(t, "backup", "--data-dir", dir, file); err != nil {
		t.Fatal(err)
	}
	check := func(t *testing.T, dir, key string) {
		t.Helper()
		db, err := openSealed(t, dir, key)
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		got, err := db.Job("j1")
		if err != nil {
			t.Fatalf("restored job: %v", err)
		}
		if string(got.Result) != string(want.Result) || got.CustomMetadata["ticket"] != "ZEBRA-7" {
			t.Fatalf("restored job: result %s metadata %v; want %s %v", got.Result, got.CustomMetadata, want.Result, want.CustomMetadata)
		}
	}

	t.Run("fresh data dir", func(t *testing.T) {
		fresh := filepath.Join(t.TempDir(), "data")
		out, err := earshotd(t, "restore", "--data-dir", fresh, file)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(out, "data keys") {
			t.Errorf("restore printed %q; want it to name the restored data keys", out)
		}
		check(t, fresh, keyA)
	})

	t.Run("after the job was deleted", func(t *testing.T) {
		db, err := openSealed(t, dir, keyA)
		if err != nil {
			t.Fatal(err)
		}
		if err := db.DeleteJob("j1"); err != nil {
			t.Fatal(err)
		}
		db.Close()
		if _, err := earshotd(t, "restore", "--data-dir", dir, file); err != nil {
			t.Fatal(err)
		}
		check(t, dir, keyA)
	})

	t.Run("backup from before a rotation", func(t *testing.T) {
		db, err := openSealed(t, dir, keyA)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := db.(*sealed.Store).RotateDataKey(keyB); err != nil {
			t.Fatal(err)
		}
		db.Close()
		if _, err := earshotd(t, "restore", "--data-dir", dir, file); err == nil || !errors.Is(err, sealed.ErrRestoreKeys) {
			t.Fatalf("restore of a backup under the old key without it: %v; want ErrRestoreKeys", err)
		}
		if _, err := os.Stat(filepath.Join(dir, sealed.KeyringFile+".restore")); err == nil {
			t.Error("a refused restore left its prepared keyring")
		}
		if _, err := earshotd(t, "restore", "--data-dir", dir, "--key-file", keyB, "--key-file", keyA, file); err != nil {
			t.Fatal(err)
		}
		check(t, dir, keyB)
	})
}
