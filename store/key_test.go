package store_test

import (
	"bytes"
	"encoding/base64"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/earshot-dev/earshot/store"
	"github.com/earshot-dev/earshot/store/storetest"
)

func TestCreateKeyAccounts(t *testing.T) {
	db := storetest.Open(t)
	tests := []struct {
		account string
		ok      bool
	}{
		{"acme", true},
		{"A.b_c-9", true},
		{strings.Repeat("a", 64), true},
		{"", false},
		{strings.Repeat("a", 65), false},
		{"has space", false},
		{"slash/x", false},
		{"ünï", false},
	}
	for _, tc := range tests {
		t.Run(tc.account, func(t *testing.T) {
			secret, k, err := db.CreateKey(tc.account)
			if !tc.ok {
				if !errors.Is(err, store.ErrInvalid) {
					t.Fatalf("CreateKey(%q) = %v, want ErrInvalid", tc.account, err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			raw, err := base64.RawURLEncoding.DecodeString(strings.TrimPrefix(secret, "es_"))
			if !strings.HasPrefix(secret, "es_") || err != nil || len(raw) != 32 {
				t.Errorf("secret %q: not es_ + base64url(32 bytes): %v", secret, err)
			}
			if k.Account != tc.account || k.Prefix != secret[:8] || len(k.ID) != 12 || k.CreatedAt.IsZero() || !k.Active() {
				t.Errorf("key = %+v", k)
			}
		})
	}
}

func TestAuthenticateAndRevoke(t *testing.T) {
	db := storetest.Open(t)
	s1, k1, err := db.CreateKey("one")
	if err != nil {
		t.Fatal(err)
	}
	s2, k2, err := db.CreateKey("two")
	if err != nil {
		t.Fatal(err)
	}
	if s1 == s2 || k1.ID == k2.ID {
		t.Fatal("two keys share a secret or id")
	}
	tests := []struct {
		name    string
		secret  string
		account string
	}{
		{"first", s1, "one"},
		{"second", s2, "two"},
		{"unknown", "es_" + strings.Repeat("A", 43), ""},
		{"empty", "", ""},
		{"truncated", s1[:len(s1)-1], ""},
		{"no prefix", s1[3:], ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			k, err := db.Authenticate(tc.secret)
			if tc.account == "" {
				if !errors.Is(err, store.ErrUnauthorized) {
					t.Errorf("Authenticate = %+v, %v; want ErrUnauthorized", k, err)
				}
				return
			}
			if err != nil || k.Account != tc.account {
				t.Errorf("Authenticate = %+v, %v; want account %s", k, err, tc.account)
			}
		})
	}

	if err := db.RevokeKey(k1.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Authenticate(s1); !errors.Is(err, store.ErrUnauthorized) {
		t.Errorf("revoked key authenticates: %v", err)
	}
	if _, err := db.Authenticate(s2); err != nil {
		t.Errorf("other key stopped working: %v", err)
	}
	if err := db.RevokeKey("nosuchkey"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("RevokeKey(unknown) = %v, want ErrNotFound", err)
	}
	keys, err := db.Keys()
	if err != nil {
		t.Fatal(err)
	}
	if len(keys) != 2 || keys[0].ID != k1.ID || keys[1].ID != k2.ID {
		t.Fatalf("Keys() = %+v, want k1 then k2", keys)
	}
	if keys[0].Active() || keys[0].RevokedAt.IsZero() || !keys[1].Active() {
		t.Errorf("revocation not listed: %+v", keys)
	}
	revokedAt := keys[0].RevokedAt
	if err := db.RevokeKey(k1.ID); err != nil {
		t.Fatal(err)
	}
	if keys, _ := db.Keys(); !keys[0].RevokedAt.Equal(revokedAt) {
		t.Error("second revoke changed RevokedAt")
	}
}

// TestSecretNotOnDisk looks for the secret's bytes in the database file.
func TestSecretNotOnDisk(t *testing.T) {
	dir := t.TempDir()
	db, err := store.Open(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	secret, _, err := db.CreateKey("acme")
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

func TestCallbackSecret(t *testing.T) {
	db := storetest.Open(t)
	a1, err := db.CallbackSecret("a")
	if err != nil {
		t.Fatal(err)
	}
	a2, err := db.CallbackSecret("a")
	if err != nil {
		t.Fatal(err)
	}
	b, err := db.CallbackSecret("b")
	if err != nil {
		t.Fatal(err)
	}
	if len(a1) != 32 || !bytes.Equal(a1, a2) || bytes.Equal(a1, b) {
		t.Errorf("secrets a1=%x a2=%x b=%x", a1, a2, b)
	}
	if _, err := db.CallbackSecret(""); !errors.Is(err, store.ErrInvalid) {
		t.Errorf("CallbackSecret(\"\") = %v, want ErrInvalid", err)
	}
}
