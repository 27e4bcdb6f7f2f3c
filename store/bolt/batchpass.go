package bolt

import (
	"bytes"
	"fmt"

	"github.com/earshot-dev/earshot/store"
	bolt "go.etcd.io/bbolt"
)

// ClaimBatchPass takes the oldest live job whose batch pass is queued, sets
// the pass running and increments Attempts, in one transaction, and returns
// the job. When no pass is queued it returns ErrEmpty. The job's status is
// not changed.
func (db *DB) ClaimBatchPass() (*store.Job, error) {
	var out *store.Job
	err := db.update(func(tx *bolt.Tx) error {
		for {
			old, rescan, err := firstQueuedPass(tx)
			switch {
			case err != nil:
				return err
			case rescan:
				continue
			case old == nil:
				return store.ErrEmpty
			}
			j := old.Clone()
			j.BatchPass = store.BatchPassRunning
			j.Attempts++
			if err := putJob(tx, old, j); err != nil {
				return err
			}
			out = j
			return nil
		}
	})
	if err != nil {
		return nil, fmt.Errorf("store: claim batch pass: %w", err)
	}
	return out, nil
}

// firstQueuedPass returns the oldest live job whose batch pass is queued,
// nil if none; rescan when it took a quarantined or unreadable job out of
// the queue on the way (the cursor is then stale).
func firstQueuedPass(tx *bolt.Tx) (j *store.Job, rescan bool, err error) {
	prefix := appendStr(nil, string(store.KindLive))
	c := tx.Bucket(bucketQueue).Cursor()
	for k, _ := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix) && len(k) >= len(prefix)+8; k, _ = c.Next() {
		old, ok, err := runnable(tx, k, string(k[len(prefix)+8:]))
		if err != nil || !ok {
			return nil, err == nil, err
		}
		if old.BatchPass == store.BatchPassQueued {
			return old, false, nil
		}
	}
	return nil, false, nil
}

// requeueBatchPasses puts the batch passes a stopped run left running back
// to queued, and returns their job ids, oldest first.
func requeueBatchPasses(tx *bolt.Tx) ([]string, error) {
	prefix := appendStr(nil, string(store.KindLive))
	var running []*store.Job
	c := tx.Bucket(bucketQueue).Cursor()
	var keys [][]byte
	for k, _ := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix) && len(k) >= len(prefix)+8; k, _ = c.Next() {
		keys = append(keys, bytes.Clone(k))
	}
	for _, k := range keys {
		j, ok, err := runnable(tx, k, string(k[len(prefix)+8:]))
		if err != nil {
			return nil, err
		}
		if ok && j.BatchPass == store.BatchPassRunning {
			running = append(running, j)
		}
	}
	var ids []string
	for _, old := range running {
		j := old.Clone()
		j.BatchPass = store.BatchPassQueued
		if err := putJob(tx, old, j); err != nil {
			return nil, err
		}
		ids = append(ids, j.ID)
	}
	return ids, nil
}

// PendingBatchPasses counts the live jobs whose batch pass is queued or
// running.
func (db *DB) PendingBatchPasses() (int, error) {
	n := 0
	err := db.bolt.View(func(tx *bolt.Tx) error {
		prefix := appendStr(nil, string(store.KindLive))
		c := tx.Bucket(bucketQueue).Cursor()
		for k, _ := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix); k, _ = c.Next() {
			n++
		}
		return nil
	})
	if err != nil {
		return 0, fmt.Errorf("store: count batch passes: %w", err)
	}
	return n, nil
}
