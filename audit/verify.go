package audit

import (
	"bytes"
	"errors"
	"fmt"

	"github.com/earshot-dev/earshot/store"
)

// Reader is what Verify needs of the store (store.Store has it).
type Reader interface {
	AuditAnchor() (store.AuditAnchor, error)
	ListAudit(q store.AuditQuery) ([]*store.AuditEntry, error)
}

// Report is what Verify checked: the anchor the kept chain starts from,
// the entries it followed and the head (the last entry's Seq and Hash;
// the anchor's with no entry kept). An operator who keeps the head's hash
// elsewhere can tell later that nothing before it was rewritten.
type Report struct {
	Anchor   store.AuditAnchor
	Entries  int
	HeadSeq  uint64
	HeadHash []byte
}

// verifyPage is how many entries Verify reads at a time.
const verifyPage = 5000

// Verify walks the kept chain from its anchor, entry by entry, and returns
// an error wrapping store.ErrAuditBroken that names the first entry that
// does not follow the one before it (edited, removed or reordered), or the
// store's error (an entry that no longer decodes is store.ErrCorrupt,
// named by its Seq). Entries appended while it runs are checked too; if
// the trail's retention moved the anchor meanwhile, it starts again (at
// most three times).
func Verify(db Reader) (Report, error) {
	var err error
	for range 3 {
		var r Report
		r, err = verifyOnce(db)
		if !errors.Is(err, store.ErrAuditBroken) {
			return r, err
		}
		a, aerr := db.AuditAnchor()
		if aerr != nil || a.Seq == r.Anchor.Seq && bytes.Equal(a.Hash, r.Anchor.Hash) {
			return r, err
		}
	}
	return Report{}, err
}

func verifyOnce(db Reader) (Report, error) {
	a, err := db.AuditAnchor()
	if err != nil {
		return Report{}, err
	}
	r := Report{Anchor: a, HeadSeq: a.Seq, HeadHash: a.Hash}
	for {
		es, err := db.ListAudit(store.AuditQuery{AfterSeq: r.HeadSeq, Limit: verifyPage})
		if err != nil {
			return r, err
		}
		for _, e := range es {
			if err := store.VerifyAuditLink(r.HeadSeq, r.HeadHash, e); err != nil {
				return r, &BrokenError{Seq: brokenAt(r.HeadSeq, e), Err: err}
			}
			r.Entries++
			r.HeadSeq, r.HeadHash = e.Seq, e.Hash
		}
		if len(es) < verifyPage {
			return r, nil
		}
	}
}

// brokenAt is the Seq to name when e does not follow prev: the first one
// missing when entries were removed, else e's own.
func brokenAt(prev uint64, e *store.AuditEntry) uint64 {
	if e.Seq > prev+1 {
		return prev + 1
	}
	return e.Seq
}

// BrokenError is Verify's error for a chain that does not hold: Seq is
// the first entry that is missing or does not match.
type BrokenError struct {
	Seq uint64
	Err error // wraps store.ErrAuditBroken
}

func (e *BrokenError) Error() string {
	return fmt.Sprintf("audit: chain broken at entry %d: %v", e.Seq, e.Err)
}

func (e *BrokenError) Unwrap() error { return e.Err }
