package sealed_test

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/earshot-dev/earshot/store/bolt"
	"github.com/earshot-dev/earshot/store/sealed"
)

// TestCallbackSecretInKeyring: a sealed store keeps callback secrets in
// its keyring, wrapped, never in its backend: one it made is in no file
// of the backend's, the same after a reopen and after a rotation; one the
// backend held before the store was sealed is moved at Open, the same
// bytes (receivers keep verifying), and the backend holds it no more.
// Before (until 2026-11-30) the sealed store passed callback secrets to
// its backend, which kept them in clear.
func TestCallbackSecretInKeyring(t *testing.T) {
	dir, keys := t.TempDir(), t.TempDir()
	kek := newKEK(t, keys, "kek")
	open := func(k *sealed.KEK) (*sealed.Store, *bolt.DB) {
		t.Helper()
		inner, err := bolt.Open(dir, &bolt.Options{})
		if err != nil {
			t.Fatal(err)
		}
		ring, err := sealed.OpenFileKeyring(filepath.Join(keys, sealed.KeyringFile), false)
		if err != nil {
			t.Fatal(err)
		}
		s, err := sealed.Open(inner, sealed.Options{Keys: []*sealed.KEK{k}, Keyring: ring})
		if err != nil {
			t.Fatal(err)
		}
		return s, inner
	}
	inBackend := func(secret []byte) bool {
		t.Helper()
		found := false
		filepath.Walk(dir, func(p string, fi os.FileInfo, err error) error {
			if err == nil && fi.Mode().IsRegular() {
				b, _ := os.ReadFile(p)
				found = found || bytes.Contains(b, secret)
			}
			return nil
		})
		return found
	}

	// A backend that made a secret before it was sealed.
	plain, err := bolt.Open(dir, &bolt.Options{})
	if err != nil {
		t.Fatal(err)
	}
	old, err := plain.CallbackSecret("old")
	if err != nil {
		t.Fatal(err)
	}
	plain.Close()

	s, inner := open(kek)
	fresh, err := s.CallbackSecret("acme")
	if err != nil {
		t.Fatal(err)
	}
	if again, err := s.CallbackSecret("acme"); err != nil || !bytes.Equal(again, fresh) {
		t.Errorf("second read %x, %v; want %x", again, err, fresh)
	}
	if moved, err := s.CallbackSecret("old"); err != nil || !bytes.Equal(moved, old) {
		t.Errorf("the secret made before sealing: %x, %v; want the same bytes %x", moved, err, old)
	}
	var left []string
	keep := errors.New("keep it") // a move's error: the backend deletes nothing
	inner.TakeCallbackSecrets(func(account string, _ []byte) error { left = append(left, account); return keep })
	if len(left) > 0 {
		t.Errorf("the backend still holds the secret of %v", left)
	}
	s.Close()
	if inBackend(fresh) {
		t.Error("a secret the sealed store made is in the backend's files in clear")
	}

	s, _ = open(kek)
	if got, err := s.CallbackSecret("acme"); err != nil || !bytes.Equal(got, fresh) {
		t.Errorf("after a reopen %x, %v; want %x", got, err, fresh)
	}
	next := newKEK(t, keys, "next")
	if _, err := s.Rotate(t.Context(), next); err != nil {
		t.Fatal(err)
	}
	s.Close()
	s, _ = open(next)
	defer s.Close()
	if got, err := s.CallbackSecret("acme"); err != nil || !bytes.Equal(got, fresh) {
		t.Errorf("after a rotation to a new key %x, %v; want %x", got, err, fresh)
	}
}
