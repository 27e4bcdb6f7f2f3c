package bolt

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"maps"
	"slices"

	"github.com/earshot-dev/earshot/store"
	bolt "go.etcd.io/bbolt"
)

func queueKey(j *store.Job) []byte {
	return append(appendTime(appendStr(nil, string(j.Kind)), j.CreatedAt), j.ID...)
}

// CreateJob stores a new job. A pre-recorded job created queued enters the
// durable queue in the same transaction. Times are stored in UTC. A
// duplicate ID is ErrExists; an empty ID, Account, Kind or Status or a zero
// CreatedAt is ErrInvalid.
func (db *DB) CreateJob(j *store.Job) error {
	if j == nil {
		return fmt.Errorf("store: create job: nil: %w", store.ErrInvalid)
	}
	rec := *j
	rec.CreatedAt = rec.CreatedAt.UTC()
	rec.CompletedAt = rec.CompletedAt.UTC()
	if err := rec.Validate(); err != nil {
		return fmt.Errorf("store: create job: %w", err)
	}
	err := db.update(func(tx *bolt.Tx) error {
		if tx.Bucket(bucketJobs).Get([]byte(rec.ID)) != nil {
			return fmt.Errorf("job %s: %w", rec.ID, store.ErrExists)
		}
		return putJob(tx, nil, &rec)
	})
	if err != nil {
		return fmt.Errorf("store: create job: %w", err)
	}
	return nil
}

// Job returns the job with the given id: one bucket read and one JSON
// decode. An unknown id is ErrNotFound.
func (db *DB) Job(id string) (*store.Job, error) {
	j := new(store.Job)
	err := db.bolt.View(func(tx *bolt.Tx) error {
		v := tx.Bucket(bucketJobs).Get([]byte(id))
		if v == nil {
			return fmt.Errorf("job %s: %w", id, store.ErrNotFound)
		}
		return unmarshalJob(v, j)
	})
	if err != nil {
		return nil, fmt.Errorf("store: %w", err)
	}
	return j.View(), nil
}

// UpdateJob reads the job, calls fn on it and writes it back, in one
// transaction. The list index, status counters and queue membership follow
// the new Status, and the deliveries fn returns are enqueued in the same
// transaction (so "job done" and "callback owed" commit together; their
// JobID and Account default to the job's, ID and CreatedAt are assigned when
// empty). fn may not change ID, Account, Kind or CreatedAt (ErrInvalid). If
// fn returns an error nothing is written and that error is returned as is.
// fn runs inside the write transaction: keep it short and do not call the
// DB from it. An unknown id is ErrNotFound.
func (db *DB) UpdateJob(id string, fn store.UpdateFunc) (*store.Job, error) {
	var out *store.Job
	var fnErr error
	err := db.update(func(tx *bolt.Tx) error {
		old, err := decodeStoredJob(tx, id)
		if err != nil {
			return err
		}
		j, ds, ferr, err := store.ApplyUpdate(old, fn)
		if ferr != nil {
			fnErr = ferr
			return ferr
		}
		if err != nil {
			return err
		}
		if err := putJob(tx, old, j); err != nil {
			return err
		}
		for _, d := range ds {
			if err := putDelivery(tx, nil, d); err != nil {
				return err
			}
		}
		out = j
		return nil
	})
	if fnErr != nil && err == fnErr {
		return nil, fnErr
	}
	if err != nil {
		return nil, fmt.Errorf("store: update job: %w", err)
	}
	return out, nil
}

// DeleteJob removes the job, its index and queue entries and its pending
// deliveries in one transaction, then (after commit) its Blob file. If only
// the blob removal fails the job is gone and the error says so. An unknown
// id is ErrNotFound.
func (db *DB) DeleteJob(id string) error {
	var blob string
	err := db.update(func(tx *bolt.Tx) error {
		j, err := decodeStoredJob(tx, id)
		if err != nil {
			return err
		}
		if j.Held() {
			return fmt.Errorf("job %s: %w", id, store.ErrHeld)
		}
		blob = j.Blob
		if err := deleteJobEntries(tx, j); err != nil {
			return err
		}
		if err := tx.Bucket(bucketJobs).Delete([]byte(id)); err != nil {
			return err
		}
		return deleteJobDeliveries(tx, id)
	})
	if err != nil {
		return fmt.Errorf("store: delete job: %w", err)
	}
	if blob != "" && store.ValidName(blob) {
		if err := db.RemoveBlob(blob); err != nil {
			return fmt.Errorf("store: delete job %s: %w", id, err)
		}
	}
	return nil
}

