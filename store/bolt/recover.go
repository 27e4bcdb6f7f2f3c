package bolt

import (
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/earshot-dev/earshot/store"
	bolt "go.etcd.io/bbolt"
)

// statusEntry is one job found through the status index.
type statusEntry struct {
	id string
	t  uint64 // encoded CreatedAt
}

// jobsWithStatus lists the jobs of kind with status, oldest first.
func jobsWithStatus(tx *bolt.Tx, kind store.Kind, st store.Status) []statusEntry {
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
// left processing by a kill or power loss go back to queued and into the
// queue (which keeps oldest first), or, after a crash of the process
// itself (o.Crashed), are reported as suspects; a queued pre-recorded job missing from the queue is
// put back in it; the IDs of live jobs left queued or processing are
// reported for the daemon to finalise. It commits in one transaction.
func (db *DB) Recover(o store.RecoverOptions) (store.RecoverReport, error) {
	var rep store.RecoverReport
	err := db.update(func(tx *bolt.Tx) error {
		rep = store.RecoverReport{}
		if err := quarantineUnfinished(tx, &rep); err != nil {
			return err
		}
		for _, e := range jobsWithStatus(tx, store.KindPreRecorded, store.StatusProcessing) {
			if o.Crashed {
				rep.Suspects = append(rep.Suspects, e.id)
				continue
			}
			old, err := decodeStoredJob(tx, e.id)
			if errors.Is(err, store.ErrCorrupt) {
				continue // reported by quarantineUnfinished
			}
			if err != nil {
				return err
			}
			j := old.Clone()
			j.Status = store.StatusQueued
			if err := putJob(tx, old, j); err != nil {
				return err
			}
			rep.Requeued = append(rep.Requeued, e.id)
		}
		queue := tx.Bucket(bucketQueue)
		for _, e := range jobsWithStatus(tx, store.KindPreRecorded, store.StatusQueued) {
			j, err := decodeStoredJob(tx, e.id)
			if errors.Is(err, store.ErrCorrupt) {
				continue
			}
			if err != nil {
				return err
			}
			if j.InQueue() && queue.Get(queueKey(j)) == nil {
				if err := queue.Put(queueKey(j), []byte(j.Account)); err != nil {
					return err
				}
			}
		}
		live := append(jobsWithStatus(tx, store.KindLive, store.StatusQueued), jobsWithStatus(tx, store.KindLive, store.StatusProcessing)...)
		slices.SortFunc(live, func(a, b statusEntry) int {
			return cmp.Or(cmp.Compare(a.t, b.t), cmp.Compare(a.id, b.id))
		})
		for _, e := range live {
			if !slices.Contains(rep.Corrupt, e.id) {
				rep.Live = append(rep.Live, e.id)
			}
		}
		var err error
		rep.BatchPasses, err = requeueBatchPasses(tx)
		return err
	})
	if err != nil {
		return store.RecoverReport{}, fmt.Errorf("store: recover: %w", err)
	}
	return rep, nil
}

// quarantineUnfinished reads every job still queued or processing, of both
// kinds: the records with unreadable fields are written back quarantined
// (ended error, out of the queue), the records that cannot be read at all
// lose their queue entry; both are reported, and neither stops the start.
func quarantineUnfinished(tx *bolt.Tx, rep *store.RecoverReport) error {
	now := time.Now()
	for _, kind := range []store.Kind{store.KindPreRecorded, store.KindLive} {
		for _, st := range []store.Status{store.StatusQueued, store.StatusProcessing} {
			for _, e := range jobsWithStatus(tx, kind, st) {
				old, err := decodeStoredJob(tx, e.id)
				switch {
				case errors.Is(err, store.ErrCorrupt):
					rep.Corrupt = append(rep.Corrupt, e.id)
					if err := dropQueueEntries(tx, e.id); err != nil {
						return err
					}
				case err != nil:
					return err
				case old.Unreadable() != nil:
					if err := putJob(tx, old, old.Quarantined(now)); err != nil {
						return err
					}
					rep.Quarantined = append(rep.Quarantined, e.id)
				}
			}
		}
	}
	return nil
}

// dropQueueEntries removes the queue entries that name id (of either kind).
func dropQueueEntries(tx *bolt.Tx, id string) error {
	var keys [][]byte
	c := tx.Bucket(bucketQueue).Cursor()
	for k, _ := c.First(); k != nil; k, _ = c.Next() {
		if _, rest, ok := readStr(k); ok && len(rest) >= 8 && string(rest[8:]) == id {
			keys = append(keys, bytes.Clone(k))
		}
	}
	for _, k := range keys {
		if err := tx.Bucket(bucketQueue).Delete(k); err != nil {
			return err
		}
	}
	return nil
}
