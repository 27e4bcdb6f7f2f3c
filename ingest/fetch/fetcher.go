package fetch

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/earshot-dev/earshot/errcode"
	"github.com/earshot-dev/earshot/ingest/media"
	"github.com/earshot-dev/earshot/store"
)

// Blobs is where downloads are written (store.Store has it).
type Blobs interface {
	WriteBlob(name string, r io.Reader, limit int64) (int64, error)
}

// Quota charges a download to its account's storage
// (limits.max_account_bytes).
type Quota interface {
	// Charge passes r through, charging what is read to account; a read
	// past the account's limit fails with an error of kind
	// errcode.ErrQuota. settle ends the write: its bytes stay charged when
	// writeErr is nil.
	Charge(account string, r io.Reader) (charged io.Reader, settle func(writeErr error))
}

// Fetcher downloads the audio_url of queued pre-recorded jobs beside the
// workers, so a slow remote server holds a download slot, never a worker or
// a decoder. It runs at most fetch.max_concurrent downloads and at most
// fetch.max_per_account of one account, taking turns between accounts. A
// job waits out of the queue (store.Job.AwaitingAudio) until its audio is
// on disk; then a worker can claim it.
type Fetcher struct {
	cfg   Config
	blobs Blobs
	quota Quota
	wake  chan struct{} // cap 1: a job was added or a download ended

	mu      sync.Mutex
	waiting map[string][]string // guarded by mu: account → job ids to fetch, oldest first
	known   map[string]bool     // guarded by mu: ids waiting or being fetched
	running map[string]int      // guarded by mu: account → downloads running
	total   int                 // guarded by mu: downloads running
	last    string              // guarded by mu: the account whose download started last
}

// New builds a Fetcher writing into blobs, charging quota; it starts
// nothing. cfg must have passed Validate, with MaxBytes and Timeout set.
func New(cfg Config, blobs Blobs, quota Quota) *Fetcher {
	return &Fetcher{
		cfg: cfg, blobs: blobs, quota: quota, wake: make(chan struct{}, 1),
		waiting: map[string][]string{}, known: map[string]bool{}, running: map[string]int{},
	}
}

// Add puts a job in line for download; a job already in line is ignored.
func (f *Fetcher) Add(account, id string) {
	f.mu.Lock()
	if !f.known[id] {
		f.known[id] = true
		f.waiting[account] = append(f.waiting[account], id)
	}
	f.mu.Unlock()
	f.signal()
}

func (f *Fetcher) signal() {
	select {
	case f.wake <- struct{}{}:
	default:
	}
}

// Run starts job(ctx, id) for the jobs added, in download slots as they
// free up, until ctx ends; it returns nil once the running ones have
// returned (job must stop when its ctx ends: those jobs stay queued and are
// fetched after the restart).
func (f *Fetcher) Run(ctx context.Context, job func(ctx context.Context, id string)) error {
	var wg sync.WaitGroup
	defer wg.Wait()
	for {
		for {
			account, id, ok := f.next()
			if !ok {
				break
			}
			wg.Go(func() {
				defer f.done(account, id)
				job(ctx, id)
			})
		}
		select {
		case <-ctx.Done():
			return nil
		case <-f.wake:
		}
	}
}

// next picks the download to start, taking turns between the accounts
// under their bound, and counts it as running.
func (f *Fetcher) next() (account, id string, ok bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.total >= f.cfg.MaxConcurrent {
		return "", "", false
	}
	var ready []string
	for a := range f.waiting {
		if f.running[a] < f.cfg.MaxPerAccount {
			ready = append(ready, a)
		}
	}
	if len(ready) == 0 {
		return "", "", false
	}
	slices.Sort(ready)
	account = ready[0]
	if i, _ := slices.BinarySearch(ready, f.last+"\x00"); i < len(ready) {
		account = ready[i] // the first account after the last one served
	}
	id = f.waiting[account][0]
	if f.waiting[account] = f.waiting[account][1:]; len(f.waiting[account]) == 0 {
		delete(f.waiting, account)
	}
	f.running[account]++
	f.total++
	f.last = account
	return account, id, true
}

// done releases a download's slot.
func (f *Fetcher) done(account, id string) {
	f.mu.Lock()
	if f.running[account]--; f.running[account] <= 0 {
		delete(f.running, account)
	}
	f.total--
	delete(f.known, id)
	f.mu.Unlock()
	f.signal()
}

