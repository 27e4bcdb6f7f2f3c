package bolt

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/earshot-dev/earshot/store"
	bolt "go.etcd.io/bbolt"
)

// deliveryDueKey orders deliveries by NextAttempt (zero first), then ID.
func deliveryDueKey(d *store.Delivery) []byte {
	return append(appendTime(nil, d.NextAttempt), d.ID...)
}

func deliveryJobKey(d *store.Delivery) []byte {
	return append(appendStr(nil, d.JobID), d.ID...)
}

// putDelivery writes d, replacing old's index entries (old is nil for a new
// delivery). A new delivery gets an ID and CreatedAt when they are empty,
// written back into d; an empty Method means POST.
func putDelivery(tx *bolt.Tx, old, d *store.Delivery) error {
	prepare := store.CheckDelivery
	if old == nil {
		prepare = store.PrepareDelivery
	}
	if err := prepare(d); err != nil {
		return err
	}
	b := tx.Bucket(bucketDeliveries)
	if old == nil && b.Get([]byte(d.ID)) != nil {
		return fmt.Errorf("delivery %s: %w", d.ID, store.ErrExists)
	}
	v, err := json.Marshal(d)
	if err != nil {
		return err
	}
	if err := b.Put([]byte(d.ID), v); err != nil {
		return err
	}
	due := tx.Bucket(bucketDeliveryDue)
	if old != nil {
		if err := due.Delete(deliveryDueKey(old)); err != nil {
			return err
		}
	}
	if err := due.Put(deliveryDueKey(d), nil); err != nil {
		return err
	}
	if d.JobID != "" {
		return tx.Bucket(bucketDeliveryJob).Put(deliveryJobKey(d), nil)
	}
	return nil
}

func decodeDelivery(tx *bolt.Tx, id string) (*store.Delivery, error) {
	v := tx.Bucket(bucketDeliveries).Get([]byte(id))
	if v == nil {
		return nil, fmt.Errorf("delivery %s: %w", id, store.ErrNotFound)
	}
	return parseDelivery(id, v)
}

// parseDelivery decodes the record v of the delivery id.
func parseDelivery(id string, v []byte) (*store.Delivery, error) {
	d := new(store.Delivery)
	if err := json.Unmarshal(v, d); err != nil {
		return nil, fmt.Errorf("delivery %s: %w", id, err)
	}
	return d, nil
}

func deleteDelivery(tx *bolt.Tx, d *store.Delivery) error {
	if err := tx.Bucket(bucketDeliveries).Delete([]byte(d.ID)); err != nil {
		return err
	}
	if err := tx.Bucket(bucketDeliveryDue).Delete(deliveryDueKey(d)); err != nil {
		return err
	}
	if d.JobID != "" {
		return tx.Bucket(bucketDeliveryJob).Delete(deliveryJobKey(d))
	}
	return nil
}

// deleteJobDeliveries removes every pending delivery of the job.
func deleteJobDeliveries(tx *bolt.Tx, jobID string) error {
	prefix := appendStr(nil, jobID)
	var ids []string
	c := tx.Bucket(bucketDeliveryJob).Cursor()
	for k, _ := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix); k, _ = c.Next() {
		ids = append(ids, string(k[len(prefix):]))
	}
	for _, id := range ids {
		d, err := decodeDelivery(tx, id)
		if err != nil {
			return err
		}
		if err := deleteDelivery(tx, d); err != nil {
			return err
		}
	}
	return nil
}

// EnqueueDelivery stores a new delivery. An empty ID and zero CreatedAt are
// filled in (and written back into d); an empty Method means POST. An empty
// URL or a method other than POST or PUT is ErrInvalid; a duplicate ID
// ErrExists.
func (db *DB) EnqueueDelivery(d *store.Delivery) error {
	if d == nil {
		return fmt.Errorf("store: enqueue delivery: nil: %w", store.ErrInvalid)
	}
	err := db.update(func(tx *bolt.Tx) error { return putDelivery(tx, nil, d) })
	if err != nil {
		return fmt.Errorf("store: enqueue delivery: %w", err)
	}
	return nil
}

