package postgres

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/earshot-dev/earshot/store"
)

// noLease is the lease_ns of a delivery nobody holds.
const noLease = math.MinInt64

// insertDelivery stores a new delivery, filling its defaults (written back
// into d). A duplicate ID is ErrExists.
func insertDelivery(ctx context.Context, tx pgx.Tx, d *store.Delivery) error {
	if err := store.PrepareDelivery(d); err != nil {
		return err
	}
	v, err := json.Marshal(d)
	if err != nil {
		return err
	}
	tag, err := tx.Exec(ctx, `INSERT INTO deliveries (id, job_id, next_ns, lease_ns, record) VALUES ($1, $2, $3, $4, $5)
		ON CONFLICT (id) DO NOTHING`, d.ID, d.JobID, ns(d.NextAttempt), int64(noLease), v)
	if err != nil {
		return err
	}
	if tag.RowsAffected() == 0 {
		return fmt.Errorf("delivery %s: %w", d.ID, store.ErrExists)
	}
	return nil
}

// EnqueueDelivery stores a new delivery (see bolt.DB.EnqueueDelivery).
func (db *DB) EnqueueDelivery(d *store.Delivery) error {
	if d == nil {
		return fmt.Errorf("store: enqueue delivery: nil: %w", store.ErrInvalid)
	}
	err := db.update(func(ctx context.Context, tx pgx.Tx) error { return insertDelivery(ctx, tx, d) })
	if err != nil {
		return fmt.Errorf("store: enqueue delivery: %w", err)
	}
	return nil
}

// DueDeliveries returns up to limit deliveries whose NextAttempt is at or
// before now, earliest first (limit <= 0: all of them), held or not; it
// claims nothing (see ClaimDeliveries).
func (db *DB) DueDeliveries(now time.Time, limit int) ([]*store.Delivery, error) {
	ctx, cancel := db.ctx()
	defer cancel()
	lim := any(nil)
	if limit > 0 {
		lim = limit
	}
	rows, err := db.pool.Query(ctx, "SELECT record FROM deliveries WHERE next_ns <= $1 ORDER BY next_ns, id LIMIT $2", ns(now), lim)
	if err != nil {
		return nil, fmt.Errorf("store: due deliveries: %w", wrap(err))
	}
	out, err := pgx.CollectRows(rows, scanDelivery)
	if err != nil {
		return nil, fmt.Errorf("store: due deliveries: %w", wrap(err))
	}
	return out, nil
}

func scanDelivery(r pgx.CollectableRow) (*store.Delivery, error) {
	var v []byte
	if err := r.Scan(&v); err != nil {
		return nil, err
	}
	return decodeDelivery(v)
}

// ClaimDeliveries claims up to limit deliveries whose NextAttempt is at or
// before now and that no node holds, earliest first (limit <= 0: all of
// them). Each is held for store.DeliveryLease (from now), during which
// no other call returns it, until RescheduleDelivery or DeleteDelivery
// records the attempt's outcome; a node that dies holding one loses it
// when the lease ends. So a delivery is attempted by one node at a time.
func (db *DB) ClaimDeliveries(now time.Time, limit int) ([]*store.Delivery, error) {
	n := ns(now)
	var out []*store.Delivery
	err := db.update(func(ctx context.Context, tx pgx.Tx) error {
		lim := any(nil)
		if limit > 0 {
			lim = limit
		}
		rows, err := tx.Query(ctx, `UPDATE deliveries SET lease_ns = $3, node = $4 WHERE id IN (
				SELECT id FROM deliveries WHERE next_ns <= $1 AND lease_ns <= $1
				ORDER BY next_ns, id LIMIT $2 FOR UPDATE SKIP LOCKED)
			RETURNING record`, n, lim, ns(now.Add(store.DeliveryLease)), db.opts.NodeID)
		if err != nil {
			return err
		}
		out, err = pgx.CollectRows(rows, scanDelivery)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("store: claim deliveries: %w", err)
	}
	slices.SortFunc(out, func(a, b *store.Delivery) int {
		return cmp.Or(a.NextAttempt.Compare(b.NextAttempt), cmp.Compare(a.ID, b.ID))
	})
	return out, nil
}

func decodeDelivery(v []byte) (*store.Delivery, error) {
	d := new(store.Delivery)
	if err := json.Unmarshal(v, d); err != nil {
		return nil, fmt.Errorf("delivery record: %w: %w", store.ErrCorrupt, err)
	}
	return d, nil
}

// NextDelivery returns when the earliest pending delivery can next be
// claimed (its NextAttempt, or its lease's end while a node holds it) and
// true, or false when the outbox is empty. A delivery due now has the
// zero time.
func (db *DB) NextDelivery() (time.Time, bool, error) {
	ctx, cancel := db.ctx()
	defer cancel()
	var next *int64
	err := db.pool.QueryRow(ctx, "SELECT min(greatest(next_ns, lease_ns)) FROM deliveries").Scan(&next)
	if err != nil {
		return time.Time{}, false, fmt.Errorf("store: next delivery: %w", wrap(err))
	}
	if next == nil {
		return time.Time{}, false, nil
	}
	return fromNS(*next), true, nil
}

// lockDelivery reads the delivery id in tx, its row locked until tx ends;
// a missing one is store.ErrNotFound.
func lockDelivery(ctx context.Context, tx pgx.Tx, id string) (*store.Delivery, error) {
	var v []byte
	err := tx.QueryRow(ctx, "SELECT record FROM deliveries WHERE id = $1 FOR UPDATE", id).Scan(&v)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, fmt.Errorf("delivery %s: %w", id, store.ErrNotFound)
	}
	if err != nil {
		return nil, err
	}
	return decodeDelivery(v)
}

