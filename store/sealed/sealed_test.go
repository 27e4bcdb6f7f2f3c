package sealed_test

import (
	"crypto/rand"
	"os"
	"path/filepath"
	"testing"

	"github.com/earshot-dev/earshot/store"
	"github.com/earshot-dev/earshot/store/postgres/pgtest"
	"github.com/earshot-dev/earshot/store/sealed"
	"github.com/earshot-dev/earshot/store/storetest"
)

var pg *pgtest.Server

func TestMain(m *testing.M) { os.Exit(pgtest.Main(m, &pg)) }

// newKEK makes a random key in dir and loads it.
func newKEK(t testing.TB, dir, name string) *sealed.KEK {
	t.Helper()
	path := filepath.Join(dir, name)
	if _, err := sealed.GenerateKeyFile(path); err != nil {
		t.Fatal(err)
	}
	k, err := sealed.LoadKeyFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// seal wraps inner with a fresh keyring and key in a temp dir.
func seal(t testing.TB, inner store.Store) *sealed.Store {
	s, _ := sealRing(t, inner)
	return s
}

// sealRing is seal, with the keyring, for tests that read its ids.
func sealRing(t testing.TB, inner store.Store) (*sealed.Store, *sealed.FileKeyring) {
	t.Helper()
	dir := t.TempDir()
	ring, err := sealed.OpenFileKeyring(filepath.Join(dir, sealed.KeyringFile), true)
	if err != nil {
		t.Fatal(err)
	}
	s, err := sealed.Open(inner, sealed.Options{Keys: []*sealed.KEK{newKEK(t, dir, "kek")}, Keyring: ring})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s, ring
}

// TestConformance runs the store contract's suite over the sealing layer
// on both backends.
func TestConformance(t *testing.T) {
	t.Run("bbolt", func(t *testing.T) {
		storetest.Run(t, func(t testing.TB) store.Store { return seal(t, storetest.Open(t)) })
	})
	t.Run("postgres", func(t *testing.T) {
		storetest.Run(t, func(t testing.TB) store.Store { return seal(t, storetest.OpenPostgres(t, pg)) })
	})
	// A cluster's layer: the data keys in the shared database too
	// (store/postgres.Keyring), as app.OpenStore composes it.
	t.Run("postgres-keyring", func(t *testing.T) {
		storetest.Run(t, func(t testing.TB) store.Store {
			db := storetest.OpenPostgres(t, pg)
			s, err := sealed.Open(db, sealed.Options{Keys: []*sealed.KEK{newKEK(t, t.TempDir(), "kek")}, Keyring: db.Keyring()})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { s.Close() })
			return s
		})
	})
}

var _ = rand.Read
