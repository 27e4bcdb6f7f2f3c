package quota

import (
	"bytes"
	"errors"
	"io"
	"log/slog"
	"testing"

	"github.com/earshot-dev/earshot/store/storetest"
)

// TestStorageQuota: bytes being written count against the quota as they
// pass, so two writes of one account cannot together pass it; a failed
// write gives its bytes back; other accounts are not charged.
func TestStorageQuota(t *testing.T) {
	db := storetest.Open(t)
	q := New(1000, db, slog.New(slog.DiscardHandler))
	read := func(r *Reader, n int) error {
		_, err := io.CopyN(io.Discard, r, int64(n))
		return err
	}
	a := q.Reader("acme", bytes.NewReader(make([]byte, 600)))
	if err := read(a, 600); err != nil {
		t.Fatalf("first write within the quota: %v", err)
	}
	b := q.Reader("acme", bytes.NewReader(make([]byte, 600)))
	if err := read(b, 600); !errors.Is(err, ErrExceeded) {
		t.Fatalf("second concurrent write: %v, want ErrExceeded", err)
	}
	b.Settle(ErrExceeded)
	o := q.Reader("globex", bytes.NewReader(make([]byte, 900)))
	if err := read(o, 900); err != nil {
		t.Errorf("another account: %v", err)
	}
	a.Settle(errors.New("disk full")) // a's bytes did not stay
	c := q.Reader("acme", bytes.NewReader(make([]byte, 1000)))
	if err := read(c, 1000); err != nil {
		t.Errorf("after a failed write gave its room back: %v", err)
	}
	c.Settle(nil)
	d := q.Reader("acme", bytes.NewReader(make([]byte, 1)))
	if err := read(d, 1); !errors.Is(err, ErrExceeded) {
		t.Errorf("one byte past a full quota: %v, want ErrExceeded", err)
	}
	if err := read(New(0, db, nil).Reader("acme", bytes.NewReader(make([]byte, 5000))), 5000); err != nil {
		t.Errorf("limit 0 is unlimited: %v", err)
	}
}
