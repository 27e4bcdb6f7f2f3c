package daemon

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"time"

	"github.com/earshot-dev/earshot/errcode"
	"github.com/earshot-dev/earshot/ingest/fetch"
	"github.com/earshot-dev/earshot/params"
	"github.com/earshot-dev/earshot/quota"
	"github.com/earshot-dev/earshot/store"
)

// newFetcher builds the audio_url fetcher (package ingest/fetch) with the
// limits of limits: joined in.
func newFetcher(cfg Config, db store.Store, q *quota.Quota) *fetch.Fetcher {
	fc := cfg.Fetch
	fc.MaxBytes, fc.Timeout = cfg.Limits.MaxUploadBytes, cfg.Limits.FetchTimeout
	return fetch.New(fc, db, quotaCharger{q})
}

// quotaCharger charges downloads to the account's storage quota for the
// fetcher (fetch.Quota), failing with the client-facing quota error.
type quotaCharger struct{ q *quota.Quota }

func (c quotaCharger) Charge(account string, r io.Reader) (io.Reader, func(error)) {
	qr := c.q.Reader(account, r)
	return quotaError{qr, c.q}, qr.Settle
}

// quotaError passes reads through, turning errcode.ErrQuota into the client's
// message with the limit.
type quotaError struct {
	r io.Reader
	q *quota.Quota
}

func (e quotaError) Read(p []byte) (int, error) {
	n, err := e.r.Read(p)
	if errors.Is(err, errcode.ErrQuota) {
		err = newError(errcode.ErrQuota, err, reasonQuota, e.q.Limit())
	}
	return n, err
}

// errNoLongerAwaiting aborts storing a download for a job that changed
// meanwhile.
var errNoLongerAwaiting = errors.New("daemon: job no longer awaits its audio")

// fetchJob downloads one job's audio_url into its blob and puts the job in
// the queue, or ends it as error; the fetcher runs it in a download slot.
// Deleting the job cancels the download.
func (d *Daemon) fetchJob(ctx context.Context, id string) {
	log := d.log.With("component", "fetcher", "job_id", id)
	job, err := d.db.Job(id)
	if err != nil || job.Status != store.StatusQueued || !job.AwaitingAudio {
		if err != nil && !errors.Is(err, store.ErrNotFound) {
			log.Error("read job to fetch", "error", err)
		}
		return
	}
	d.track(ctx, id, 0, func(jctx context.Context) { d.fetchAudio(ctx, jctx, log, job) })
}

// fetchAudio is fetchJob's download and queueing of job, under jctx (the
// job's own context, which DELETE cancels); failures are recorded under ctx.
func (d *Daemon) fetchAudio(ctx, jctx context.Context, log *slog.Logger, job *store.Job) {
	id := job.ID
	p, err := params.StoredPreRecorded(job.Params)
	if err != nil {
		d.failJobRetry(ctx, log, job, err)
		return
	}
	start := time.Now()
	blob := jobBlob(id)
	name, err := d.fetcher.Download(jctx, job.Account, p.AudioURL, blob)
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

// runFetcher queues for download the jobs a restart left awaiting their
// audio, then runs the fetcher until ctx ends.
func (d *Daemon) runFetcher(ctx context.Context) error {
	jobs, err := d.db.AwaitingAudio()
	if err != nil {
		return err
	}
	for _, j := range jobs {
		d.fetcher.Add(j.Account, j.ID)
	}
	return d.fetcher.Run(ctx, d.fetchJob)
}
