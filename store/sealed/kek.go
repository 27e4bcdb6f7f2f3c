package sealed

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
)

// KeySize is the size of a key-encryption key and of a data key: AES-256.
const KeySize = 32

// KEK is a key-encryption key: it wraps the data keys. Its bytes never
// leave it; it prints as its ID.
type KEK struct {
	id   string // KeyID of the key
	path string // where it was read from, for messages
	aead cipher.AEAD
}

// ErrKeyFile is returned by LoadKeyFile when the file is not a usable key:
// its size is not KeySize or it can be read by group or others.
var ErrKeyFile = errors.New("sealed: unusable key file")

// NewKEK makes a KEK of the KeySize bytes key; path names it in messages.
func NewKEK(key []byte, path string) (*KEK, error) {
	if len(key) != KeySize {
		return nil, fmt.Errorf("key %s: %d bytes, want %d: %w", path, len(key), KeySize, ErrKeyFile)
	}
	aead, err := newGCM(key)
	if err != nil {
		return nil, err
	}
	return &KEK{id: KeyID(key), path: path, aead: aead}, nil
}

// KeyID is a key's public name: 8 hex digits of the SHA-256 of a fixed
// label and the key, which tells keys apart without saying anything of
// their bytes.
func KeyID(key []byte) string {
	h := sha256.New()
	h.Write([]byte("earshot key id v1\x00"))
	h.Write(key)
	return hex.EncodeToString(h.Sum(nil)[:4])
}

// ID is the key's KeyID.
func (k *KEK) ID() string { return k.id }

// Path is the file the key was read from.
func (k *KEK) Path() string { return k.path }

// LogValue prints the key as its id and file, never its bytes.
func (k *KEK) LogValue() slog.Value {
	return slog.GroupValue(slog.String("key_id", k.id), slog.String("file", k.path))
}

// String is the key's id and file.
func (k *KEK) String() string { return "key " + k.id + " (" + k.path + ")" }

// LoadKeyFile reads a KEK from path: exactly KeySize bytes, in a file the
// group and others cannot read or write (mode 0600 or 0400). Every failure
// names the file, never its content.
func LoadKeyFile(path string) (*KEK, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("key file %s: %w", path, err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("key file %s: %w", path, err)
	}
	if !st.Mode().IsRegular() {
		return nil, fmt.Errorf("key file %s: not a regular file: %w", path, ErrKeyFile)
	}
	if perm := st.Mode().Perm(); perm&0o077 != 0 {
		return nil, fmt.Errorf("key file %s: mode %04o lets group or others at it, want 0600 or 0400: %w", path, perm, ErrKeyFile)
	}
	if st.Size() != KeySize {
		return nil, fmt.Errorf("key file %s: %d bytes, want %d random bytes: %w", path, st.Size(), KeySize, ErrKeyFile)
	}
	key := make([]byte, KeySize)
	if _, err := io.ReadFull(f, key); err != nil {
		return nil, fmt.Errorf("key file %s: %w", path, err)
	}
	defer clear(key)
	return NewKEK(key, path)
}

// GenerateKeyFile writes a new random KEK to path (mode 0600), refusing to
// replace an existing file, and returns its id.
func GenerateKeyFile(path string) (string, error) {
	key := make([]byte, KeySize)
	if _, err := rand.Read(key); err != nil {
		return "", err
	}
	defer clear(key)
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return "", fmt.Errorf("key file %s: %w", path, err)
	}
	if _, err := f.Write(key); err != nil {
		f.Close()
		os.Remove(path)
		return "", fmt.Errorf("key file %s: %w", path, err)
	}
	if err := f.Sync(); err != nil {
		f.Close()
		os.Remove(path)
		return "", fmt.Errorf("key file %s: %w", path, err)
	}
	if err := f.Close(); err != nil {
		return "", fmt.Errorf("key file %s: %w", path, err)
	}
	return KeyID(key), nil
}

// wrap seals the data key dek under k, bound to the keyring id it is kept
// under.
func (k *KEK) wrap(id string, dek []byte) []byte {
	nonce := make([]byte, k.aead.NonceSize())
	_, _ = rand.Read(nonce)
	return k.aead.Seal(nonce, nonce, dek, []byte("dek\x00"+id))
}

// unwrap opens a data key wrap made for id.
func (k *KEK) unwrap(id string, wrapped []byte) ([]byte, error) {
	n := k.aead.NonceSize()
	if len(wrapped) < n {
		return nil, fmt.Errorf("data key of %s: %w", id, errIntegrity)
	}
	dek, err := k.aead.Open(nil, wrapped[:n], wrapped[n:], []byte("dek\x00"+id))
	if err != nil || len(dek) != KeySize {
		return nil, fmt.Errorf("data key of %s: %w", id, errIntegrity)
	}
	return dek, nil
}

func newGCM(key []byte) (cipher.AEAD, error) {
	b, err := aes.NewCipher(key)
	if err != nil {
		return nil, err
	}
	return cipher.NewGCM(b)
}
