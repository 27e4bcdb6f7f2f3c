package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/earshot-dev/earshot/store/bolt"

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
