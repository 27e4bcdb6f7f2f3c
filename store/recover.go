package store

import (
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"slices"
	"time"

	bolt "go.etcd.io/bbolt"
)

// RecoverOptions says how Recover treats the work the last run left
// unfinished.
type RecoverOptions struct {
	// Crashed says the last run died of a fatal error of its own (a
	// crash in C code, an unrecovered panic), not of a kill or a power
	// loss. The pre-recorded jobs it left processing may have caused it,
	// so they are not requeued (a poison job would crash every run that
	// picks it up) but reported in RecoverReport.Suspects, still
	// processing, for the caller to end.
	Crashed bool
}

// RecoverReport says what Recover found.
type RecoverReport struct {
	Requeued []string // pre-recorded jobs put back in the queue, oldest first
	Suspects []string // pre-recorded jobs left processing by a crash (RecoverOptions.Crashed), oldest first
	Live     []string // live jobs left queued or processing, oldest first, for the daemon to finalise
	// BatchPasses are the live jobs whose batch pass was running, put
	// back to queued (also after a crash: Attempts bounds a pass that
	// crashes every run).
	BatchPasses []string
	// Quarantined are the unfinished jobs whose records had unreadable
	// fields, now ended error (quarantine.go); Corrupt the unfinished jobs
	// whose records cannot be read at all, left as they are (Check reports
	// them) and out of the queue.
	Quarantined []string
	Corrupt     []string
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
// left processing by a kill or power loss go back to queued and into the
// queue (which keeps oldest first), or, after a crash of the process
// itself (o.Crashed), are reported as suspects; a queued pre-recorded job missing from the queue is
// put back in it; the IDs of live jobs left queued or processing are
// reported for the daemon to finalise. It commits in one transaction.
func (db *DB) Recover(o RecoverOptions) (RecoverReport, error) {
	var rep RecoverReport
	err := db.update(func(tx *bolt.Tx) error {
		rep = RecoverReport{}
		if err := quarantineUnfinished(tx, &rep); err != nil {
			return err
		}
		for _, e := range jobsWithStatus(tx, KindPreRecorded, StatusProcessing) {
			if o.Crashed {
				rep.Suspects = append(rep.Suspects, e.id)
				continue
			}
			old, err := decodeStoredJob(tx, e.id)
			if errors.Is(err, ErrCorrupt) {
				continue // reported by quarantineUnfinished
			}
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
			if errors.Is(err, ErrCorrupt) {
				continue
			}
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
			if !slices.Contains(rep.Corrupt, e.id) {
				rep.Live = append(rep.Live, e.id)
			}
		}
		var err error
		rep.BatchPasses, err = requeueBatchPasses(tx)
		return err
	})
	if err != nil {
		return RecoverReport{}, fmt.Errorf("store: recover: %w", err)
	}
	return rep, nil
}

// quarantineUnfinished reads every job still queued or processing, of both
// kinds: the records with unreadable fields are written back quarantined
// (ended error, out of the queue), the records that cannot be read at all
// lose their queue entry; both are reported, and neither stops the start.
func quarantineUnfinished(tx *bolt.Tx, rep *RecoverReport) error {
	now := time.Now()
	for _, kind := range []Kind{KindPreRecorded, KindLive} {
		for _, st := range []Status{StatusQueued, StatusProcessing} {
			for _, e := range jobsWithStatus(tx, kind, st) {
				old, err := decodeStoredJob(tx, e.id)
				switch {
				case errors.Is(err, ErrCorrupt):
					rep.Corrupt = append(rep.Corrupt, e.id)
					if err := dropQueueEntries(tx, e.id); err != nil {
						return err
					}
				case err != nil:
					return err
				case old.unreadable != nil:
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