// Download copies the audio_url rawURL into the blob named blob, bounded
// in size, time and rate, and in account's storage quota. It returns the
// file's name (from the server's Content-Disposition, else the final URL
// path's last element, "" when neither names one) within
// store.MaxFilenameBytes (storedName). Its errors
// are errcode errors for the client: ErrFetch, ErrTooLarge, ErrQuota, or
// the store's ErrNoSpace.
func (f *Fetcher) Download(ctx context.Context, account, rawURL, blob string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, f.cfg.Timeout)
	defer cancel()
	ctx, rate := f.guardRate(ctx)
	defer rate.stop()
	rem, err := media.Fetch(ctx, rawURL, &media.FetchOptions{MaxBytes: f.cfg.MaxBytes, Timeout: f.cfg.Timeout, Deny: f.cfg.Deny})
	switch {
	case err != nil && rate.tripped():
		return "", rate.err()
	case err != nil:
		return "", f.classify(err)
	}
	defer rem.Body.Close()
	qr, settle := f.quota.Charge(account, rate.count(rem.Body))
	_, err = f.blobs.WriteBlob(blob, qr, f.cfg.MaxBytes)
	settle(err)
	if err != nil {
		if rate.tripped() {
			return "", rate.err()
		}
		if errors.Is(err, store.ErrNoSpace) || errors.Is(err, errcode.ErrQuota) {
			return "", err
		}
		return "", f.classify(err)
	}
	return storedName(rem.Filename), nil
}

// The client-facing reasons of a failed audio_url, one per class. The
// cause (address, port, status, resolver) goes to the log only: messages
// that told "connection refused" from "status 401" would map the network
// behind the appliance for whoever posts jobs.
const (
	reasonUnreachable = "audio_url: unreachable"
	reasonRefused     = "audio_url: refused by the remote server"
	reasonTooLarge    = "audio_url: larger than the limit of %d bytes"
)

// classify turns a failed download of an audio_url into its client-facing
// error by its sentinel. A denied destination reads as unreachable, so the
// deny list is no oracle for what a name resolves to.
func (f *Fetcher) classify(err error) error {
	switch {
	case errors.Is(err, media.ErrTooLarge), errors.Is(err, store.ErrTooLarge):
		return &errcode.Error{Kind: errcode.ErrTooLarge, Msg: fmt.Sprintf(reasonTooLarge, f.cfg.MaxBytes), Cause: err}
	case errors.Is(err, media.ErrStatus):
		return &errcode.Error{Kind: errcode.ErrFetch, Msg: reasonRefused, Cause: err}
	}
	return &errcode.Error{Kind: errcode.ErrFetch, Msg: reasonUnreachable, Cause: err}
}

// rateGrace is how long a download runs before
// fetch.min_bytes_per_second applies (connecting, headers, a slow start).
const rateGrace = 10 * time.Second

// rateGuard ends a download whose average rate since rateGrace falls below
// a minimum, by cancelling its context.
type rateGuard struct {
	min   int64
	n     atomic.Int64 // bytes read
	slow  atomic.Bool
	close context.CancelFunc
	wg    sync.WaitGroup // the ticker goroutine
}

// guardRate returns ctx bound by the rate guard of fetch.min_bytes_per_second
// (none when it is 0). Call stop when the download is over.
func (f *Fetcher) guardRate(ctx context.Context) (context.Context, *rateGuard) {
	g := &rateGuard{min: *f.cfg.MinBytesPerSecond}
	ctx, cancel := context.WithCancelCause(ctx)
	g.close = func() { cancel(nil) }
	if g.min <= 0 {
		return ctx, g
	}
	start := time.Now()
	g.wg.Go(func() {
		t := time.NewTicker(time.Second)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case now := <-t.C:
				past := now.Sub(start) - rateGrace
				if past > 0 && float64(g.n.Load()) < float64(g.min)*past.Seconds() {
					g.slow.Store(true)
					cancel(g.err())
					return
				}
			}
		}
	})
	return ctx, g
}

// stop ends the guard and waits for its ticker.
func (g *rateGuard) stop() {
	g.close()
	g.wg.Wait()
}

// tripped reports whether the guard ended the download.
func (g *rateGuard) tripped() bool { return g.slow.Load() }

func (g *rateGuard) err() error {
	return &errcode.Error{Kind: errcode.ErrFetch, Msg: fmt.Sprintf("audio_url: download slower than %d bytes/s (fetch.min_bytes_per_second)", g.min)}
}

// count passes r through, counting its bytes for the guard.
func (g *rateGuard) count(r io.Reader) io.Reader { return countingReader{r, &g.n} }

type countingReader struct {
	r io.Reader
	n *atomic.Int64
}

func (c countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n.Add(int64(n))
	return n, err
}
