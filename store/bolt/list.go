package bolt

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/earshot-dev/earshot/store"
	bolt "go.etcd.io/bbolt"
)

// Index keys are built from length-prefixed strings (uvarint length, then
// bytes) and times as 8 big-endian bytes, so that a prefix of fields selects
// exactly one account/kind/status and keys under it sort by time, then id.

// encTime maps t to a uint64 whose big-endian bytes sort like t: UnixNano
// with the sign bit flipped. The zero time and times before 1678 map to 0;
// times after 2262 to the maximum.
// minTime and maxTime bound the times an index key can order (1678–2262).
var (
	minTime = time.Unix(0, math.MinInt64).UTC()
	maxTime = time.Unix(0, math.MaxInt64).UTC()
)

func encTime(t time.Time) uint64 {
	if t.IsZero() || t.Before(minTime) {
		return 0
	}
	if t.After(maxTime) {
		return math.MaxUint64
	}
	return uint64(t.UnixNano()) ^ (1 << 63)
}

func appendTime(b []byte, t time.Time) []byte {
	return binary.BigEndian.AppendUint64(b, encTime(t))
}

func appendStr(b []byte, s string) []byte {
	b = binary.AppendUvarint(b, uint64(len(s)))
	return append(b, s...)
}

// readStr splits a length-prefixed string off b.
func readStr(b []byte) (string, []byte, bool) {
	n, w := binary.Uvarint(b)
	if w <= 0 || uint64(len(b)-w) < n {
		return "", nil, false
	}
	return string(b[w : w+int(n)]), b[w+int(n):], true
}

// readTimeID splits the trailing time and id off an index key.
func readTimeID(b []byte) (uint64, string, bool) {
	if len(b) < 8 {
		return 0, "", false
	}
	return binary.BigEndian.Uint64(b), string(b[8:]), true
}

// jobIndexPrefix selects one account's jobs of one kind in job_index.
func jobIndexPrefix(account string, kind store.Kind) []byte {
	return appendStr(appendStr(nil, account), string(kind))
}

func jobIndexKey(j *store.Job) []byte {
	return append(appendTime(jobIndexPrefix(j.Account, j.Kind), j.CreatedAt), j.ID...)
}

// statusPrefix selects one kind and status in job_status (and names the
// counter in job_counts).
func statusPrefix(kind store.Kind, status store.Status) []byte {
	return appendStr(appendStr(nil, string(kind)), string(status))
}

func statusKey(j *store.Job) []byte {
	return append(appendTime(statusPrefix(j.Kind, j.Status), j.CreatedAt), j.ID...)
}

// prefixEnd returns the smallest key greater than every key starting with
// p, or nil when there is none.
func prefixEnd(p []byte) []byte {
	end := bytes.Clone(p)
	for i := len(end) - 1; i >= 0; i-- {
		if end[i] < 0xff {
			end[i]++
			return end[:i+1]
		}
	}
	return nil
}

// ListJobs returns the jobs matching q, newest first (CreatedAt descending,
// then ID descending). It walks the account/kind index backwards from
// Before; status is read from the index, so only jobs that are returned (or
// that need a Metadata check) are decoded. Skipping Offset matches costs one
// index step each.
func (db *DB) ListJobs(q store.ListQuery) ([]*store.Job, error) {
	return store.CollectJobs(q, db.EachJob)
}

