package sealed

import (
	"crypto/cipher"
	"crypto/rand"
	"encoding/base64"
	"fmt"
	"strings"

	"github.com/earshot-dev/earshot/store"
)

var (
	errIntegrity = store.ErrIntegrity
	errInvalid   = store.ErrInvalid
	noSpace      = store.NoSpace
)

// sealText seals clear under k, bound to aad (the record, its id and the
// field), as store.SealedPrefix and the unpadded base64url of nonce and
// ciphertext: text every backend keeps in a string field.
func sealText(k cipher.AEAD, aad string, clear []byte) string {
	nonce := make([]byte, k.NonceSize(), k.NonceSize()+len(clear)+k.Overhead())
	_, _ = rand.Read(nonce)
	out := k.Seal(nonce, nonce, clear, []byte(aad))
	return store.SealedPrefix + base64.RawURLEncoding.EncodeToString(out)
}

// isSealed reports whether text is a sealed value.
func isSealed(text string) bool { return strings.HasPrefix(text, store.SealedPrefix) }

// openText opens a sealText value; any failure is store.ErrIntegrity.
func openText(k cipher.AEAD, aad, text string) ([]byte, error) {
	raw, err := base64.RawURLEncoding.DecodeString(strings.TrimPrefix(text, store.SealedPrefix))
	if err != nil || len(raw) < k.NonceSize()+k.Overhead() {
		return nil, fmt.Errorf("%s: %w", aad, errIntegrity)
	}
	n := k.NonceSize()
	clear, err := k.Open(raw[n:n], raw[:n], raw[n:], []byte(aad)) // in place: raw is ours
	if err != nil {
		return nil, fmt.Errorf("%s: %w", aad, errIntegrity)
	}
	return clear, nil
}
