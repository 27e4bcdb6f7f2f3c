package sealed

import (
	"time"

	"github.com/earshot-dev/earshot/store"
)

// The audit trail passes through unsealed: its entries hold ids, actions,
// key ids and addresses only (store.AuditEntry), never a transcript,
// metadata or a secret, and its hash chain must read the same on the
// backend as it was written, for `earshotd audit verify` with or without
// the data key.

func (s *Store) AppendAudit(es ...*store.AuditEntry) error { return s.inner.AppendAudit(es...) }

func (s *Store) ListAudit(q store.AuditQuery) ([]*store.AuditEntry, error) {
	return s.inner.ListAudit(q)
}

func (s *Store) AuditAnchor() (store.AuditAnchor, error) { return s.inner.AuditAnchor() }

func (s *Store) ExpireAudit(before time.Time, maxEntries, limit int) (int, error) {
	return s.inner.ExpireAudit(before, maxEntries, limit)
}
