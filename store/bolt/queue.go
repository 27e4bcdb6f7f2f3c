package bolt

import (
	"bytes"
	"errors"
	"fmt"
	"time"

	"github.com/earshot-dev/earshot/store"
	bolt "go.etcd.io/bbolt"
)

// The durable queue holds every pre-recorded job whose status is queued,
// keyed by kind, CreatedAt and ID, so the oldest job comes out first.
// CreateJob, UpdateJob, DeleteJob and Recover keep it in step with the jobs'
// status in the same transactions; workers take from it with ClaimNext.

// ClaimNext takes the oldest queued job of kind out of the queue, sets it
// processing and increments Attempts, in one transaction, and returns it.
// When nothing is queued it returns ErrEmpty. Live jobs are never claimed
// (their queue entries are batch passes, taken by ClaimBatchPass), so
// ClaimNext(KindLive) is always ErrEmpty.
func (db *DB) ClaimNext(kind store.Kind) (*store.Job, error) { return db.claim(kind, nil) }

// ClaimNextAfter is ClaimNext taking turns between accounts: it claims the
// oldest queued job of the account that follows after in name order among
// the accounts with a queued job, wrapping around to the first. A worker
// passes the account it served last, so one account's backlog does not
// hold back another's jobs.
func (db *DB) ClaimNextAfter(kind store.Kind, after string) (*store.Job, error) {
	return db.claim(kind, &after)
}

func (db *DB) claim(kind store.Kind, after *string) (*store.Job, error) {
	if !kind.Valid() {
		return nil, fmt.Errorf("store: claim: kind %q: %w", kind, store.ErrInvalid)
	}
	if kind == store.KindLive {
		return nil, fmt.Errorf("store: claim %s: %w", kind, store.ErrEmpty)
	}
	var out *store.Job
	err := db.update(func(tx *bolt.Tx) error {
		prefix := appendStr(nil, string(kind))
		for {
			var k []byte
			if after == nil {
				k, _ = tx.Bucket(bucketQueue).Cursor().Seek(prefix)
			} else {
				k = nextInTurn(tx, prefix, *after)
			}
			if k == nil || len(k) < len(prefix)+8 || string(k[:len(prefix)]) != string(prefix) {
				return store.ErrEmpty
			}
			old, ok, err := runnable(tx, k, string(k[len(prefix)+8:]))
			if err != nil {
				return err
			}
			if !ok {
				continue // quarantined or unplaceable: out of the queue, try the next
			}
			j := old.Clone()
			j.Status = store.StatusProcessing
			j.Attempts++
			if err := putJob(tx, old, j); err != nil {
				return err
			}
			out = j
			return nil
		}
	})
	if err != nil {
		return nil, fmt.Errorf("store: claim %s: %w", kind, err)
	}
	return out, nil
}

// nextInTurn returns the queue key of the oldest job of the first account
// after `after` (wrapping around) among the queued jobs under prefix, nil
// when there is none. The queue value is the job's account (empty in
// entries written before it was kept there: the job is read instead).
func nextInTurn(tx *bolt.Tx, prefix []byte, after string) []byte {
	var next, first []byte
	var nextAcc, firstAcc string
	c := tx.Bucket(bucketQueue).Cursor()
	for k, v := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix) && len(k) >= len(prefix)+8; k, v = c.Next() {
		acc := string(v)
		if acc == "" {
			if j, err := decodeStoredJob(tx, string(k[len(prefix)+8:])); err == nil {
				acc = j.Account
			}
		}
		// Keys come oldest first: the first key seen of an account is its oldest.
		if first == nil || acc < firstAcc {
			first, firstAcc = k, acc
		}
		if acc > after && (next == nil || acc < nextAcc) {
			next, nextAcc = k, acc
		}
	}
	if next != nil {
		return next
	}
	return first
}

// AwaitingAudio returns the queued pre-recorded jobs whose audio_url is
// still to be fetched, oldest first (for the fetcher after a restart).
func (db *DB) AwaitingAudio() ([]*store.Job, error) {
	var out []*store.Job
	err := db.bolt.View(func(tx *bolt.Tx) error {
		for _, e := range jobsWithStatus(tx, store.KindPreRecorded, store.StatusQueued) {
			j, err := decodeStoredJob(tx, e.id)
			if err != nil {
				return err
			}
			if j.AwaitingAudio {
				out = append(out, j)
			}
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("store: jobs awaiting audio: %w", err)
	}
	return out, nil
}

// runnable reads the job a queue entry (key) names for a claim. A record
// with unreadable fields is written back quarantined (ended, out of the
// queue) and a record that cannot be read at all loses its queue entry:
// both report false, so the claim goes on to the next job instead of
// failing on the same one for ever.
func runnable(tx *bolt.Tx, key []byte, id string) (*store.Job, bool, error) {
	old, err := decodeStoredJob(tx, id)
	switch {
	case errors.Is(err, store.ErrCorrupt), errors.Is(err, store.ErrNotFound):
		return nil, false, tx.Bucket(bucketQueue).Delete(key)
	case err != nil:
		return nil, false, fmt.Errorf("queued %w", err)
	case old.Unreadable() != nil:
		return nil, false, putJob(tx, old, old.Quarantined(time.Now()))
	}
	return old, true, nil
}