// RescheduleDelivery records a failed attempt (Attempts++, NextAttempt,
// LastError) and releases the delivery's lease.
func (db *DB) RescheduleDelivery(id string, next time.Time, lastErr string) error {
	err := db.update(func(ctx context.Context, tx pgx.Tx) error {
		d, err := lockDelivery(ctx, tx, id)
		if err != nil {
			return err
		}
		d.Attempts++
		d.NextAttempt = next.UTC()
		d.LastError = lastErr
		v, err := json.Marshal(d)
		if err != nil {
			return err
		}
		_, err = tx.Exec(ctx, "UPDATE deliveries SET next_ns = $2, lease_ns = $3, node = '', record = $4 WHERE id = $1",
			id, ns(d.NextAttempt), int64(noLease), v)
		return err
	})
	if err != nil {
		return fmt.Errorf("store: reschedule delivery: %w", err)
	}
	return nil
}

// DeleteDelivery removes a delivery (sent, or given up); a missing one is
// not an error.
func (db *DB) DeleteDelivery(id string) error {
	err := db.update(func(ctx context.Context, tx pgx.Tx) error {
		_, err := tx.Exec(ctx, "DELETE FROM deliveries WHERE id = $1", id)
		return err
	})
	if err != nil {
		return fmt.Errorf("store: delete delivery %s: %w", id, err)
	}
	return nil
}

// PendingDeliveries returns how many deliveries are waiting, across nodes.
func (db *DB) PendingDeliveries() (int, error) {
	ctx, cancel := db.ctx()
	defer cancel()
	var n int
	if err := db.pool.QueryRow(ctx, "SELECT count(*) FROM deliveries").Scan(&n); err != nil {
		return 0, fmt.Errorf("store: pending deliveries: %w", wrap(err))
	}
	return n, nil
}

// Deliveries calls fn with every pending delivery, in ascending id order
// (see bolt.DB.Deliveries), a page of deliveryPage records at a time, each
// page one statement under the store's timeout: a large outbox (a receiver
// down for days) is listed whole however long that takes, never more than
// a page in memory.
func (db *DB) Deliveries(fn func(d *store.Delivery)) error {
	after := ""
	for {
		page, err := db.deliveriesAfter(after)
		if err != nil {
			return fmt.Errorf("store: deliveries: %w", err)
		}
		for _, d := range page {
			fn(d)
		}
		if len(page) < deliveryPage {
			return nil
		}
		after = page[len(page)-1].ID
	}
}

// deliveryPage is how many deliveries one statement of Deliveries reads.
const deliveryPage = 64

// deliveriesAfter returns up to deliveryPage deliveries whose ids sort after
// after, in id order.
func (db *DB) deliveriesAfter(after string) ([]*store.Delivery, error) {
	ctx, cancel := db.ctx()
	defer cancel()
	rows, err := db.pool.Query(ctx, "SELECT record FROM deliveries WHERE id > $1 ORDER BY id LIMIT $2", after, deliveryPage)
	if err != nil {
		return nil, wrap(err)
	}
	out, err := pgx.CollectRows(rows, scanDelivery)
	if err != nil {
		return nil, wrap(err)
	}
	return out, nil
}

// RewriteDeliveryBody replaces the body of the pending delivery id with
// what fn returns for the stored delivery (nil: leave it as it is), the
// row locked meanwhile, keeping its id, schedule, attempts and lease (see
// bolt.DB.RewriteDeliveryBody).
func (db *DB) RewriteDeliveryBody(id string, fn func(d *store.Delivery) ([]byte, error)) error {
	err := db.update(func(ctx context.Context, tx pgx.Tx) error {
		d, err := lockDelivery(ctx, tx, id)
		if err != nil {
			return err
		}
		seen := *d
		body, err := fn(&seen)
		if err != nil || body == nil {
			return err
		}
		d.Body = body
		v, err := json.Marshal(d)
		if err != nil {
			return err
		}
		_, err = tx.Exec(ctx, "UPDATE deliveries SET record = $2 WHERE id = $1", id, v)
		return err
	})
	if err != nil {
		return fmt.Errorf("store: rewrite delivery body: %w", err)
	}
	return nil
}
