package store

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"time"
)

// SecretPrefix starts every API key secret.
const SecretPrefix = "es_"

// Key is an API key of an account. The secret itself is never stored, only
// its SHA-256, so a lost secret cannot be shown again.
type Key struct {
	ID        string    `json:"id"`      // random 12 hex characters, shown by `keys list`, used to revoke
	Account   string    `json:"account"` // [A-Za-z0-9._-]{1,64}
	Prefix    string    `json:"prefix"`  // first 8 characters of the secret, for display
	CreatedAt time.Time `json:"created_at"`
	RevokedAt time.Time `json:"revoked_at,omitzero"` // zero while active
	// Scopes are the key's rights (store/scope.go); nil holds every scope,
	// as every key made before scopes existed does.
	Scopes []Scope `json:"scopes,omitempty"`
	// ExpiresAt is when the key stops authenticating; zero never.
	ExpiresAt time.Time `json:"expires_at,omitzero"`
}

// Active reports whether the key has not been revoked.
func (k Key) Active() bool { return k.RevokedAt.IsZero() }

// AdminAccount is the account whose keys are admin keys: besides the /v2
// API they may manage keys over HTTP (/admin/keys). `earshotd keys create
// --account admin` makes one; the .deb's postinst makes the first.
const AdminAccount = "admin"

// Admin reports whether k is an admin key (a key of AdminAccount).
func (k Key) Admin() bool { return k.Account == AdminAccount }

// ValidAccount reports whether s is a usable account name:
// [A-Za-z0-9._-]{1,64}.
func ValidAccount(s string) bool {
	if len(s) == 0 || len(s) > 64 {
		return false
	}
	for i := 0; i < len(s); i++ {
		if !NameByte(s[i]) {
			return false
		}
	}
	return true
}

func NameByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '_' || c == '-'
}

func hashSecret(secret string) []byte {
	h := sha256.Sum256([]byte(secret))
	return h[:]
}

// randomHex returns n random bytes as 2n hex characters.
func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b) // never fails (crypto/rand crashes the program instead)
	return hex.EncodeToString(b)
}
