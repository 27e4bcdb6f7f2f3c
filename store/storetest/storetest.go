// Package storetest opens throwaway stores for tests of packages that use
// package store, and holds the conformance suite (Run, Cases) that every
// store.Store implementation passes: the embedded bbolt store (Open) and
// the PostgreSQL store (OpenPostgres, on a throwaway server from pgtest).
package storetest

import (
	"errors"
	"testing"

	"github.com/earshot-dev/earshot/store/bolt"

	"github.com/earshot-dev/earshot/store"
	"github.com/earshot-dev/earshot/store/postgres"
	"github.com/earshot-dev/earshot/store/postgres/pgtest"
)

// Open opens a store in a fresh t.TempDir() with fsync off (bolt.Options
// NoSync: a test's data need not survive a power cut). A cleanup runs
// db.Check, failing the test if the store is inconsistent, then closes it.
// A test may Close the store itself; the check is then skipped.
func Open(t testing.TB) *bolt.DB {
	t.Helper()
	db, err := bolt.Open(t.TempDir(), &bolt.Options{NoSync: true})
	if err != nil {
		t.Fatalf("storetest: open: %v", err)
	}
	t.Cleanup(func() {
		if err := db.Check(); err != nil && !errors.Is(err, store.ErrClosed) {
			t.Errorf("storetest: store inconsistent after test: %v", err)
		}
		if err := db.Close(); err != nil {
			t.Errorf("storetest: close: %v", err)
		}
	})
	return db
}

// OpenPostgres opens a PostgreSQL store (store/postgres) on a fresh
// database of srv, as node "node-a", sweeping unnamed blobs at once (no
// grace for other nodes' writes). Its cleanup runs Check and closes it, as
// Open's does; the database is dropped after.
func OpenPostgres(t testing.TB, srv *pgtest.Server) *postgres.DB {
	t.Helper()
	dsn := srv.NewDatabase(t)
	db, err := postgres.Open(t.Context(), dsn, &postgres.Options{NodeID: "node-a", SweepAfter: -1})
	if err != nil {
		t.Fatalf("storetest: open postgres: %v", err)
	}
	t.Cleanup(func() {
		if err := db.Check(); err != nil && !errors.Is(err, store.ErrClosed) {
			t.Errorf("storetest: store inconsistent after test: %v", err)
		}
		if err := db.Close(); err != nil {
			t.Errorf("storetest: close: %v", err)
		}
	})
	return db
}
