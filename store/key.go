package store

import (
	"bytes"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	bolt "go.etcd.io/bbolt"
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

type keyRecord struct {
	Key
	Hash []byte `json:"hash"` // sha256 of the secret
}

// ValidAccount reports whether s is a usable account name:
// [A-Za-z0-9._-]{1,64}.
func ValidAccount(s string) bool {
	if len(s) == 0 || len(s) > 64 {
		return false
	}
	for i := 0; i < len(s); i++ {
		if !nameByte(s[i]) {
			return false
		}
	}
	return true
}

func nameByte(c byte) bool {
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

// CreateKey makes a new API key for account with the scopes and expiry of
// g and returns its secret, which is "es_" followed by 32 random bytes in
// unpadded base64url. The secret is returned only here. An account outside
// [A-Za-z0-9._-]{1,64}, or scopes g.ValidFor refuses, is ErrInvalid.
func (db *DB) CreateKey(account string, g KeyGrant) (secret string, k Key, err error) {
	if !ValidAccount(account) {
		return "", Key{}, fmt.Errorf("store: create key: account %q: %w", account, ErrInvalid)
	}
	if !g.ValidFor(account) {
		return "", Key{}, fmt.Errorf("store: create key: scopes %q for account %q: %w", g.Scopes, account, ErrInvalid)
	}
	raw := make([]byte, 32)
	_, _ = rand.Read(raw)
	secret = SecretPrefix + base64.RawURLEncoding.EncodeToString(raw)
	rec := keyRecord{
		Key: Key{
			Account:   account,
			Prefix:    secret[:8],
			CreatedAt: time.Now().UTC(),
			Scopes:    g.Normal(),
			ExpiresAt: g.ExpiresAt.UTC(),
		},
		Hash: hashSecret(secret),
	}
	err = db.update(func(tx *bolt.Tx) error {
		keys := tx.Bucket(bucketKeys)
		for {
			rec.ID = randomHex(6)
			if keys.Get([]byte(rec.ID)) == nil {
				break
			}
		}
		v, err := json.Marshal(&rec)
		if err != nil {
			return err
		}
		if err := keys.Put([]byte(rec.ID), v); err != nil {
			return err
		}
		return tx.Bucket(bucketKeyHash).Put(rec.Hash, []byte(rec.ID))
	})
	if err != nil {
		return "", Key{}, fmt.Errorf("store: create key: %w", err)
	}
	return secret, rec.Key, nil
}

// Keys returns every key, revoked ones included, oldest first.
func (db *DB) Keys() ([]Key, error) {
	var out []Key
	err := db.bolt.View(func(tx *bolt.Tx) error {
		return tx.Bucket(bucketKeys).ForEach(func(k, v []byte) error {
			var rec keyRecord
			if err := json.Unmarshal(v, &rec); err != nil {
				return fmt.Errorf("key %s: %w", k, err)
			}
			out = append(out, rec.Key)
			return nil
		})
	})
	if err != nil {
		return nil, fmt.Errorf("store: keys: %w", err)
	}
	slices.SortFunc(out, func(a, b Key) int {
		if c := a.CreatedAt.Compare(b.CreatedAt); c != 0 {
			return c
		}
		return strings.Compare(a.ID, b.ID)
	})
	return out, nil
}

// Key returns the key with the given id, revoked or not. An unknown id is
// ErrNotFound.
func (db *DB) Key(id string) (Key, error) {
	var rec keyRecord
	err := db.bolt.View(func(tx *bolt.Tx) error {
		v := tx.Bucket(bucketKeys).Get([]byte(id))
		if v == nil {
			return ErrNotFound
		}
		return json.Unmarshal(v, &rec)
	})
	if err != nil {
		return Key{}, fmt.Errorf("store: key %s: %w", id, err)
	}
	return rec.Key, nil
}

// RevokeKey revokes the key with the given id; its secret stops
// authenticating at once. Revoking a revoked key keeps the first RevokedAt.
// An unknown id is ErrNotFound.
func (db *DB) RevokeKey(id string) error {
	return db.update(func(tx *bolt.Tx) error {
		keys := tx.Bucket(bucketKeys)
		v := keys.Get([]byte(id))
		if v == nil {
			return fmt.Errorf("store: revoke key %s: %w", id, ErrNotFound)
		}
		var rec keyRecord
		if err := json.Unmarshal(v, &rec); err != nil {
			return fmt.Errorf("store: revoke key %s: %w", id, err)
		}
		if !rec.RevokedAt.IsZero() {
			return nil
		}
		rec.RevokedAt = time.Now().UTC()
		nv, err := json.Marshal(&rec)
		if err != nil {
			return err
		}
		return keys.Put([]byte(id), nv)
	})
}

// Authenticate returns the active key whose secret this is, looked up by
// the secret's SHA-256 (two bucket reads). An unknown, revoked or expired
// secret is ErrUnauthorized.
func (db *DB) Authenticate(secret string) (Key, error) {
	if !strings.HasPrefix(secret, SecretPrefix) {
		return Key{}, fmt.Errorf("store: authenticate: %w", ErrUnauthorized)
	}
	h := hashSecret(secret)
	var rec keyRecord
	err := db.bolt.View(func(tx *bolt.Tx) error {
		id := tx.Bucket(bucketKeyHash).Get(h)
		if id == nil {
			return ErrUnauthorized
		}
		v := tx.Bucket(bucketKeys).Get(id)
		if v == nil {
			return ErrUnauthorized
		}
		return json.Unmarshal(v, &rec)
	})
	if err != nil {
		return Key{}, fmt.Errorf("store: authenticate: %w", err)
	}
	if !rec.RevokedAt.IsZero() {
		return Key{}, fmt.Errorf("store: authenticate: key %s revoked: %w", rec.ID, ErrUnauthorized)
	}
	if rec.Expired(time.Now()) {
		return Key{}, fmt.Errorf("store: authenticate: key %s expired: %w", rec.ID, ErrUnauthorized)
	}
	return rec.Key, nil
}

// CallbackSecret returns the account's 32-byte secret for signing callbacks,
// creating and persisting it on first use. An empty account is ErrInvalid.
func (db *DB) CallbackSecret(account string) ([]byte, error) {
	if account == "" {
		return nil, fmt.Errorf("store: callback secret: empty account: %w", ErrInvalid)
	}
	var secret []byte
	err := db.bolt.View(func(tx *bolt.Tx) error {
		secret = bytes.Clone(tx.Bucket(bucketCallbackSecrets).Get([]byte(account)))
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("store: callback secret: %w", err)
	}
	if secret != nil {
		return secret, nil
	}
	err = db.update(func(tx *bolt.Tx) error {
		b := tx.Bucket(bucketCallbackSecrets)
		if v := b.Get([]byte(account)); v != nil { // another caller won the race
			secret = bytes.Clone(v)
			return nil
		}
		secret = make([]byte, 32)
		_, _ = rand.Read(secret)
		return b.Put([]byte(account), secret)
	})
	if err != nil {
		return nil, fmt.Errorf("store: callback secret: %w", err)
	}
	return secret, nil
}

// checkKeys verifies that keys and their hash index match one to one.
func checkKeys(tx *bolt.Tx, report func(string, ...any)) {
	hashes := tx.Bucket(bucketKeyHash)
	n := 0
	_ = tx.Bucket(bucketKeys).ForEach(func(k, v []byte) error {
		n++
		var rec keyRecord
		if err := json.Unmarshal(v, &rec); err != nil {
			report("key %s: %v", k, err)
			return nil
		}
		if rec.ID != string(k) {
			report("key %s: record id %q", k, rec.ID)
		}
		if id := hashes.Get(rec.Hash); string(id) != string(k) {
			report("key %s: hash entry points at %q", k, id)
		}
		return nil
	})
	if m := hashes.Stats().KeyN; m != n {
		report("%d key hash entries for %d keys", m, n)
	}
}
