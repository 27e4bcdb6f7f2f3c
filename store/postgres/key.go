package postgres

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/earshot-dev/earshot/store"
)

// CreateKey makes a new API key for account with g's scopes and expiry and
// returns its secret (see bolt.DB.CreateKey); only the secret's SHA-256 is
// stored.
func (db *DB) CreateKey(account string, g store.KeyGrant) (string, store.Key, error) {
	if !store.ValidAccount(account) {
		return "", store.Key{}, fmt.Errorf("store: create key: account %q: %w", account, store.ErrInvalid)
	}
	if !g.ValidFor(account) {
		return "", store.Key{}, fmt.Errorf("store: create key: scopes %q for account %q: %w", g.Scopes, account, store.ErrInvalid)
	}
	secret, hash := store.NewSecret()
	k := store.Key{Account: account, Prefix: secret[:8], CreatedAt: time.Now().UTC(), Scopes: g.Normal(), ExpiresAt: g.ExpiresAt.UTC()}
	var expires int64
	if !k.ExpiresAt.IsZero() {
		expires = ns(k.ExpiresAt)
	}
	err := db.update(func(ctx context.Context, tx pgx.Tx) error {
		for {
			k.ID = store.RandomID(6)
			tag, err := tx.Exec(ctx, `INSERT INTO keys (id, account, prefix, created_ns, hash, scopes, expires_ns)
				VALUES ($1, $2, $3, $4, $5, $6, $7) ON CONFLICT (id) DO NOTHING`,
				k.ID, k.Account, k.Prefix, ns(k.CreatedAt), hash, scopeNames(k.Scopes), expires)
			if err != nil {
				return err
			}
			if tag.RowsAffected() == 1 {
				return nil
			}
		}
	})
	if err != nil {
		return "", store.Key{}, fmt.Errorf("store: create key: %w", err)
	}
	return secret, k, nil
}

const keyColumns = "id, account, prefix, created_ns, revoked_ns, scopes, expires_ns"

// scopeNames is the scopes column of a key: NULL (nil) for every scope.
func scopeNames(scopes []store.Scope) []string {
	if scopes == nil {
		return nil
	}
	out := make([]string, len(scopes))
	for i, s := range scopes {
		out[i] = string(s)
	}
	return out
}

func scanKey(row pgx.Row) (store.Key, error) {
	var k store.Key
	var created, revoked, expires int64
	var scopes []string
	if err := row.Scan(&k.ID, &k.Account, &k.Prefix, &created, &revoked, &scopes, &expires); err != nil {
		return k, err
	}
	k.CreatedAt = fromNS(created)
	if revoked != 0 {
		k.RevokedAt = fromNS(revoked)
	}
	if expires != 0 {
		k.ExpiresAt = fromNS(expires)
	}
	if scopes != nil {
		k.Scopes = make([]store.Scope, len(scopes))
		for i, s := range scopes {
			k.Scopes[i] = store.Scope(s)
		}
	}
	return k, nil
}

// Keys returns every key, revoked ones included, oldest first.
func (db *DB) Keys() ([]store.Key, error) {
	ctx, cancel := db.ctx()
	defer cancel()
	rows, err := db.pool.Query(ctx, "SELECT "+keyColumns+" FROM keys ORDER BY created_ns, id")
	if err != nil {
		return nil, fmt.Errorf("store: keys: %w", wrap(err))
	}
	keys, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (store.Key, error) { return scanKey(r) })
	if err != nil {
		return nil, fmt.Errorf("store: keys: %w", wrap(err))
	}
	return keys, nil
}

// Key returns the key with the given id, revoked or not.
func (db *DB) Key(id string) (store.Key, error) {
	ctx, cancel := db.ctx()
	defer cancel()
	k, err := scanKey(db.pool.QueryRow(ctx, "SELECT "+keyColumns+" FROM keys WHERE id = $1", id))
	if errors.Is(err, pgx.ErrNoRows) {
		err = store.ErrNotFound
	}
	if err != nil {
		return store.Key{}, fmt.Errorf("store: key %s: %w", id, wrap(err))
	}
	return k, nil
}