func decodeStoredJob(tx *bolt.Tx, id string) (*store.Job, error) {
	v := tx.Bucket(bucketJobs).Get([]byte(id))
	if v == nil {
		return nil, fmt.Errorf("job %s: %w", id, store.ErrNotFound)
	}
	j := new(store.Job)
	if err := unmarshalJob(v, j); err != nil {
		return nil, fmt.Errorf("job %s: %w", id, err)
	}
	return j, nil
}

// putJob writes j and moves its index entries, counters and queue entry
// from old's (nil for a new job). The immutable fields are the same in both.
func putJob(tx *bolt.Tx, old, j *store.Job) error {
	v, err := marshalJob(j)
	if err != nil {
		return fmt.Errorf("job %s: %w", j.ID, err)
	}
	if err := tx.Bucket(bucketJobs).Put([]byte(j.ID), v); err != nil {
		return err
	}
	if old != nil && old.Status == j.Status {
		switch {
		case old.InQueue() && !j.InQueue():
			return tx.Bucket(bucketQueue).Delete(queueKey(j))
		case !old.InQueue() && j.InQueue():
			return tx.Bucket(bucketQueue).Put(queueKey(j), []byte(j.Account))
		}
		return nil
	}
	if old != nil {
		if err := deleteJobEntries(tx, old); err != nil {
			return err
		}
	}
	if err := tx.Bucket(bucketJobIndex).Put(jobIndexKey(j), []byte(j.Status)); err != nil {
		return err
	}
	if err := tx.Bucket(bucketJobStatus).Put(statusKey(j), nil); err != nil {
		return err
	}
	if err := addCount(tx, j.Kind, j.Status, 1); err != nil {
		return err
	}
	if j.InQueue() {
		return tx.Bucket(bucketQueue).Put(queueKey(j), []byte(j.Account))
	}
	return nil
}

// deleteJobEntries removes j's index entries, counter share and queue entry.
func deleteJobEntries(tx *bolt.Tx, j *store.Job) error {
	if err := tx.Bucket(bucketJobIndex).Delete(jobIndexKey(j)); err != nil {
		return err
	}
	if err := tx.Bucket(bucketJobStatus).Delete(statusKey(j)); err != nil {
		return err
	}
	if err := addCount(tx, j.Kind, j.Status, -1); err != nil {
		return err
	}
	return tx.Bucket(bucketQueue).Delete(queueKey(j))
}

// checkJobs verifies jobs against job_index, job_status, job_counts and
// queue, both ways.
func checkJobs(tx *bolt.Tx, report func(string, ...any)) {
	jobs := tx.Bucket(bucketJobs)
	index := tx.Bucket(bucketJobIndex)
	status := tx.Bucket(bucketJobStatus)
	queue := tx.Bucket(bucketQueue)
	counts := map[string]uint64{}
	nJobs, nQueued := 0, 0
	_ = jobs.ForEach(func(k, v []byte) error {
		nJobs++
		j := new(store.Job)
		if err := unmarshalJob(v, j); err != nil {
			report("job %s: %v", k, err)
			return nil
		}
		if j.ID != string(k) {
			report("job %s: record id %q", k, j.ID)
			return nil
		}
		if err := j.Validate(); err != nil {
			report("%v", err)
			return nil
		}
		if got := index.Get(jobIndexKey(j)); got == nil || store.Status(got) != j.Status {
			report("job %s: index entry %q, status %s", k, got, j.Status)
		}
		if status.Get(statusKey(j)) == nil {
			report("job %s: no status entry for %s/%s", k, j.Kind, j.Status)
		}
		inQ := queue.Get(queueKey(j)) != nil
		if inQ != j.InQueue() {
			report("job %s (%s, %s): in queue %t", k, j.Kind, j.Status, inQ)
		}
		if j.InQueue() {
			nQueued++
		}
		counts[string(statusPrefix(j.Kind, j.Status))]++
		return nil
	})

	// Every index entry points at a job with the same fields.
	n := 0
	_ = index.ForEach(func(k, v []byte) error {
		n++
		account, rest, ok1 := readStr(k)
		kind, rest, ok2 := readStr(rest)
		t, id, ok3 := readTimeID(rest)
		if !ok1 || !ok2 || !ok3 {
			report("index key %x malformed", k)
			return nil
		}
		j, err := decodeJob(jobs, id)
		if err != nil {
			report("index entry %s/%s/%s: %v", account, kind, id, err)
			return nil
		}
		if j.Account != account || string(j.Kind) != kind || encTime(j.CreatedAt) != t || string(j.Status) != string(v) {
			report("index entry %s/%s/%s status %s does not match its job", account, kind, id, v)
		}
		return nil
	})
	if n != nJobs {
		report("%d index entries for %d jobs", n, nJobs)
	}

	n = 0
	_ = status.ForEach(func(k, _ []byte) error {
		n++
		kind, rest, ok1 := readStr(k)
		st, rest, ok2 := readStr(rest)
		t, id, ok3 := readTimeID(rest)
		if !ok1 || !ok2 || !ok3 {
			report("status key %x malformed", k)
			return nil
		}
		j, err := decodeJob(jobs, id)
		if err != nil {
			report("status entry %s/%s/%s: %v", kind, st, id, err)
			return nil
		}
		if string(j.Kind) != kind || string(j.Status) != st || encTime(j.CreatedAt) != t {
			report("status entry %s/%s/%s does not match its job", kind, st, id)
		}
		return nil
	})
	if n != nJobs {
		report("%d status entries for %d jobs", n, nJobs)
	}

	n = 0
	_ = queue.ForEach(func(k, _ []byte) error {
		n++
		kind, rest, ok1 := readStr(k)
		t, id, ok2 := readTimeID(rest)
		if !ok1 || !ok2 {
			report("queue key %x malformed", k)
			return nil
		}
		j, err := decodeJob(jobs, id)
		if err != nil {
			report("queue entry %s: %v", id, err)
			return nil
		}
		if !j.InQueue() || string(j.Kind) != kind || encTime(j.CreatedAt) != t {
			report("queue entry %s: job is %s %s", id, j.Kind, j.Status)
		}
		return nil
	})
	if n != nQueued {
		report("%d queue entries for %d queued pre-recorded jobs and batch passes", n, nQueued)
	}

	stored := map[string]uint64{}
	_ = tx.Bucket(bucketJobCounts).ForEach(func(k, v []byte) error {
		if len(v) != 8 {
			report("counter %x: %d bytes", k, len(v))
			return nil
		}
		stored[string(k)] = binary.BigEndian.Uint64(v)
		return nil
	})
	for _, k := range slices.Sorted(maps.Keys(counts)) {
		if stored[k] != counts[k] {
			report("counter %q is %d, jobs %d", k, stored[k], counts[k])
		}
	}
	for k, v := range stored {
		if _, ok := counts[k]; !ok {
			report("counter %q is %d, jobs 0", k, v)
		}
	}
}

