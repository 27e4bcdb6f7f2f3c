package postgres

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/earshot-dev/earshot/store"
)

// ListJobs returns the jobs matching q, newest first (CreatedAt descending,
// then ID descending), as bolt.DB.ListJobs does.
func (db *DB) ListJobs(q store.ListQuery) ([]*store.Job, error) {
	return store.CollectJobs(q, db.EachJob)
}

// EachJob calls fn with each job matching q, in ListJobs' order, while one
// query streams them (one decoded job held at a time), until fn returns
// false or Limit jobs were visited. fn must be quick and must not call the
// store. Status and time bounds, Offset and Limit are the query's (the
// jobs_list index); a Metadata filter is applied here, row by row, with the
// embedded store's rules (store.MetadataMatches), skipping Offset matches.
func (db *DB) EachJob(q store.ListQuery, fn func(*store.Job) bool) error {
	if err := q.Check(); err != nil {
		return fmt.Errorf("store: %w", err)
	}
	var sb strings.Builder
	args := []any{q.Account, string(q.Kind)}
	arg := func(v any) string {
		args = append(args, v)
		return "$" + strconv.Itoa(len(args))
	}
	sb.WriteString("SELECT " + jobColumns + " FROM jobs WHERE account = $1 AND kind = $2")
	if len(q.Statuses) > 0 {
		st := make([]string, len(q.Statuses))
		for i, s := range q.Statuses {
			st[i] = string(s)
		}
		sb.WriteString(" AND status = ANY(" + arg(st) + ")")
	}
	if !q.After.IsZero() {
		sb.WriteString(" AND created_ns > " + arg(ns(q.After)))
	}
	if !q.Before.IsZero() {
		b := arg(ns(q.Before))
		if q.BeforeID != "" {
			sb.WriteString(" AND (created_ns < " + b + " OR (created_ns = " + b + " AND id < " + arg(q.BeforeID) + "))")
		} else {
			sb.WriteString(" AND created_ns < " + b)
		}
	}
	sb.WriteString(" ORDER BY created_ns DESC, id DESC")
	filter := len(q.Metadata) > 0
	if !filter {
		if q.Offset > 0 {
			sb.WriteString(" OFFSET " + arg(q.Offset))
		}
		if q.Limit > 0 {
			sb.WriteString(" LIMIT " + arg(q.Limit))
		}
	}
	ctx, cancel := db.ctx()
	defer cancel()
	rows, err := db.pool.Query(ctx, sb.String(), args...)
	if err != nil {
		return fmt.Errorf("store: list jobs: %w", wrap(err))
	}
	defer rows.Close()
	skip, n := q.Offset, 0
	for rows.Next() {
		j, err := scanJob(rows)
		if err != nil {
			return fmt.Errorf("store: list jobs: %w", wrap(err))
		}
		if filter {
			if !store.MetadataMatches(j.CustomMetadata, q.Metadata) {
				continue
			}
			if skip > 0 {
				skip--
				continue
			}
		}
		n++
		if !fn(j) || (q.Limit > 0 && n == q.Limit) {
			return nil
		}
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("store: list jobs: %w", wrap(err))
	}
	return nil
}

// CountJobs returns how many jobs of kind have status, across all accounts
// (an empty status counts every status), from the jobs_status index.
func (db *DB) CountJobs(kind store.Kind, status store.Status) (int, error) {
	ctx, cancel := db.ctx()
	defer cancel()
	var n int
	var err error
	if status == "" {
		err = db.pool.QueryRow(ctx, "SELECT count(*) FROM jobs WHERE kind = $1", string(kind)).Scan(&n)
	} else {
		err = db.pool.QueryRow(ctx, "SELECT count(*) FROM jobs WHERE kind = $1 AND status = $2", string(kind), string(status)).Scan(&n)
	}
	if err != nil {
		return 0, fmt.Errorf("store: count jobs: %w", wrap(err))
	}
	return n, nil
}
