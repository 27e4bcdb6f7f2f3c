package bolt

import (
	"bytes"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/earshot-dev/earshot/store"
	bolt "go.etcd.io/bbolt"
)

type keyRecord struct {
	store.Key
	Hash []byte `json:"hash"` // sha256 of the secret
}

// CreateKey makes a new API key for account with the scopes and expiry of
// g and returns its secret, which is "es_" followed by 32 random bytes in
// unpadded base64url. The secret is returned only here. An account outside
// [A-Za-z0-9._-]{1,64}, or scopes g.ValidFor refuses, is ErrInvalid.
func (db *DB) CreateKey(account string, g store.KeyGrant) (secret string, k store.Key, err error) {
	if !store.ValidAccount(account) {
		return "", store.Key{}, fmt.Errorf("store: create key: account %q: %w", account, store.ErrInvalid)
	}
	if !g.ValidFor(account) {
		return "", store.Key{}, fmt.Errorf("store: create key: scopes %q for account %q: %w", g.Scopes, account, store.ErrInvalid)
	}
	raw := make([]byte, 32)
	_, _ = rand.Read(raw)
	secret = store.SecretPrefix + base64.RawURLEncoding.EncodeToString(raw)
	rec := keyRecord{
		Key: store.Key{
			Account:   account,
			Prefix:    secret[:8],
			CreatedAt: time.Now().UTC(),
			Scopes:    g.Normal(),
			ExpiresAt: g.ExpiresAt.UTC(),
		},
		Hash: store.HashSecret(secret),
	}
	err = db.update(func(tx *bolt.Tx) error {
		keys := tx.Bucket(bucketKeys)
		for {
			rec.ID = store.RandomID(6)
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
		return "", store.Key{}, fmt.Errorf("store: create key: %w", err)
	}
	return secret, rec.Key, nil
}

// Keys returns every key, revoked ones included, oldest first.
func (db *DB) Keys() ([]store.Key, error) {
	var out []store.Key
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
	slices.SortFunc(out, func(a, b store.Key) int {
		if c := a.CreatedAt.Compare(b.CreatedAt); c != 0 {
			return c
		}
		return strings.Compare(a.ID, b.ID)
	})
	return out, nil
}

// Key returns the key with the given id, revoked or not. An unknown id is
// ErrNotFound.
func (db *DB) Key(id string) (store.Key, error) {
	var rec keyRecord
	err := db.bolt.View(func(tx *bolt.Tx) error {
		v := tx.Bucket(bucketKeys).Get([]byte(id))
		if v == nil {
			return store.ErrNotFound
		}
		return json.Unmarshal(v, &rec)
	})
	if err != nil {
		return store.Key{}, fmt.Errorf("store: key %s: %w", id, err)
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
			return fmt.Errorf("store: revoke key %s: %w", id, store.ErrNotFound)
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
func (db *DB) Authenticate(secret string) (store.Key, error) {
	if !strings.HasPrefix(secret, store.SecretPrefix) {
		return store.Key{}, fmt.Errorf("store: authenticate: %w", store.ErrUnauthorized)
	}
	h := store.HashSecret(secret)
	var rec keyRecord
	err := db.bolt.View(func(tx *bolt.Tx) error {
		id := tx.Bucket(bucketKeyHash).Get(h)
		if id == nil {
			return store.ErrUnauthorized
		}
		v := tx.Bucket(bucketKeys).Get(id)
		if v == nil {
			return store.ErrUnauthorized
		}
		return json.Unmarshal(v, &rec)
	})
	if err != nil {
		return store.Key{}, fmt.Errorf("store: authenticate: %w", err)
	}
	if !rec.RevokedAt.IsZero() {
		return store.Key{}, fmt.Errorf("store: authenticate: key %s revoked: %w", rec.ID, store.ErrUnauthorized)
	}
	if rec.Expired(time.Now()) {
		return store.Key{}, fmt.Errorf("store: authenticate: key %s expired: %w", rec.ID, store.ErrUnauthorized)
	}
	return rec.Key, nil
}

// TakeCallbackSecrets is store.Store.TakeCallbackSecrets: each secret is
// deleted in a transaction of its own after its move (none is held open
// across move). The database file's free pages may keep a deleted
// secret's bytes until they are reused.
func (db *DB) TakeCallbackSecrets(move func(account string, secret []byte) error) error {
	secrets := map[string][]byte{}
	err := db.bolt.View(func(tx *bolt.Tx) error {
		return tx.Bucket(bucketCallbackSecrets).ForEach(func(k, v []byte) error {
			secrets[string(k)] = bytes.Clone(v)
			return nil
		})
	})
	if err != nil {
		return fmt.Errorf("store: take callback secrets: %w", err)
	}
	for _, account := range slices.Sorted(maps.Keys(secrets)) {
		if err := move(account, secrets[account]); err != nil {
			return err
		}
		err := db.update(func(tx *bolt.Tx) error {
			b := tx.Bucket(bucketCallbackSecrets)
			if bytes.Equal(b.Get([]byte(account)), secrets[account]) {
				return b.Delete([]byte(account))
			}
			return nil
		})
		if err != nil {
			return fmt.Errorf("store: take callback secrets: %w", err)
		}
	}
	return nil
}

// CallbackSecret returns the account's 32-byte secret for signing callbacks,
// creating and persisting it on first use. An empty account is ErrInvalid.
func (db *DB) CallbackSecret(account string) ([]byte, error) {
	if account == "" {
		return nil, fmt.Errorf("store: callback secret: empty account: %w", store.ErrInvalid)
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
