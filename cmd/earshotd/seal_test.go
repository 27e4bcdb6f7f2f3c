package main

import (
	"bytes"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/earshot-dev/earshot/app"
	"github.com/earshot-dev/earshot/config"
	"github.com/earshot-dev/earshot/store"
	"github.com/earshot-dev/earshot/store/postgres"
	"github.com/earshot-dev/earshot/store/postgres/pgtest"
)

// TestSealExistingRefusals: keys seal-existing names what it needs when it
// cannot run: a data key (encryption at rest off).
func TestSealExistingRefusals(t *testing.T) {
	_, err := earshotd(t, "keys", "seal-existing", "--data-dir", t.TempDir())
	if err == nil || !strings.Contains(err.Error(), "store.encryption_key_file") {
		t.Errorf("keys seal-existing without a data key: %v; want an error naming store.encryption_key_file", err)
	}
}

// TestSealExistingShared: on a PostgreSQL store, keys seal-existing refuses
// while a node was heard from lately, naming it; once every node is quiet
// it seals the job the database held in clear (its row no longer holds
// the words), rewrites the content tables, and the job reads back through
// a sealed store. Before (until 2026-11-30) a cluster that turned the key
// on kept its older rows in clear.
func TestSealExistingShared(t *testing.T) {
	srv := pgtest.StartTest(t)
	dsn := srv.NewDatabase(t)
	plain, err := postgres.Open(t.Context(), dsn, &postgres.Options{NodeID: "node-a"})
	if err != nil {
		t.Fatal(err)
	}
	j := &store.Job{ID: "j1", Account: "acme", Kind: store.KindPreRecorded, Status: store.StatusDone, CreatedAt: time.Now(),
		Result: json.RawMessage(`{"words":"ZEBRAQUOKKA in clear"}`)}
	if err := plain.CreateJob(j); err != nil {
		t.Fatal(err)
	}
	if err := plain.Cluster().Heartbeat(store.Node{ID: "node-a", LiveCapacity: 1}); err != nil {
		t.Fatal(err)
	}
	plain.Close()
	keyFile := filepath.Join(t.TempDir(), "data-key")
	if _, err := earshotd(t, "keys", "generate-data-key", keyFile); err != nil {
		t.Fatal(err)
	}
	args := []string{"keys", "seal-existing", "--data-dir", t.TempDir(), "--set", "store.backend=postgres",
		"--set", "store.dsn=" + dsn, "--set", "store.encryption_key_file=" + keyFile}
	if _, err := earshotd(t, args...); err == nil || !strings.Contains(err.Error(), "node-a") || !strings.Contains(err.Error(), "stop every node") {
		t.Fatalf("seal-existing beside a node heard just now: %v; want a refusal naming it", err)
	}
	// The node stopped a minute ago.
	conn, err := pgx.Connect(t.Context(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(t.Context())
	if _, err := conn.Exec(t.Context(), "UPDATE nodes SET last_seen_ns = last_seen_ns - 60000000000"); err != nil {
		t.Fatal(err)
	}
	out, err := earshotd(t, args...)
	if err != nil || !strings.Contains(out, "1 jobs") || !strings.Contains(out, "VACUUM FULL") {
		t.Fatalf("seal-existing: %v %q", err, out)
	}
	var row []byte
	if err := conn.QueryRow(t.Context(), "SELECT result FROM jobs WHERE id = 'j1'").Scan(&row); err != nil || bytes.Contains(row, []byte("ZEBRAQUOKKA")) {
		t.Errorf("the job's row after: %v %q", err, row)
	}
	cfg, err := loadConfig("", nil, func(c *app.Config) error {
		c.Store.Backend, c.Store.DSN, c.Store.EncryptionKeyFile = "postgres", config.Secret(dsn), keyFile
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	db, err := app.OpenStore(t.Context(), cfg.Config, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if got, err := db.Job("j1"); err != nil || string(got.Result) != string(j.Result) {
		t.Errorf("the job through a sealed store: %v %s", err, got.Result)
	}
}
