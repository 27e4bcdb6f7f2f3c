package postgres

import (
	"errors"
	"fmt"

	"github.com/earshot-dev/earshot/store"
)

// maxCheckProblems bounds how many inconsistencies Check reports.
const maxCheckProblems = 50

// Check verifies that every job's columns agree with its JSON head (id,
// account, kind, status, creation time, queue membership, blob) and that
// the head is a valid job, that every delivery's columns agree with its
// record, and that every blob content's chunks are numbered from 0 without
// gaps, add up to its size, and have a name. Each problem is joined with
// store.ErrCorrupt. It reads every row: for tests and diagnostics. After
// Close it returns store.ErrClosed.
func (db *DB) Check() error {
	if db.isClosed() {
		return store.ErrClosed
	}
	var problems []error
	report := func(format string, args ...any) {
		if len(problems) < maxCheckProblems {
			problems = append(problems, fmt.Errorf("%w: "+format, append([]any{store.ErrCorrupt}, args...)...))
		}
	}
	ctx, cancel := db.ctx()
	defer cancel()
	rows, err := db.pool.Query(ctx, "SELECT id, account, kind, status, created_ns, queued, awaiting, blob, "+jobColumns+" FROM jobs")
	if err != nil {
		return fmt.Errorf("store: check: %w", wrap(err))
	}
	for rows.Next() {
		var id, account, kind, status, blob string
		var created int64
		var queued, awaiting bool
		var head, params, result []byte
		if err := rows.Scan(&id, &account, &kind, &status, &created, &queued, &awaiting, &blob, &head, &params, &result); err != nil {
			rows.Close()
			return fmt.Errorf("store: check: %w", wrap(err))
		}
		j, err := decodeJob(head, params, result)
		if err != nil {
			report("job %s: %v", id, err)
			continue
		}
		if err := j.Validate(); err != nil {
			report("%v", err)
			continue
		}
		if j.ID != id || j.Account != account || string(j.Kind) != kind || string(j.Status) != status ||
			ns(j.CreatedAt) != created || j.InQueue() != queued || j.AwaitingAudio != awaiting || j.Blob != blob {
			report("job %s: columns (%s %s %s %s queued %t) disagree with its record (%s %s %s %s queued %t)",
				id, account, kind, status, blob, queued, j.Account, j.Kind, j.Status, j.Blob, j.InQueue())
		}
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return fmt.Errorf("store: check: %w", wrap(err))
	}

	rows, err = db.pool.Query(ctx, "SELECT id, job_id, next_ns, record FROM deliveries")
	if err != nil {
		return fmt.Errorf("store: check: %w", wrap(err))
	}
	for rows.Next() {
		var id, jobID string
		var next int64
		var v []byte
		if err := rows.Scan(&id, &jobID, &next, &v); err != nil {
			rows.Close()
			return fmt.Errorf("store: check: %w", wrap(err))
		}
		d, err := decodeDelivery(v)
		if err != nil {
			report("delivery %s: %v", id, err)
			continue
		}
		if d.ID != id || d.JobID != jobID || ns(d.NextAttempt) != next {
			report("delivery %s: columns disagree with its record", id)
		}
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return fmt.Errorf("store: check: %w", wrap(err))
	}

	rows, err = db.pool.Query(ctx, `SELECT c.id, c.size, coalesce(sum(length(k.data)), 0), count(k.seq), coalesce(max(k.seq), -1),
			EXISTS (SELECT 1 FROM blobs b WHERE b.content_id = c.id)
		FROM blob_contents c LEFT JOIN blob_chunks k ON k.content_id = c.id GROUP BY c.id`)
	if err != nil {
		return fmt.Errorf("store: check: %w", wrap(err))
	}
	for rows.Next() {
		var id, size, sum, count, maxSeq int64
		var named bool
		if err := rows.Scan(&id, &size, &sum, &count, &maxSeq, &named); err != nil {
			rows.Close()
			return fmt.Errorf("store: check: %w", wrap(err))
		}
		if sum != size || maxSeq != count-1 {
			report("blob content %d: size %d, %d bytes in %d chunks up to %d", id, size, sum, count, maxSeq)
		}
		if !named {
			report("blob content %d has no name", id)
		}
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return fmt.Errorf("store: check: %w", wrap(err))
	}
	return errors.Join(problems...)
}
