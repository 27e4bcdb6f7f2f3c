package store

import (
	"fmt"

	bolt "go.etcd.io/bbolt"
)

// The durable queue holds every pre-recorded job whose status is queued,
// keyed by kind, CreatedAt and ID, so the oldest job comes out first.
// CreateJob, UpdateJob, DeleteJob and Recover keep it in step with the jobs'
// status in the same transactions; workers take from it with ClaimNext.

// ClaimNext takes the oldest queued job of kind out of the queue, sets it
// processing and increments Attempts, in one transaction, and returns it.
// When nothing is queued it returns ErrEmpty. Only pre-recorded jobs are
// ever queued, so ClaimNext(KindLive) is always ErrEmpty.
func (db *DB) ClaimNext(kind Kind) (*Job, error) {
	if !kind.valid() {
		return nil, fmt.Errorf("store: claim: kind %q: %w", kind, ErrInvalid)
	}
	var out *Job
	err := db.update(func(tx *bolt.Tx) error {
		prefix := appendStr(nil, string(kind))
		k, _ := tx.Bucket(bucketQueue).Cursor().Seek(prefix)
		if k == nil || len(k) < len(prefix)+8 || string(k[:len(prefix)]) != string(prefix) {
			return ErrEmpty
		}
		id := string(k[len(prefix)+8:])
		old, err := decodeStoredJob(tx, id)
		if err != nil {
			return fmt.Errorf("queued %w", err)
		}
		j := old.clone()
		j.Status = StatusProcessing
		j.Attempts++
		if err := putJob(tx, old, j); err != nil {
			return err
		}
		out = j
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("store: claim %s: %w", kind, err)
	}
	return out, nil
}