// jobFormat is the first byte of a stored job record. The record is
//
//	jobFormat, uvarint n, n bytes of JSON (the Job without Params and
//	Result), uvarint n, Params, uvarint n, Result
//
// so that reading a job scans only the small JSON head: a long Result is
// copied, not parsed.
const jobFormat = 1

// marshalJob encodes j as a job record. Params and Result must be valid
// JSON when set.
func marshalJob(j *store.Job) ([]byte, error) {
	for _, raw := range []json.RawMessage{j.Params, j.Result} {
		if len(raw) > 0 && !json.Valid(raw) {
			return nil, fmt.Errorf("params or result is not valid JSON: %w", store.ErrInvalid)
		}
	}
	head := *j
	head.Params, head.Result = nil, nil
	h, err := json.Marshal(&head)
	if err != nil {
		return nil, fmt.Errorf("encode: %v: %w", err, store.ErrInvalid)
	}
	b := make([]byte, 0, 1+3*binary.MaxVarintLen64+len(h)+len(j.Params)+len(j.Result))
	b = append(b, jobFormat)
	for _, part := range [][]byte{h, j.Params, j.Result} {
		b = binary.AppendUvarint(b, uint64(len(part)))
		b = append(b, part...)
	}
	return b, nil
}

// unmarshalJob decodes a job record into j, copying everything out of v
// (which bbolt owns only for the transaction).
func unmarshalJob(v []byte, j *store.Job) error {
	if len(v) == 0 || v[0] != jobFormat {
		return fmt.Errorf("job record format %x: %w", v[:min(len(v), 1)], store.ErrCorrupt)
	}
	var parts [3][]byte
	rest := v[1:]
	for i := range parts {
		n, w := binary.Uvarint(rest)
		if w <= 0 || uint64(len(rest)-w) < n {
			return fmt.Errorf("job record truncated: %w", store.ErrCorrupt)
		}
		parts[i], rest = rest[w:w+int(n)], rest[w+int(n):]
	}
	if len(rest) != 0 {
		return fmt.Errorf("job record has %d trailing bytes: %w", len(rest), store.ErrCorrupt)
	}
	if err := store.DecodeJobHead(parts[0], j); err != nil {
		return err
	}
	j.Params, j.Result = nil, nil
	if len(parts[1]) > 0 {
		j.Params = bytes.Clone(parts[1])
	}
	if len(parts[2]) > 0 {
		j.Result = bytes.Clone(parts[2])
	}
	return nil
}
