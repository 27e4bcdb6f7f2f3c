package daemon

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/earshot-dev/earshot/params"
	"github.com/earshot-dev/earshot/store"
)

// fetcher downloads the audio_url of queued pre-recorded jobs beside the
// workers, so a slow remote server holds a download slot, never a worker or
// a decoder. It runs at most fetch.max_concurrent downloads and at most
// fetch.max_per_account of one account, taking turns between accounts. A
// job waits out of the queue (store.Job.AwaitingAudio) until its audio is
// on disk; then a worker can claim it.
type fetcher struct {
	d    *Daemon
	wake chan struct{} // cap 1: a job was added or a download ended

	mu      sync.Mutex
	waiting map[string][]string // guarded by mu: account → job ids to fetch, oldest first
	known   map[string]bool     // guarded by mu: ids waiting or being fetched
	running map[string]int      // guarded by mu: account → downloads running
	total   int                 // guarded by mu: downloads running
	last    string              // guarded by mu: the account whose download started last
}

func newFetcher(d *Daemon) *fetcher {
	return &fetcher{
		d: d, wake: make(chan struct{}, 1),
		waiting: map[string][]string{}, known: map[string]bool{}, running: map[string]int{},
	}
}

// add puts a job in line for download; a job already in line is ignored.
func (f *fetcher) add(account, id string) {
	f.mu.Lock()
	if !f.known[id] {
		f.known[id] = true
		f.waiting[account] = append(f.waiting[account], id)
	}
	f.mu.Unlock()
	signal(f.wake)
}

// run takes the jobs a restart left awaiting their audio, then starts
// downloads as slots free up until ctx ends; it returns once the running
// ones have stopped (those jobs stay queued and are fetched after the
// restart).
func (f *fetcher) run(ctx context.Context) error {
	jobs, err := f.d.db.AwaitingAudio()
	if err != nil {
		return err
	}
	for _, j := range jobs {
		f.add(j.Account, j.ID)
	}
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
				f.fetchJob(ctx, id)
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
func (f *fetcher) next() (account, id string, ok bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.total >= f.d.cfg.Fetch.MaxConcurrent {
		return "", "", false
	}
	var ready []string
	for a := range f.waiting {
		if f.running[a] < f.d.cfg.Fetch.MaxPerAccount {
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
func (f *fetcher) done(account, id string) {
	f.mu.Lock()
	if f.running[account]--; f.running[account] <= 0 {
		delete(f.running, account)
	}
	f.total--
	delete(f.known, id)
	f.mu.Unlock()
	signal(f.wake)
}

// errNoLongerAwaiting aborts storing a download for a job that changed
// meanwhile.
var errNoLongerAwaiting = errors.New("daemon: job no longer awaits its audio")

// fetchJob downloads one job's audio_url into its blob and puts the job in
// the queue, or ends it as error. Deleting the job cancels the download.
func (f *fetcher) fetchJob(ctx context.Context, id string) {
	d := f.d
	log := d.log.With("component", "fetcher", "job_id", id)
	job, err := d.db.Job(id)
	if err != nil || job.Status != store.StatusQueued || !job.AwaitingAudio {
		if err != nil && !errors.Is(err, store.ErrNotFound) {
			log.Error("read job to fetch", "error", err)
		}
		return
	}
	jctx, cancel := context.WithCancel(ctx)
	d.mu.Lock()
	d.running[id] = cancel
	d.mu.Unlock()
	defer func() {
		d.mu.Lock()
		delete(d.running, id)
		d.mu.Unlock()
		cancel()
	}()
	var p params.PreRecorded
	if err := json.Unmarshal(job.Params, &p); err != nil {
		d.failJobRetry(ctx, log, job, fmt.Errorf("decode stored params: %w", err))
		return
	}
	start := time.Now()
	blob := jobBlob(id)
	name, err := d.fetch(jctx, job.Account, p.AudioURL, blob)
	switch {
	case jctx.Err() != nil:
		// Shutdown (fetched again after the restart) or deleted.
		d.removeJobBlob(log, id)
		return
	case err != nil:
		d.failJobRetry(ctx, log, job, err)
		return
	}
	_, err = d.db.UpdateJob(id, func(j *store.Job) ([]*store.Delivery, error) {
		if j.Status != store.StatusQueued || !j.AwaitingAudio {
			return nil, errNoLongerAwaiting
		}
		j.AwaitingAudio = false
		j.Blob = blob
		if name != "" {
			if j.File == nil {
				j.File = &store.File{ID: j.ID}
			}
			j.File.Filename = &name
		}
		return nil, nil
	})
	switch {
	case errors.Is(err, store.ErrNotFound), errors.Is(err, errNoLongerAwaiting):
		d.removeJobBlob(log, id)
		return
	case err != nil:
		d.removeJobBlob(log, id)
		d.failJobRetry(ctx, log, job, err)
		return
	}
	log.Info("audio fetched", "elapsed_ms", time.Since(start).Milliseconds())
	signal(d.wake)
}

// fetchRateGrace is how long a download runs before
// fetch.min_bytes_per_second applies (connecting, headers, a slow start).
const fetchRateGrace = 10 * time.Second

// rateGuard ends a download whose average rate since fetchRateGrace falls
// below a minimum, by cancelling its context.
type rateGuard struct {
	min   int64
	n     atomic.Int64 // bytes read
	slow  atomic.Bool
	close context.CancelFunc
}

// guardRate returns ctx bound by the rate guard of fetch.min_bytes_per_second
// (none when it is 0). Call stop when the download is over.
func (d *Daemon) guardRate(ctx context.Context) (context.Context, *rateGuard) {
	g := &rateGuard{min: *d.cfg.Fetch.MinBytesPerSecond}
	ctx, cancel := context.WithCancelCause(ctx)
	g.close = func() { cancel(nil) }
	if g.min <= 0 {
		return ctx, g
	}
	start := time.Now()
	go func() {
		t := time.NewTicker(time.Second)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case now := <-t.C:
				past := now.Sub(start) - fetchRateGrace
				if past > 0 && float64(g.n.Load()) < float64(g.min)*past.Seconds() {
					g.slow.Store(true)
					cancel(g.err())
					return
				}
			}
		}
	}()
	return ctx, g
}

// stop ends the guard.
func (g *rateGuard) stop() { g.close() }

// tripped reports whether the guard ended the download.
func (g *rateGuard) tripped() bool { return g.slow.Load() }

func (g *rateGuard) err() error {
	return newError(ErrFetch, nil, "audio_url: download slower than %d bytes/s (fetch.min_bytes_per_second)", g.min)
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
