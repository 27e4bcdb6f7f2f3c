package sealed

import (
	"context"
	"crypto/cipher"
	"errors"
	"fmt"
	"time"

	"github.com/earshot-dev/earshot/store"
)

// Outbox: bodies hold transcripts, sealed under their job's data key.

func (s *Store) deliveryKey(d *store.Delivery, create bool) (cipher.AEAD, error) {
	if d.JobID != "" {
		return s.dek(jobKey(d.JobID), create)
	}
	return s.dek(deliveryKey(d.ID), create)
}

func (s *Store) EnqueueDelivery(d *store.Delivery) error {
	if d == nil {
		return s.inner.EnqueueDelivery(d)
	}
	if err := store.PrepareDelivery(d); err != nil {
		return err
	}
	k, err := s.deliveryKey(d, true)
	if err != nil {
		return err
	}
	c := *d
	c.Body = []byte(sealText(k, deliveryAAD(d), d.Body))
	if err := s.inner.EnqueueDelivery(&c); err != nil {
		return err
	}
	c.Body = d.Body
	*d = c
	return nil
}

func (s *Store) openDeliveries(ds []*store.Delivery, err error) ([]*store.Delivery, error) {
	if err != nil {
		return nil, err
	}
	for _, d := range ds {
		if !isSealed(string(d.Body)) {
			continue
		}
		k, err := s.deliveryKey(d, false)
		if err != nil {
			return nil, err
		}
		body, err := openField(k, deliveryAAD(d), string(d.Body))
		if err != nil {
			return nil, fmt.Errorf("sealed: delivery %s: %w", d.ID, err)
		}
		d.Body = body
	}
	return ds, nil
}

func (s *Store) DueDeliveries(now time.Time, limit int) ([]*store.Delivery, error) {
	return s.openDeliveries(s.inner.DueDeliveries(now, limit))
}
func (s *Store) ClaimDeliveries(now time.Time, limit int) ([]*store.Delivery, error) {
	return s.openDeliveries(s.inner.ClaimDeliveries(now, limit))
}
func (s *Store) NextDelivery() (time.Time, bool, error) { return s.inner.NextDelivery() }
func (s *Store) RescheduleDelivery(id string, next time.Time, lastErr string) error {
	return s.inner.RescheduleDelivery(id, next, lastErr)
}

// DeleteDelivery deletes it and, for one without a job, its data key.
func (s *Store) DeleteDelivery(id string) error {
	if err := s.inner.DeleteDelivery(id); err != nil {
		return err
	}
	if _, ok := s.ring.Get(deliveryKey(id)); ok {
		return s.shred(deliveryKey(id))
	}
	return nil
}
func (s *Store) PendingDeliveries() (int, error) { return s.inner.PendingDeliveries() }

// outboxLister is a backend that lists its callback outbox and rewrites a
// pending delivery's body in place (store/bolt, store/postgres): what
// SealExisting and Unsealed need for bodies written before sealing was on.
type outboxLister interface {
	Deliveries(fn func(d *store.Delivery)) error
	RewriteDeliveryBody(id string, fn func(d *store.Delivery) ([]byte, error)) error
}

// clearDeliveries returns the pending deliveries whose bodies were written
// in clear (before sealing was on), without their bodies: one pass over
// the outbox, one record in memory at a time.
func (s *Store) clearDeliveries() ([]store.Delivery, error) {
	o, ok := s.inner.(outboxLister)
	if !ok {
		return nil, errors.New("sealed: the backend cannot list its callback outbox")
	}
	var clear []store.Delivery
	err := o.Deliveries(func(d *store.Delivery) {
		if !isSealed(string(d.Body)) {
			c := *d
			c.Body = nil
			clear = append(clear, c)
		}
	})
	return clear, err
}

// sealDeliveries seals in place the body of every pending delivery written
// in clear, under the data key it would have had (its job's, or its own),
// keeping its id, so a receiver that deduplicates by the delivery header
// still sees one delivery; it returns how many it sealed. Until 2026-12-01
// a callback still being retried kept its clear body (a transcript) until
// it was delivered or given up.
func (s *Store) sealDeliveries(ctx context.Context) (int, error) {
	clear, err := s.clearDeliveries()
	if err != nil {
		return 0, err
	}
	o := s.inner.(outboxLister)
	n := 0
	for i := range clear {
		if err := ctx.Err(); err != nil {
			return n, err
		}
		d := &clear[i]
		k, err := s.deliveryKey(d, true)
		if err != nil {
			return n, fmt.Errorf("sealed: seal callback delivery %s: %w", d.ID, err)
		}
		sealedIt := false
		err = o.RewriteDeliveryBody(d.ID, func(stored *store.Delivery) ([]byte, error) {
			if isSealed(string(stored.Body)) || stored.JobID != d.JobID {
				return nil, nil
			}
			sealedIt = true
			return []byte(sealText(k, deliveryAAD(stored), stored.Body)), nil
		})
		if errors.Is(err, store.ErrNotFound) {
			continue // delivered or given up meanwhile
		}
		if err != nil {
			return n, fmt.Errorf("sealed: seal callback delivery %s: %w", d.ID, err)
		}
		if sealedIt {
			n++
		}
	}
	return n, nil
}