// RevokeKey revokes the key; its secret stops authenticating on every node
// at once. Revoking a revoked key keeps the first RevokedAt.
func (db *DB) RevokeKey(id string) error {
	err := db.update(func(ctx context.Context, tx pgx.Tx) error {
		var revoked int64
		err := tx.QueryRow(ctx, "SELECT revoked_ns FROM keys WHERE id = $1 FOR UPDATE", id).Scan(&revoked)
		if errors.Is(err, pgx.ErrNoRows) {
			return store.ErrNotFound
		}
		if err != nil || revoked != 0 {
			return err
		}
		_, err = tx.Exec(ctx, "UPDATE keys SET revoked_ns = $2 WHERE id = $1", id, ns(time.Now()))
		return err
	})
	if err != nil {
		return fmt.Errorf("store: revoke key %s: %w", id, err)
	}
	return nil
}

// Authenticate returns the active key whose secret this is, looked up by
// the secret's SHA-256 (one indexed read); an expired one is
// store.ErrUnauthorized.
func (db *DB) Authenticate(secret string) (store.Key, error) {
	if !strings.HasPrefix(secret, store.SecretPrefix) {
		return store.Key{}, fmt.Errorf("store: authenticate: %w", store.ErrUnauthorized)
	}
	ctx, cancel := db.ctx()
	defer cancel()
	k, err := scanKey(db.pool.QueryRow(ctx, "SELECT "+keyColumns+" FROM keys WHERE hash = $1", store.HashSecret(secret)))
	if errors.Is(err, pgx.ErrNoRows) {
		err = store.ErrUnauthorized
	}
	if err != nil {
		return store.Key{}, fmt.Errorf("store: authenticate: %w", wrap(err))
	}
	if !k.Active() {
		return store.Key{}, fmt.Errorf("store: authenticate: key %s revoked: %w", k.ID, store.ErrUnauthorized)
	}
	if k.Expired(time.Now()) {
		return store.Key{}, fmt.Errorf("store: authenticate: key %s expired: %w", k.ID, store.ErrUnauthorized)
	}
	return k, nil
}

// TakeCallbackSecrets is store.Store.TakeCallbackSecrets. A deleted row
// stays in PostgreSQL's dead tuples and WAL for a while (as a destroyed
// data key does: docs/deployment.md).
func (db *DB) TakeCallbackSecrets(move func(account string, secret []byte) error) error {
	ctx, cancel := db.ctx()
	defer cancel()
	type row struct { // exported fields: RowToStructByPos fills them in order
		Account string
		Secret  []byte
	}
	rows, err := db.pool.Query(ctx, "SELECT account, secret FROM callback_secrets ORDER BY account")
	var all []row
	if err == nil {
		all, err = pgx.CollectRows(rows, pgx.RowToStructByPos[row])
	}
	if err != nil {
		return fmt.Errorf("store: take callback secrets: %w", wrap(err))
	}
	for _, r := range all {
		if err := move(r.Account, r.Secret); err != nil {
			return err
		}
		err := db.update(func(ctx context.Context, tx pgx.Tx) error {
			_, err := tx.Exec(ctx, "DELETE FROM callback_secrets WHERE account = $1 AND secret = $2", r.Account, r.Secret)
			return err
		})
		if err != nil {
			return fmt.Errorf("store: take callback secrets: %w", err)
		}
	}
	return nil
}

// CallbackSecret returns the account's 32-byte secret for signing
// callbacks, creating it on first use (the first node to insert wins).
func (db *DB) CallbackSecret(account string) ([]byte, error) {
	if account == "" {
		return nil, fmt.Errorf("store: callback secret: empty account: %w", store.ErrInvalid)
	}
	ctx, cancel := db.ctx()
	defer cancel()
	var secret []byte
	err := db.pool.QueryRow(ctx, "SELECT secret FROM callback_secrets WHERE account = $1", account).Scan(&secret)
	if err == nil {
		return secret, nil
	}
	if !errors.Is(err, pgx.ErrNoRows) {
		return nil, fmt.Errorf("store: callback secret: %w", wrap(err))
	}
	fresh := make([]byte, 32)
	_, _ = rand.Read(fresh)
	err = db.update(func(ctx context.Context, tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, "INSERT INTO callback_secrets (account, secret) VALUES ($1, $2) ON CONFLICT (account) DO NOTHING",
			account, fresh); err != nil {
			return err
		}
		return tx.QueryRow(ctx, "SELECT secret FROM callback_secrets WHERE account = $1", account).Scan(&secret)
	})
	if err != nil {
		return nil, fmt.Errorf("store: callback secret: %w", err)
	}
	return secret, nil
}
