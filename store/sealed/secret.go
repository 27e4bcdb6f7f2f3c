package sealed

import (
	"crypto/rand"
	"errors"
	"fmt"

	"github.com/earshot-dev/earshot/store"
)

// Callback secrets. Each account's secret for signing callbacks (and the
// live door's token secret, kept as an account's of its own) is kept in
// the keyring as a data key is, wrapped by the key-encryption key (id "c:"
// and the account), and never in the backend: a rotation re-wraps it, a
// backup's keys file carries it, and a deletion of the keyring's entry
// reaches no copy in a database page. A secret the backend holds, made
// before the store was sealed or before 2026-11-30 (when the backend kept
// it in clear under a sealed store too), is moved into the keyring at
// Open, the same bytes, so receivers keep verifying, then deleted from the
// backend (moveSecrets).

// secretSize is a callback secret's size, as the backends make it.
const secretSize = 32

// secretTries bounds CallbackSecret's rounds when another caller or node
// makes the account's secret at the same time.
const secretTries = 3

func secretKey(account string) string { return "c:" + account }

// CallbackSecret returns the account's callback secret from the keyring,
// making it at the first call; of two callers (or nodes) making it at
// once the first one's stands, and the other returns it.
func (s *Store) CallbackSecret(account string) ([]byte, error) {
	if account == "" {
		return nil, fmt.Errorf("sealed: callback secret: empty account: %w", store.ErrInvalid)
	}
	id := secretKey(account)
	for range secretTries {
		if e, ok := s.ring.Get(id); ok {
			return s.unwrapEntry(id, e)
		}
		secret := make([]byte, secretSize)
		_, _ = rand.Read(secret)
		err := s.addSecret(account, secret)
		if err == nil {
			return secret, nil
		}
		if !errors.Is(err, store.ErrExists) {
			return nil, fmt.Errorf("sealed: callback secret: %w", err)
		}
	}
	return nil, fmt.Errorf("sealed: callback secret of %s: made and not readable: %w", account, store.ErrUnavailable)
}

// addSecret adds the account's secret to the keyring, wrapped by the
// primary key (the rotation's new key while one runs, as a data key made
// then is: ringMu keeps it out of a re-wrap in progress); store.ErrExists
// when the account has one.
func (s *Store) addSecret(account string, secret []byte) error {
	id := secretKey(account)
	s.ringMu.Lock()
	defer s.ringMu.Unlock()
	return s.ring.Add(id, s.wrapEntry(id, secret))
}

// TakeCallbackSecrets takes nothing: a sealed store keeps no callback
// secret in its backend.
func (s *Store) TakeCallbackSecrets(func(account string, secret []byte) error) error { return nil }

// moveSecrets moves every callback secret the backend holds into the
// keyring (Open). Where the keyring has the account's already (a stop
// between a move and its deletion, or another node's), the keyring's
// stands and the backend's is deleted.
func (s *Store) moveSecrets() error {
	err := s.inner.TakeCallbackSecrets(func(account string, secret []byte) error {
		if err := s.addSecret(account, secret); err != nil && !errors.Is(err, store.ErrExists) {
			return err
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("sealed: move the callback secrets into the keyring: %w", err)
	}
	return nil
}
