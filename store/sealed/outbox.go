package sealed

import (
	"crypto/cipher"
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
