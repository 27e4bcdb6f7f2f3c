package bolt_test

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/earshot-dev/earshot/store"
	"github.com/earshot-dev/earshot/store/bolt"
)

// Key behaviour is asserted by the conformance cases KeyAccounts,
// AuthenticateAndRevoke and CallbackSecret (store/storetest); this adds
// what only the bbolt backend has: a database file to search.

// TestSecretNotOnDisk looks for the secret's bytes in the database file.
func TestSecretNotOnDisk(t *testing.T) {
	dir := t.TempDir()
	db, err := bolt.Open(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	secret, _, err := db.CreateKey("acme", store.KeyGrant{})
	if err != nil {
		t.Fatal(err)
	}
	db.Close()
	data, err := os.ReadFile(filepath.Join(dir, "earshot.db"))
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(data, []byte(secret[3:])) {
		t.Error("secret stored in plain text")
	}
}
