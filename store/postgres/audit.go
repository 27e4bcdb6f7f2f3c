package postgres

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/earshot-dev/earshot/store"
)

// The audit trail (migrations/0004_audit.sql): the audit table, and
// audit_chain's one row, the head and the anchor, which every append and
// expiry locks, so the nodes sharing the database keep one chain.

// AppendAudit chains es after the head and stores them in one transaction
// holding audit_chain's row lock (store.Store.AppendAudit).
func (db *DB) AppendAudit(es ...*store.AuditEntry) error {
	for _, e := range es {
		if err := store.PrepareAudit(e); err != nil {
			return fmt.Errorf("store: append audit: %w", err)
		}
	}
	if len(es) == 0 {
		return nil
	}
	err := db.update(func(ctx context.Context, tx pgx.Tx) error {
		var seq int64
		var hash []byte
		if err := tx.QueryRow(ctx, "SELECT head_seq, head_hash FROM audit_chain WHERE id = 1 FOR UPDATE").Scan(&seq, &hash); err != nil {
			return err
		}
		rows := make([][]any, 0, len(es))
		for _, e := range es {
			e.Chain(uint64(seq), nilIfEmpty(hash))
			rows = append(rows, []any{int64(e.Seq), ns(e.At), e.KeyID, e.Account, e.Source, string(e.Action), e.Object,
				e.Status, nonNil(e.Prev), e.Hash})
			seq, hash = int64(e.Seq), e.Hash
		}
		if _, err := tx.CopyFrom(ctx, pgx.Identifier{"audit"},
			[]string{"seq", "at_ns", "key_id", "account", "source", "action", "object", "status", "prev", "hash"},
			pgx.CopyFromRows(rows)); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, "UPDATE audit_chain SET head_seq = $1, head_hash = $2 WHERE id = 1", seq, hash)
		return err
	})
	if err != nil {
		return fmt.Errorf("store: append audit: %w", wrap(err))
	}
	return nil
}

// nilIfEmpty is the chain's "no hash yet" as the entries carry it.
func nilIfEmpty(b []byte) []byte {
	if len(b) == 0 {
		return nil
	}
	return b
}

// nonNil is b as a NOT NULL bytea column takes it.
func nonNil(b []byte) []byte {
	if b == nil {
		return []byte{}
	}
	return b
}

// AuditAnchor returns where the kept chain starts.
func (db *DB) AuditAnchor() (store.AuditAnchor, error) {
	ctx, cancel := db.ctx()
	defer cancel()
	var a store.AuditAnchor
	var seq int64
	if err := db.pool.QueryRow(ctx, "SELECT anchor_seq, anchor_hash FROM audit_chain WHERE id = 1").Scan(&seq, &a.Hash); err != nil {
		return a, fmt.Errorf("store: audit anchor: %w", wrap(err))
	}
	a.Seq, a.Hash = uint64(seq), nilIfEmpty(a.Hash)
	return a, nil
}

const auditColumns = "seq, at_ns, key_id, account, source, action, object, status, prev, hash"

func scanAudit(r pgx.Row) (*store.AuditEntry, error) {
	e := new(store.AuditEntry)
	var seq, at int64
	var action string
	if err := r.Scan(&seq, &at, &e.KeyID, &e.Account, &e.Source, &action, &e.Object, &e.Status, &e.Prev, &e.Hash); err != nil {
		return nil, err
	}
	e.Seq, e.At, e.Action, e.Prev = uint64(seq), fromNS(at), store.AuditAction(action), nilIfEmpty(e.Prev)
	return e, nil
}

// ListAudit returns the entries q selects, filtered and paged in SQL.
func (db *DB) ListAudit(q store.AuditQuery) ([]*store.AuditEntry, error) {
	if err := store.CheckAuditQuery(q); err != nil {
		return nil, fmt.Errorf("store: list audit: %w", err)
	}
	var where []string
	var args []any
	arg := func(cond string, v any) {
		args = append(args, v)
		where = append(where, strings.ReplaceAll(cond, "?", "$"+strconv.Itoa(len(args))))
	}
	arg("seq > ?", int64(q.AfterSeq))
	if q.Account != "" {
		arg("account = ?", q.Account)
	}
	if q.Object != "" {
		arg("object = ?", q.Object)
	}
	if q.Action != "" {
		arg("action = ?", string(q.Action))
	}
	if !q.Since.IsZero() {
		arg("at_ns >= ?", ns(q.Since))
	}
	if !q.Until.IsZero() {
		arg("at_ns < ?", ns(q.Until))
	}
	order := "seq"
	if q.Newest {
		order = "seq DESC"
	}
	args = append(args, q.Offset, q.Limit)
	sql := fmt.Sprintf("SELECT %s FROM audit WHERE %s ORDER BY %s OFFSET $%d LIMIT $%d",
		auditColumns, strings.Join(where, " AND "), order, len(args)-1, len(args))
	ctx, cancel := db.ctx()
	defer cancel()
	rows, err := db.pool.Query(ctx, sql, args...)
	if err != nil {
		return nil, fmt.Errorf("store: list audit: %w", wrap(err))
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (*store.AuditEntry, error) { return scanAudit(r) })
	if err != nil {
		return nil, fmt.Errorf("store: list audit: %w", wrap(err))
	}
	return out, nil
}

// ExpireAudit removes up to limit of the oldest entries older than before
// or beyond the newest maxEntries, and anchors the chain at the last one
// removed, in one transaction holding audit_chain's row lock.
func (db *DB) ExpireAudit(before time.Time, maxEntries, limit int) (int, error) {
	if limit <= 0 || maxEntries < 0 {
		return 0, fmt.Errorf("store: expire audit: limit %d max entries %d: %w", limit, maxEntries, store.ErrInvalid)
	}
	n := 0
	err := db.update(func(ctx context.Context, tx pgx.Tx) error {
		var head int64
		if err := tx.QueryRow(ctx, "SELECT head_seq FROM audit_chain WHERE id = 1 FOR UPDATE").Scan(&head); err != nil {
			return err
		}
		// Entries with seq <= over are beyond the newest maxEntries.
		over := int64(-1)
		if maxEntries > 0 {
			over = head - int64(maxEntries)
		}
		var last int64
		var hash []byte
		err := tx.QueryRow(ctx, `SELECT seq, hash FROM audit WHERE seq IN (
				SELECT seq FROM audit WHERE seq <= $1 OR at_ns < $2 ORDER BY seq LIMIT $3)
			ORDER BY seq DESC LIMIT 1`, over, ns(before), limit).Scan(&last, &hash)
		if errors.Is(err, pgx.ErrNoRows) {
			return nil
		}
		if err != nil {
			return err
		}
		tag, err := tx.Exec(ctx, "DELETE FROM audit WHERE seq <= $1", last)
		if err != nil {
			return err
		}
		n = int(tag.RowsAffected())
		_, err = tx.Exec(ctx, "UPDATE audit_chain SET anchor_seq = $1, anchor_hash = $2 WHERE id = 1", last, hash)
		return err
	})
	if err != nil {
		return 0, fmt.Errorf("store: expire audit: %w", wrap(err))
	}
	return n, nil
}
