package bolt

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"time"

	"github.com/earshot-dev/earshot/store"
	bolt "go.etcd.io/bbolt"
)

// The audit trail: bucketAudit maps each entry's Seq (8 bytes big-endian,
// so keys sort in sequence order) to its JSON; bucketAuditMeta keeps the
// anchor (keyAuditAnchor: Seq as 8 bytes, then the Hash) once ExpireAudit
// has removed an entry. bbolt has one writer at a time, so appends are
// serialised by its transactions; the head is the last key.
var (
	bucketAudit     = []byte("audit")      // seq → AuditEntry JSON
	bucketAuditMeta = []byte("audit_meta") // "anchor" → seq, hash
	keyAuditAnchor  = []byte("anchor")
)

// createAuditBuckets is schema version 2.
func createAuditBuckets(tx *bolt.Tx) error {
	for _, name := range [][]byte{bucketAudit, bucketAuditMeta} {
		if _, err := tx.CreateBucketIfNotExists(name); err != nil {
			return fmt.Errorf("create bucket %s: %w", name, err)
		}
	}
	return nil
}

func seqKey(seq uint64) []byte { return binary.BigEndian.AppendUint64(nil, seq) }

// AppendAudit chains es after the head and stores them in one
// transaction (store.Store.AppendAudit).
func (db *DB) AppendAudit(es ...*store.AuditEntry) error {
	for _, e := range es {
		if err := store.PrepareAudit(e); err != nil {
			return fmt.Errorf("store: append audit: %w", err)
		}
	}
	err := db.update(func(tx *bolt.Tx) error {
		b := tx.Bucket(bucketAudit)
		// Keys only ever grow: full pages, not bbolt's half-full default
		// (about 0.45 of the bytes an entry takes on disk, measured by
		// BenchmarkAuditAppend).
		b.FillPercent = 0.95
		seq, hash, err := auditHead(tx)
		if err != nil {
			return err
		}
		for _, e := range es {
			e.Chain(seq, hash)
			v, err := json.Marshal(e)
			if err != nil {
				return fmt.Errorf("audit entry: %v: %w", err, store.ErrInvalid)
			}
			if err := b.Put(seqKey(e.Seq), v); err != nil {
				return err
			}
			seq, hash = e.Seq, e.Hash
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("store: append audit: %w", err)
	}
	return nil
}

// auditHead is the last entry's Seq and Hash, or the anchor's when no
// entry is kept.
func auditHead(tx *bolt.Tx) (uint64, []byte, error) {
	k, v := tx.Bucket(bucketAudit).Cursor().Last()
	if k == nil {
		a, err := auditAnchor(tx)
		return a.Seq, a.Hash, err
	}
	e, err := decodeAudit(k, v)
	if err != nil {
		return 0, nil, err
	}
	return e.Seq, e.Hash, nil
}

// decodeAudit decodes the entry stored under k; one that does not decode,
// or whose Seq is not its key's, is ErrCorrupt naming the key's Seq.
func decodeAudit(k, v []byte) (*store.AuditEntry, error) {
	if len(k) != 8 {
		return nil, fmt.Errorf("audit key %x: %w", k, store.ErrCorrupt)
	}
	seq := binary.BigEndian.Uint64(k)
	e := new(store.AuditEntry)
	if err := json.Unmarshal(v, e); err != nil {
		return nil, fmt.Errorf("audit entry %d: %w: %v", seq, store.ErrCorrupt, err)
	}
	if e.Seq != seq {
		return nil, fmt.Errorf("audit entry %d holds seq %d: %w", seq, e.Seq, store.ErrCorrupt)
	}
	return e, nil
}

func auditAnchor(tx *bolt.Tx) (store.AuditAnchor, error) {
	v := tx.Bucket(bucketAuditMeta).Get(keyAuditAnchor)
	if v == nil {
		return store.AuditAnchor{}, nil
	}
	if len(v) < 8 {
		return store.AuditAnchor{}, fmt.Errorf("audit anchor of %d bytes: %w", len(v), store.ErrCorrupt)
	}
	return store.AuditAnchor{Seq: binary.BigEndian.Uint64(v), Hash: bytes.Clone(v[8:])}, nil
}

// AuditAnchor returns where the kept chain starts.
func (db *DB) AuditAnchor() (a store.AuditAnchor, err error) {
	err = db.bolt.View(func(tx *bolt.Tx) error {
		a, err = auditAnchor(tx)
		return err
	})
	if err != nil {
		return a, fmt.Errorf("store: audit anchor: %w", err)
	}
	return a, nil
}

// ListAudit returns the entries q selects. Entries have no index but their
// Seq: a filter reads the entries in order (newest first when q.Newest)
// until the page is full.
func (db *DB) ListAudit(q store.AuditQuery) ([]*store.AuditEntry, error) {
	if err := store.CheckAuditQuery(q); err != nil {
		return nil, fmt.Errorf("store: list audit: %w", err)
	}
	var out []*store.AuditEntry
	err := db.bolt.View(func(tx *bolt.Tx) error {
		c := tx.Bucket(bucketAudit).Cursor()
		first, next := c.First, c.Next
		if q.Newest {
			first, next = c.Last, c.Prev
		} else if q.AfterSeq > 0 {
			first = func() ([]byte, []byte) { return c.Seek(seqKey(q.AfterSeq + 1)) }
		}
		skip := q.Offset
		for k, v := first(); k != nil && len(out) < q.Limit; k, v = next() {
			e, err := decodeAudit(k, v)
			if err != nil {
				return err
			}
			if !q.Matches(e) {
				if q.Newest && e.Seq <= q.AfterSeq {
					break
				}
				continue
			}
			if skip > 0 {
				skip--
				continue
			}
			out = append(out, e)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("store: list audit: %w", err)
	}
	return out, nil
}

// ExpireAudit removes up to limit of the oldest entries older than before
// or beyond the newest maxEntries, in one transaction, and anchors the
// chain at the last one removed. Seqs have no gap, so the count kept is
// the last Seq minus the first plus one.
func (db *DB) ExpireAudit(before time.Time, maxEntries, limit int) (int, error) {
	if limit <= 0 || maxEntries < 0 {
		return 0, fmt.Errorf("store: expire audit: limit %d max entries %d: %w", limit, maxEntries, store.ErrInvalid)
	}
	n := 0
	err := db.update(func(tx *bolt.Tx) error {
		b := tx.Bucket(bucketAudit)
		c := b.Cursor()
		lastK, _ := c.Last()
		if lastK == nil {
			return nil
		}
		last := binary.BigEndian.Uint64(lastK)
		var anchor *store.AuditEntry
		for k, v := c.First(); k != nil && n < limit; k, v = c.Next() {
			e, err := decodeAudit(k, v)
			if err != nil {
				return err
			}
			over := maxEntries > 0 && last-e.Seq+1 > uint64(maxEntries)
			if !over && !e.At.Before(before) {
				break
			}
			anchor = e
			n++
		}
		if anchor == nil {
			return nil
		}
		for k, _ := c.First(); k != nil && binary.BigEndian.Uint64(k) <= anchor.Seq; k, _ = c.First() {
			if err := c.Delete(); err != nil {
				return err
			}
		}
		return tx.Bucket(bucketAuditMeta).Put(keyAuditAnchor, append(seqKey(anchor.Seq), anchor.Hash...))
	})
	if err != nil {
		return 0, fmt.Errorf("store: expire audit: %w", err)
	}
	return n, nil
}
