package bolt

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"slices"

	"github.com/earshot-dev/earshot/store"
	bolt "go.etcd.io/bbolt"
)

// ExpireJobs deletes up to limit finished (done or error) jobs of kind
// that cut says have expired (created strictly before their account's
// cut), oldest first, each with its index entries
// and its blob (through DeleteJob), and returns their ids. A job that still
// has a pending callback delivery is kept until the outbox delivers or drops
// it, so retention never cuts a callback's retries short; a job under a
// legal hold (store.Job.Held) is kept until its hold is released. Queued and
// processing jobs are never touched. A limit <= 0 is ErrInvalid.
//
// The candidates are read in one read transaction and deleted one
// transaction each, so a caller deleting many jobs holds the writer lock
// only briefly at a time; a job deleted meanwhile by someone else is
// skipped. A blob that could not be removed is reported in the joined error
// but its job is still listed as deleted (the record is gone).
func (db *DB) ExpireJobs(kind store.Kind, cut store.Cutoff, limit int) (deleted []string, err error) {
	if !kind.Valid() || limit <= 0 {
		return nil, fmt.Errorf("store: expire jobs: kind %q limit %d: %w", kind, limit, store.ErrInvalid)
	}
	latest := cut.Latest()
	if latest.IsZero() {
		return nil, nil
	}
	last := encTime(latest)
	var cands []statusEntry
	err = db.bolt.View(func(tx *bolt.Tx) error {
		owed := tx.Bucket(bucketDeliveryJob)
		jobs := tx.Bucket(bucketJobs)
		for _, st := range []store.Status{store.StatusDone, store.StatusError} {
			for _, e := range jobsWithStatus(tx, kind, st) {
				if e.t >= last {
					break // oldest first: the rest are newer than every cut
				}
				if hasPrefix(owed, appendStr(nil, e.id)) || held(jobs, e.id) {
					continue
				}
				if len(cut.Accounts) > 0 {
					// A record that does not decode is left to quarantine.
					j := new(store.Job)
					if unmarshalJob(jobs.Get([]byte(e.id)), j) != nil || e.t >= encTime(cut.For(j.Account)) {
						continue // its account's cut is earlier (zero: keep)
					}
				}
				cands = append(cands, e)
			}
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("store: expire jobs: %w", err)
	}
	slices.SortFunc(cands, func(a, b statusEntry) int {
		return cmp.Or(cmp.Compare(a.t, b.t), cmp.Compare(a.id, b.id))
	})
	var errs []error
	for _, e := range cands[:min(len(cands), limit)] {
		err := db.DeleteJob(e.id)
		switch {
		case err == nil:
			deleted = append(deleted, e.id)
		case errors.Is(err, store.ErrNotFound), errors.Is(err, store.ErrHeld):
			// Deleted meanwhile by its owner, or held meanwhile.
		case db.jobGone(e.id):
			// Only the blob removal failed: the record is gone.
			deleted = append(deleted, e.id)
			errs = append(errs, err)
		default:
			return deleted, fmt.Errorf("store: expire jobs: %w", errors.Join(append(errs, err)...))
		}
	}
	if len(errs) > 0 {
		return deleted, fmt.Errorf("store: expire jobs: %w", errors.Join(errs...))
	}
	return deleted, nil
}

// held reports whether the job id is under a legal hold; a record that
// does not decode is not (retention's DeleteJob then reports it).
func held(jobs *bolt.Bucket, id string) bool {
	var j store.Job
	return unmarshalJob(jobs.Get([]byte(id)), &j) == nil && j.Held()
}

// jobGone reports whether no job with id exists.
func (db *DB) jobGone(id string) bool {
	_, err := db.Job(id)
	return errors.Is(err, store.ErrNotFound)
}

// hasPrefix reports whether bucket b has a key starting with prefix.
func hasPrefix(b *bolt.Bucket, prefix []byte) bool {
	k, _ := b.Cursor().Seek(prefix)
	return k != nil && bytes.HasPrefix(k, prefix)
}

// ExpireUploads deletes up to limit uploads that cut says have expired,
// oldest first, with their blobs, and returns their ids. A job made
// from an upload holds its own link to the audio (LinkBlob), so expiring the
// upload never takes a job's audio; a later reference to the upload's id
// finds nothing. Uploads have no time index, so this reads every upload
// record once (a few hundred bytes each). A limit <= 0 is ErrInvalid.
func (db *DB) ExpireUploads(cut store.Cutoff, limit int) (deleted []string, err error) {
	if limit <= 0 {
		return nil, fmt.Errorf("store: expire uploads: limit %d: %w", limit, store.ErrInvalid)
	}
	var old []*store.Upload
	err = db.bolt.View(func(tx *bolt.Tx) error {
		return tx.Bucket(bucketUploads).ForEach(func(k, v []byte) error {
			u := new(store.Upload)
			if err := json.Unmarshal(v, u); err != nil {
				return fmt.Errorf("upload %s: %w: %w", k, store.ErrCorrupt, err)
			}
			if cut.Expired(u.Account, u.CreatedAt) {
				old = append(old, u)
			}
			return nil
		})
	})
	if err != nil {
		return nil, fmt.Errorf("store: expire uploads: %w", err)
	}
	slices.SortFunc(old, func(a, b *store.Upload) int {
		return cmp.Or(a.CreatedAt.Compare(b.CreatedAt), cmp.Compare(a.ID, b.ID))
	})
	var errs []error
	for _, u := range old[:min(len(old), limit)] {
		// Record first: a crash between the two leaves an unnamed blob
		// file, never a record naming a missing file.
		if err := db.DeleteUpload(u.ID); err != nil {
			return deleted, fmt.Errorf("store: expire uploads: %w", errors.Join(append(errs, err)...))
		}
		deleted = append(deleted, u.ID)
		if u.Blob != "" {
			if err := db.RemoveBlob(u.Blob); err != nil {
				errs = append(errs, fmt.Errorf("upload %s: %w", u.ID, err))
			}
		}
	}
	if len(errs) > 0 {
		return deleted, fmt.Errorf("store: expire uploads: %w", errors.Join(errs...))
	}
	return deleted, nil
}
