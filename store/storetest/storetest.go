// Package storetest opens throwaway stores for tests of packages that use
// package store.
package storetest

import (
	"errors"
	"testing"

	"github.com/earshot-dev/earshot/store"
)

// Open opens a store in a fresh t.TempDir() with fsync off (store.Options
// NoSync: a test's data need not survive a power cut). A cleanup runs
// db.Check, failing the test if the store is inconsistent, then closes it.
// A test may Close the store itself; the check is then skipped.
func Open(t testing.TB) *store.DB {
	t.Helper()
	db, err := store.Open(t.TempDir(), &store.Options{NoSync: true})
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
