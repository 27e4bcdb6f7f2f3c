package store

import (
	"bytes"
	"cmp"
	"fmt"
	"slices"

	bolt "go.etcd.io/bbolt"
)

// RecoverReport says what Recover found.
type RecoverReport struct {
	Requeued []string // pre-recorded jobs put back in the queue, oldest first
	Live     []string // live jobs left queued or processing, oldest first, for the daemon to finalise
}

// statusEntry is one job found through the status index.
type statusEntry struct {
	id string
	t  uint64 // encoded CreatedAt
}

// jobsWithStatus lists the jobs of kind with status, oldest first.
func jobsWithStatus(tx *bolt.Tx, kind Kind, st Status) []statusEntry {
	prefix := statusPrefix(kind, st)
	var out []statusEntry
	c := tx.Bucket(bucketJobStatus).Cursor()
	for k, _ := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix); k, _ = c.Next() {
		if t, id, ok := readTimeID(k[len(prefix):]); ok {
			out = append(out, statusEntry{id: id, t: t})
		}
	}
	return out
}

// Recover runs once at start, before any worker claims: pre-recorded jobs
// left processing by a crash go back to queued and into the queue (which
// keeps oldest first); a queued pre-recorded job missing from the queue is
// put back in it; the IDs of live jobs left queued or processing are
// reported for the daemon to finalise. It commits in one transaction.
func (db *DB) Recover() (RecoverReport, error) {
	var rep RecoverReport
	err := db.update(func(tx *bolt.Tx) error {
		rep = RecoverReport{}
		for _, e := range jobsWithStatus(tx, KindPreRecorded, StatusProcessing) {
			old, err := decodeStoredJob(tx, e.id)
			if err != nil {
				return err
			}
			j := old.clone()
			j.Status = StatusQueued
			if err := putJob(tx, old, j); err != nil {
				return err
			}
			rep.Requeued = append(rep.Requeued, e.id)
		}
		queue := tx.Bucket(bucketQueue)
		for _, e := range jobsWithStatus(tx, KindPreRecorded, StatusQueued) {
			j, err := decodeStoredJob(tx, e.id)
			if err != nil {
				return err
			}
			if j.inQueue() && queue.Get(j.queueKey()) == nil {
				if err := queue.Put(j.queueKey(), []byte(j.Account)); err != nil {
					return err
				}
			}
		}
		live := append(jobsWithStatus(tx, KindLive, StatusQueued), jobsWithStatus(tx, KindLive, StatusProcessing)...)
		slices.SortFunc(live, func(a, b statusEntry) int {
			return cmp.Or(cmp.Compare(a.t, b.t), cmp.Compare(a.id, b.id))
		})
		for _, e := range live {
			rep.Live = append(rep.Live, e.id)
		}
		return nil
	})
	if err != nil {
		return RecoverReport{}, fmt.Errorf("store: recover: %w", err)
	}
	return rep, nil
}