// DueDeliveries returns up to limit deliveries whose NextAttempt is at or
// before now, earliest first (limit <= 0: all of them).
func (db *DB) DueDeliveries(now time.Time, limit int) ([]*store.Delivery, error) {
	end := appendTime(nil, now)
	var out []*store.Delivery
	err := db.bolt.View(func(tx *bolt.Tx) error {
		c := tx.Bucket(bucketDeliveryDue).Cursor()
		for k, _ := c.First(); len(k) >= 8 && bytes.Compare(k[:8], end) <= 0; k, _ = c.Next() {
			d, err := decodeDelivery(tx, string(k[8:]))
			if err != nil {
				return err
			}
			out = append(out, d)
			if limit > 0 && len(out) == limit {
				break
			}
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("store: due deliveries: %w", err)
	}
	return out, nil
}

// ClaimDeliveries is DueDeliveries for a sender: it returns up to limit
// due deliveries that no caller holds, earliest first, and holds each for
// DeliveryLease from now, until RescheduleDelivery or DeleteDelivery
// records the attempt. So concurrent senders never attempt one delivery at
// once. Here the leases live in memory (one process holds the database; a
// restart frees them); a shared backend keeps them with the records.
func (db *DB) ClaimDeliveries(now time.Time, limit int) ([]*store.Delivery, error) {
	due, err := db.DueDeliveries(now, 0)
	if err != nil {
		return nil, err
	}
	db.mu.Lock()
	defer db.mu.Unlock()
	if db.leases == nil {
		db.leases = map[string]time.Time{}
	}
	var out []*store.Delivery
	for _, d := range due {
		if until, held := db.leases[d.ID]; held && until.After(now) {
			continue
		}
		db.leases[d.ID] = now.Add(store.DeliveryLease)
		out = append(out, d)
		if limit > 0 && len(out) == limit {
			break
		}
	}
	return out, nil
}

// release ends the lease on delivery id, if any.
func (db *DB) release(id string) {
	db.mu.Lock()
	delete(db.leases, id)
	db.mu.Unlock()
}

// leaseEnd returns when the lease on delivery id ends (zero if none).
func (db *DB) leaseEnd(id string) time.Time {
	db.mu.Lock()
	defer db.mu.Unlock()
	return db.leases[id]
}

// NextDelivery returns when the earliest pending delivery can next be
// claimed (its NextAttempt, or the end of its lease while a caller holds
// it) and true, or false when the outbox is empty. A delivery due now has
// the zero time.
func (db *DB) NextDelivery() (time.Time, bool, error) {
	var next time.Time
	var ok bool
	err := db.bolt.View(func(tx *bolt.Tx) error {
		c := tx.Bucket(bucketDeliveryDue).Cursor()
		for k, _ := c.First(); k != nil; k, _ = c.Next() {
			if len(k) < 8 {
				return fmt.Errorf("due key %x: %w", k, store.ErrCorrupt)
			}
			d, err := decodeDelivery(tx, string(k[8:]))
			if err != nil {
				return err
			}
			at := d.NextAttempt
			lease := db.leaseEnd(d.ID)
			if lease.After(at) {
				at = lease
			}
			if !ok || at.Before(next) {
				next, ok = at, true
			}
			if lease.IsZero() {
				break // keys are in NextAttempt order: later ones are no earlier
			}
		}
		return nil
	})
	if err != nil {
		return time.Time{}, false, fmt.Errorf("store: next delivery: %w", err)
	}
	return next, ok, nil
}

// RescheduleDelivery records a failed attempt: Attempts++, NextAttempt =
// next, LastError = lastErr. An unknown id is ErrNotFound.
func (db *DB) RescheduleDelivery(id string, next time.Time, lastErr string) error {
	err := db.update(func(tx *bolt.Tx) error {
		old, err := decodeDelivery(tx, id)
		if err != nil {
			return err
		}
		defer db.release(id)
		d := *old
		d.Attempts++
		d.NextAttempt = next
		d.LastError = lastErr
		return putDelivery(tx, old, &d)
	})
	if err != nil {
		return fmt.Errorf("store: reschedule delivery: %w", err)
	}
	return nil
}

// DeleteDelivery removes a delivery (sent, or given up); a missing one is
// not an error.
func (db *DB) DeleteDelivery(id string) error {
	defer db.release(id)
	err := db.update(func(tx *bolt.Tx) error {
		d, err := decodeDelivery(tx, id)
		if errors.Is(err, store.ErrNotFound) {
			return nil // already gone
		}
		if err != nil {
			return err
		}
		return deleteDelivery(tx, d)
	})
	if err != nil {
		return fmt.Errorf("store: delete delivery %s: %w", id, err)
	}
	return nil
}

// PendingDeliveries returns how many deliveries are waiting.
func (db *DB) PendingDeliveries() (int, error) {
	var n int
	err := db.bolt.View(func(tx *bolt.Tx) error {
		n = tx.Bucket(bucketDeliveries).Stats().KeyN
		return nil
	})
	if err != nil {
		return 0, fmt.Errorf("store: pending deliveries: %w", err)
	}
	return n, nil
}

// checkDeliveries verifies deliveries against their due and job indexes.
func checkDeliveries(tx *bolt.Tx, report func(string, ...any)) {
	due := tx.Bucket(bucketDeliveryDue)
	byJob := tx.Bucket(bucketDeliveryJob)
	n, nJob := 0, 0
	_ = tx.Bucket(bucketDeliveries).ForEach(func(k, v []byte) error {
		n++
		d := new(store.Delivery)
		if err := json.Unmarshal(v, d); err != nil {
			report("delivery %s: %v", k, err)
			return nil
		}
		if d.ID != string(k) {
			report("delivery %s: record id %q", k, d.ID)
		}
		if due.Get(deliveryDueKey(d)) == nil {
			report("delivery %s: no due entry", k)
		}
		if d.JobID != "" {
			nJob++
			if byJob.Get(deliveryJobKey(d)) == nil {
				report("delivery %s: no job entry", k)
			}
		}
		return nil
	})
	if m := due.Stats().KeyN; m != n {
		report("%d due entries for %d deliveries", m, n)
	}
	if m := byJob.Stats().KeyN; m != nJob {
		report("%d job entries for %d deliveries with a job", m, nJob)
	}
}

// Deliveries calls fn with every pending delivery, in ascending id order,
// inside one read transaction (fn must not write to the store): what
// store/sealed's SealExisting and its count of what is in clear read.
func (db *DB) Deliveries(fn func(d *store.Delivery)) error {
	err := db.bolt.View(func(tx *bolt.Tx) error {
		c := tx.Bucket(bucketDeliveries).Cursor()
		for k, v := c.First(); k != nil; k, v = c.Next() {
			d, err := parseDelivery(string(k), v)
			if err != nil {
				return err
			}
			fn(d)
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("store: deliveries: %w", err)
	}
	return nil
}

// RewriteDeliveryBody replaces the body of the pending delivery id with
// what fn returns for the stored delivery (nil: leave it as it is), in one
// transaction, keeping its id, schedule, attempts and lease: store/sealed's
// SealExisting seals a body written in clear in place, so its receiver
// still sees one delivery id. A missing delivery is store.ErrNotFound.
func (db *DB) RewriteDeliveryBody(id string, fn func(d *store.Delivery) ([]byte, error)) error {
	err := db.update(func(tx *bolt.Tx) error {
		old, err := decodeDelivery(tx, id)
		if err != nil {
			return err
		}
		d := *old
		body, err := fn(&d)
		if err != nil || body == nil {
			return err
		}
		d = *old
		d.Body = body
		return putDelivery(tx, old, &d)
	})
	if err != nil {
		return fmt.Errorf("store: rewrite delivery body: %w", err)
	}
	return nil
}