// EachJob calls fn with each job matching q, in ListJobs' order, inside
// one read transaction, until fn returns false or Limit jobs were visited.
// Only one decoded job is held at a time, so a caller that encodes and
// drops each one lists in bounded memory; fn must be quick (it holds the
// transaction) and must not call the store.
func (db *DB) EachJob(q store.ListQuery, fn func(*store.Job) bool) error {
	if err := q.Check(); err != nil {
		return fmt.Errorf("store: %w", err)
	}
	prefix := jobIndexPrefix(q.Account, q.Kind)
	var after []byte
	if !q.After.IsZero() {
		after = appendTime(slices.Clip(prefix), q.After)
	}
	err := db.bolt.View(func(tx *bolt.Tx) error {
		jobs := tx.Bucket(bucketJobs)
		c := tx.Bucket(bucketJobIndex).Cursor()
		var k, v []byte
		// Position on the first key at or past the upper bound, then step back.
		var upper []byte
		if !q.Before.IsZero() {
			upper = append(appendTime(slices.Clip(prefix), q.Before), q.BeforeID...)
		} else {
			upper = prefixEnd(prefix)
		}
		if upper == nil {
			k, v = c.Last()
		} else if k, _ = c.Seek(upper); k == nil {
			k, v = c.Last()
		} else {
			k, v = c.Prev()
		}
		skip, n := q.Offset, 0
		for ; k != nil && bytes.HasPrefix(k, prefix); k, v = c.Prev() {
			if len(k) < len(prefix)+8 {
				return fmt.Errorf("index key %x: %w", k, store.ErrCorrupt)
			}
			if after != nil && bytes.Compare(k[:len(after)], after) <= 0 {
				break
			}
			if len(q.Statuses) > 0 && !slices.Contains(q.Statuses, store.Status(v)) {
				continue
			}
			var j *store.Job
			if len(q.Metadata) > 0 {
				var err error
				if j, err = decodeJob(jobs, string(k[len(prefix)+8:])); err != nil {
					return err
				}
				if !store.MetadataMatches(j.CustomMetadata, q.Metadata) {
					continue
				}
			}
			if skip > 0 {
				skip--
				continue
			}
			if j == nil {
				var err error
				if j, err = decodeJob(jobs, string(k[len(prefix)+8:])); err != nil {
					return err
				}
			}
			n++
			if !fn(j) || (q.Limit > 0 && n == q.Limit) {
				break
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("store: list jobs: %w", err)
	}
	return nil
}

func decodeJob(jobs *bolt.Bucket, id string) (*store.Job, error) {
	v := jobs.Get([]byte(id))
	if v == nil {
		return nil, fmt.Errorf("job %s indexed but missing: %w", id, store.ErrCorrupt)
	}
	j := new(store.Job)
	if err := unmarshalJob(v, j); err != nil {
		return nil, fmt.Errorf("job %s: %w", id, err)
	}
	return j.View(), nil
}

// CountJobs returns how many jobs of kind have status, across all accounts,
// from a counter kept with the jobs (one read). An empty status counts every
// status.
func (db *DB) CountJobs(kind store.Kind, status store.Status) (int, error) {
	statuses := []store.Status{status}
	if status == "" {
		statuses = []store.Status{store.StatusQueued, store.StatusProcessing, store.StatusDone, store.StatusError}
	}
	var n uint64
	err := db.bolt.View(func(tx *bolt.Tx) error {
		counts := tx.Bucket(bucketJobCounts)
		for _, s := range statuses {
			if v := counts.Get(statusPrefix(kind, s)); len(v) == 8 {
				n += binary.BigEndian.Uint64(v)
			}
		}
		return nil
	})
	if err != nil {
		return 0, fmt.Errorf("store: count jobs: %w", err)
	}
	return int(n), nil
}

// addCount adds delta to the kind/status counter, deleting it at zero.
func addCount(tx *bolt.Tx, kind store.Kind, status store.Status, delta int) error {
	counts := tx.Bucket(bucketJobCounts)
	key := statusPrefix(kind, status)
	var n int64
	if v := counts.Get(key); len(v) == 8 {
		n = int64(binary.BigEndian.Uint64(v))
	}
	n += int64(delta)
	if n < 0 {
		return fmt.Errorf("count %s/%s below zero: %w", kind, status, store.ErrCorrupt)
	}
	if n == 0 {
		return counts.Delete(key)
	}
	return counts.Put(key, binary.BigEndian.AppendUint64(nil, uint64(n)))
}
