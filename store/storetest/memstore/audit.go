package memstore

import (
	"bytes"
	"fmt"
	"slices"
	"time"

	"github.com/earshot-dev/earshot/store"
)

// AppendAudit is store.DB.AppendAudit: the entries chained after the
// head under mu, which serialises appends as bbolt's writer does.
func (s *Store) AppendAudit(es ...*store.AuditEntry) error {
	for _, e := range es {
		if err := store.PrepareAudit(e); err != nil {
			return fmt.Errorf("memstore: append audit: %w", err)
		}
	}
	if err := s.lock("AppendAudit"); err != nil {
		return err
	}
	defer s.mu.Unlock()
	seq, hash := s.anchor.Seq, s.anchor.Hash
	if n := len(s.audit); n > 0 {
		seq, hash = s.audit[n-1].Seq, s.audit[n-1].Hash
	}
	for _, e := range es {
		e.Chain(seq, hash)
		c := *e
		c.Prev, c.Hash = bytes.Clone(e.Prev), bytes.Clone(e.Hash)
		s.audit = append(s.audit, &c)
		seq, hash = e.Seq, e.Hash
	}
	return nil
}

// ListAudit is store.DB.ListAudit.
func (s *Store) ListAudit(q store.AuditQuery) ([]*store.AuditEntry, error) {
	if err := store.CheckAuditQuery(q); err != nil {
		return nil, fmt.Errorf("memstore: list audit: %w", err)
	}
	if err := s.lock("ListAudit"); err != nil {
		return nil, err
	}
	defer s.mu.Unlock()
	all := slices.Clone(s.audit)
	if q.Newest {
		slices.Reverse(all)
	}
	var out []*store.AuditEntry
	skip := q.Offset
	for _, e := range all {
		if len(out) == q.Limit {
			break
		}
		if !q.Matches(e) {
			continue
		}
		if skip > 0 {
			skip--
			continue
		}
		c := *e
		c.Prev, c.Hash = bytes.Clone(e.Prev), bytes.Clone(e.Hash)
		out = append(out, &c)
	}
	return out, nil
}

// AuditAnchor is store.DB.AuditAnchor.
func (s *Store) AuditAnchor() (store.AuditAnchor, error) {
	if err := s.lock("AuditAnchor"); err != nil {
		return store.AuditAnchor{}, err
	}
	defer s.mu.Unlock()
	return store.AuditAnchor{Seq: s.anchor.Seq, Hash: bytes.Clone(s.anchor.Hash)}, nil
}

// ExpireAudit is store.DB.ExpireAudit: a prefix of the oldest entries.
func (s *Store) ExpireAudit(before time.Time, maxEntries, limit int) (int, error) {
	if limit <= 0 || maxEntries < 0 {
		return 0, fmt.Errorf("memstore: expire audit: limit %d max entries %d: %w", limit, maxEntries, store.ErrInvalid)
	}
	if err := s.lock("ExpireAudit"); err != nil {
		return 0, err
	}
	defer s.mu.Unlock()
	n := 0
	for n < len(s.audit) && n < limit {
		over := maxEntries > 0 && len(s.audit)-n > maxEntries
		if !over && !s.audit[n].At.Before(before) {
			break
		}
		n++
	}
	if n > 0 {
		last := s.audit[n-1]
		s.anchor = store.AuditAnchor{Seq: last.Seq, Hash: bytes.Clone(last.Hash)}
		s.audit = slices.Delete(s.audit, 0, n)
	}
	return n, nil
}
