package quota

import (
	"fmt"
	"io"
	"log/slog"
	"sync"
	"time"
)

// How fresh an account's counted usage must be. A write that would pass
// the quota recounts (at most every quotaMinRecount) before it is refused,
// so deleted files are seen at once; otherwise counts are redone every
// quotaRecount to catch what this process did not write itself.
const (
	quotaRecount    = time.Minute
	quotaMinRecount = 5 * time.Second
)

// Counter is what Quota reads of the store: the bytes an account keeps
// (store.Store.AccountBytes).
type Counter interface {
	AccountBytes(account string) (int64, error)
}

// Quota bounds the bytes each account keeps on disk (see the package
// comment). Its methods may be called from any goroutine.
type Quota struct {
	limit int64 // bytes; 0 is unlimited
	db    Counter
	log   *slog.Logger

	mu       sync.Mutex
	accounts map[string]*accountUsage // guarded by mu: accounts that wrote since start (accounts are operator-made keys)
}

// accountUsage is one account's counted bytes.
type accountUsage struct {
	stored   int64     // on disk at the last count, plus writes finished since
	inflight int64     // bytes of writes under way
	counted  time.Time // when stored was counted from the store; zero: stale
}

// New returns the quota of limit bytes per account (0 is unlimited),
// counted from db. It starts nothing.
func New(limit int64, db Counter, log *slog.Logger) *Quota {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Quota{limit: limit, db: db, log: log, accounts: map[string]*accountUsage{}}
}

// Limit is the bytes each account may keep; 0 is unlimited.
func (q *Quota) Limit() int64 { return q.limit }

// countLocked recounts u from the store. On failure the old count stays.
func (q *Quota) countLocked(account string, u *accountUsage) {
	n, err := q.db.AccountBytes(account)
	if err != nil {
		q.log.Error("count account storage", "account_id", account, "error", err)
		return
	}
	u.stored, u.counted = n, time.Now()
}

// charge reserves n more bytes for account, or returns ErrExceeded.
func (q *Quota) charge(account string, n int64) error {
	q.mu.Lock()
	defer q.mu.Unlock()
	u, err := q.roomLocked(account, n)
	if err != nil {
		return err
	}
	u.inflight += n
	return nil
}

// Admit refuses a new live recording to an account already at its quota
// with ErrExceeded (a recording is not cut once started).
func (q *Quota) Admit(account string) error {
	if q == nil || q.limit == 0 {
		return nil
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	_, err := q.roomLocked(account, 1)
	return err
}

// roomLocked returns account's usage if n more bytes fit, else ErrExceeded,
// counting from the store when the count is stale.
func (q *Quota) roomLocked(account string, n int64) (*accountUsage, error) {
	u := q.accounts[account]
	if u == nil {
		u = &accountUsage{}
		q.accounts[account] = u
	}
	if time.Since(u.counted) > quotaRecount {
		q.countLocked(account, u)
	}
	if u.stored+u.inflight+n > q.limit && time.Since(u.counted) > quotaMinRecount {
		q.countLocked(account, u)
	}
	if used := u.stored + u.inflight; used+n > q.limit {
		return nil, fmt.Errorf("account %s: %d bytes stored or being written, %d more > limit %d: %w", account, used, n, q.limit, ErrExceeded)
	}
	return u, nil
}

// settle ends a write of n charged bytes; kept says whether they stayed
// on disk.
func (q *Quota) settle(account string, n int64, kept bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	u := q.accounts[account]
	if u == nil {
		return
	}
	u.inflight -= n
	if kept {
		u.stored += n
	}
}

// Forget marks account's count stale after something of it was deleted,
// so the next write recounts.
func (q *Quota) Forget(account string) {
	if q == nil || q.limit == 0 {
		return
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	if u := q.accounts[account]; u != nil {
		u.counted = time.Time{}
	}
}

// Reader returns r charging every byte read to account; Settle must
// follow the write. With no limit it charges nothing.
func (q *Quota) Reader(account string, r io.Reader) *Reader {
	return &Reader{q: q, account: account, r: r}
}

// Reader charges what passes through it to its account; a read past the
// quota fails with ErrExceeded (so the store removes the partial file).
type Reader struct {
	q       *Quota
	account string
	r       io.Reader
	charged int64
}

// Read reads from the wrapped reader, charging what it read; past the
// quota it returns ErrExceeded instead.
func (r *Reader) Read(p []byte) (int, error) {
	n, err := r.r.Read(p)
	if n > 0 && r.q != nil && r.q.limit > 0 {
		if cerr := r.q.charge(r.account, int64(n)); cerr != nil {
			return 0, cerr
		}
		r.charged += int64(n)
	}
	return n, err
}

// Settle ends the write: its bytes stay charged when writeErr is nil and
// are released otherwise.
func (r *Reader) Settle(writeErr error) {
	if r.q != nil && r.charged > 0 {
		r.q.settle(r.account, r.charged, writeErr == nil)
		r.charged = 0
	}
}
