package daemon

import (
	"context"
	"fmt"

	"github.com/earshot-dev/earshot/admin"
	"github.com/earshot-dev/earshot/store"
)

// AuthenticateKey returns the active key whose secret this is;
// store.ErrUnauthorized for a missing, unknown, revoked or expired one.
func (d *Daemon) AuthenticateKey(secret string) (store.Key, error) {
	if secret == "" {
		return store.Key{}, fmt.Errorf("%w: missing key", store.ErrUnauthorized)
	}
	return d.db.Authenticate(secret)
}

// CreateKey makes a key for account with g's scopes and expiry and
// returns its secret, shown only here (the store keeps its hash); the
// admin socket creates keys the same way (admin.CreateKey). A malformed
// account, scope or expiry is an *errcode.ValidationError.
func (d *Daemon) CreateKey(ctx context.Context, account string, g store.KeyGrant) (string, store.Key, error) {
	return admin.CreateKey(d.db, account, g)
}

// Keys lists every key, revoked ones included, oldest first; no secrets.
func (d *Daemon) Keys(ctx context.Context) ([]store.Key, error) { return d.db.Keys() }

// RevokeKey revokes the key with this id; its secret stops authenticating
// at once and the live sessions it created end (close 4401). An unknown id
// is store.ErrNotFound.
func (d *Daemon) RevokeKey(ctx context.Context, id string) error {
	if err := d.db.RevokeKey(id); err != nil {
		return err
	}
	d.live.EndKey(id)
	return nil
}
