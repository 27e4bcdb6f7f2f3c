package daemon

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"runtime/debug"
	"sync"
	"time"

	"github.com/earshot-dev/earshot/callback"
	"github.com/earshot-dev/earshot/daemon/live"
	"github.com/earshot-dev/earshot/errcode"
	"github.com/earshot-dev/earshot/ingest/media"
	"github.com/earshot-dev/earshot/params"
	"github.com/earshot-dev/earshot/recognizer/pipeline"
	"github.com/earshot-dev/earshot/store"
)

// startWorkers starts cfg.Workers loops of pre-recorded jobs and as many
// loops of live sessions' batch passes under ctx, and sets workersDone and
// passesDone, closed once every loop of each kind has returned. The two
// take from queues of their own, so a pre-recorded job, whose client waits
// for its only result, never waits behind a batch pass, which improves a
// record its client already has: the pass decodes on a niced thread
// (recognizer.CPU's BatchDecode), so the job's decode takes the CPU first
// and the pass what is left. Before (until 2026-11-30) one loop took turns
// between the two, and a job waited for the pass its worker was running
// (28 s seen in CI).
func (d *Daemon) startWorkers(ctx context.Context) {
	var workers, passes sync.WaitGroup
	for i := range d.cfg.Workers {
		workers.Go(func() { d.runWorker(ctx, i) })
		passes.Go(func() { d.runBatchPasses(ctx, i) })
	}
	d.workersDone, d.passesDone = make(chan struct{}), make(chan struct{})
	go func() { // the workers stage waits for it, Close reads it
		workers.Wait()
		close(d.workersDone)
	}()
	go func() { // Close reads it
		passes.Wait()
		close(d.passesDone)
	}()
}

// runWorker takes queued pre-recorded jobs from the durable queue one at a
// time, in turns between accounts, until the shutdown begins (it then
// returns once its job is done) or ctx ends. A job interrupted by ctx goes
// back to the queue.
func (d *Daemon) runWorker(ctx context.Context, n int) error {
	log := d.log.With("component", "worker", "worker", n)
	claim := func() (*store.Job, bool, error) {
		j, err := d.claimJob()
		return j, false, err
	}
	return d.serveQueue(ctx, log, d.wake, claim, func(j *store.Job) { d.runJob(ctx, log, j) })
}

// runBatchPasses takes live sessions' queued batch passes one at a time
// while the gate lets them decode (live sessions come first), until the
// shutdown begins, which cuts a running pass (runBatchPass), or ctx ends.
func (d *Daemon) runBatchPasses(ctx context.Context, n int) error {
	log := d.log.With("component", "batch_pass", "worker", n)
	return d.serveQueue(ctx, log, d.batchWake, d.claimBatchPass, func(j *store.Job) { d.runBatchPass(ctx, log, j) })
}

// serveQueue claims with claim and runs each claimed job with run until
// the shutdown begins or ctx ends. wake says there may be something to
// claim: the loops of one queue share it, and a loop that claimed passes
// it on. A claim the gate held back (gated) is tried again every
// live.GatePoll, as live sessions come and go.
func (d *Daemon) serveQueue(ctx context.Context, log *slog.Logger, wake chan struct{},
	claim func() (job *store.Job, gated bool, err error), run func(*store.Job)) error {
	for {
		if d.stopped() {
			return nil
		}
		job, gated, err := claim()
		switch {
		case errors.Is(err, store.ErrEmpty):
			var poll <-chan time.Time
			if gated {
				poll = time.After(live.GatePoll)
			}
			select {
			case <-ctx.Done():
				return nil
			case <-d.stopping:
				return nil
			case <-wake:
				continue
			case <-poll:
				continue
			}
		case err != nil:
			log.Error("claim job", "error", err)
			select {
			case <-ctx.Done():
				return nil
			case <-time.After(time.Second):
				continue
			}
		}
		signal(wake) // there may be more for the queue's other loops
		run(job)
		if ctx.Err() != nil {
			return nil
		}
	}
}

// runBatchPass runs a claimed batch pass until it ends or the shutdown
// begins: a shutdown cuts it at once rather than wait for it in its
// workers stage. The pass improves a record its client already has, and a
// cut pass goes back to the queue (live.Service.RunBatchPass) and runs
// again after the restart, where a pre-recorded job's client waits for its
// only result; a pass in the middle of a decoder call sees the cut when
// the call returns.
func (d *Daemon) runBatchPass(ctx context.Context, log *slog.Logger, job *store.Job) {
	pctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go func() {
		select {
		case <-d.stopping:
			cancel()
		case <-pctx.Done():
		}
	}()
	d.track(pctx, job.ID, 0, func(jctx context.Context) {
		d.live.RunBatchPass(pctx, jctx, log, job, d.cfg.Limits.MaxAttempts)
	})
}

// claimJob claims the next queued pre-recorded job, taking turns between
// accounts (each account's oldest first).
func (d *Daemon) claimJob() (*store.Job, error) {
	d.claimMu.Lock()
	defer d.claimMu.Unlock()
	j, err := d.db.ClaimNextAfter(store.KindPreRecorded, d.lastClaimed)
	if err == nil {
		d.lastClaimed = j.Account
	}
	return j, err
}

// claimBatchPass claims a live session's queued batch pass while the gate
// would let it decode; gated reports a pass left queued for the gate.
func (d *Daemon) claimBatchPass() (job *store.Job, gated bool, err error) {
	if !d.live.BatchPassOpen() {
		n, err := d.db.PendingBatchPasses()
		return nil, err != nil || n > 0, store.ErrEmpty
	}
	j, err := d.db.ClaimBatchPass()
	return j, false, err
}

// runningJob is a job a worker of this node runs (the running map):
// cancel ends it (DELETE), attempts is the claim it runs under (the job's
// Attempts when claimed; 0 for a download or a batch pass, which are no
// claim of the pre-recorded queue).
type runningJob struct {
	cancel   context.CancelFunc
	attempts int
}

// track runs fn with a context of the job's own, which DELETE cancels,
// in the running map under the claim attempts.
func (d *Daemon) track(ctx context.Context, id string, attempts int, fn func(jctx context.Context)) {
	jctx, cancel := context.WithCancel(ctx)
	d.mu.Lock()
	d.running[id] = runningJob{cancel, attempts}
	d.mu.Unlock()
	defer func() {
		d.mu.Lock()
		delete(d.running, id)
		d.mu.Unlock()
		cancel()
	}()
	fn(jctx)
}

func (d *Daemon) runJob(ctx context.Context, log *slog.Logger, job *store.Job) {
	log = log.With("job_id", job.ID)
	d.track(ctx, job.ID, job.Attempts, func(jctx context.Context) { d.runClaim(ctx, jctx, log, job) })
}

// runClaim runs a claimed pre-recorded job under jctx, its own context
// (track); ctx is the workers'.
func (d *Daemon) runClaim(ctx, jctx context.Context, log *slog.Logger, job *store.Job) {
	if job.Attempts > d.cfg.Limits.MaxAttempts {
		d.failJob(log, job, fmt.Errorf("job started %d times without finishing; giving up", job.Attempts-1))
		return
	}
	log.Info("job processing", "attempt", job.Attempts)
	start := time.Now()
	res, err := d.processJob(jctx, job)
	switch {
	case ctx.Err() != nil:
		// Shutdown: back to the queue, to run again after restart.
		d.requeue(log, job.ID, job.Attempts)
		return
	case jctx.Err() != nil:
		// Deleted while running: the record and its blob are gone, but a
		// download this run finished is not named by any record.
		d.removeJobBlob(log, job.ID)
		return
	case err != nil:
		d.failJobRetry(ctx, log, job, err)
		return
	}
	body, err := json.Marshal(res.result)
	if err != nil {
		d.failJobRetry(ctx, log, job, fmt.Errorf("encode result: %w", err))
		return
	}
	if ra := res.result.RedactedAudio; ra != nil {
		// The redacted audio is on disk before the job can be done
		// (redact.go); until the commit names it, it is this run's to
		// remove.
		if res.redacted, err = d.storeRedactedAudio(job, ra); err != nil {
			d.failJobRetry(ctx, log, job, err)
			return
		}
		res.result.RedactedAudio = nil // the decoded audio can go
		defer func() {
			if res.redacted != "" {
				d.removeBlob(log, res.redacted)
			}
		}()
	}
	waiting := false
	err = untilStored(ctx, func() error {
		_, err := d.db.UpdateJob(job.ID, func(j *store.Job) ([]*store.Delivery, error) {
			return d.finishJob(j, job, res, body)
		})
		if errors.Is(err, store.ErrUnavailable) && !waiting {
			waiting = true
			log.Warn("store unavailable; the job's result is stored when it is back", "error", err)
		}
		return err
	})
	if errors.Is(err, store.ErrNotFound) {
		d.removeJobBlob(log, job.ID) // deleted as it finished
		return
	}
	if err == nil && res.redacted != "" {
		// The record names the redacted audio now: the original goes.
		res.redacted = ""
		d.removeJobBlob(log, job.ID)
		d.quota.Forget(job.Account)
	}
	if errors.Is(err, errClaimLost) {
		log.Warn("job claim lost while it ran (its lease ran out); its result is dropped for the run that holds it now")
		return
	}
	if err != nil {
		log.Error("store result", "error", err)
		d.failJobRetry(ctx, log, job, err)
		return
	}
	d.outbox.Wake()
	d.ends.ended()
	d.metrics.jobsFinished.WithLabelValues(string(job.Kind), string(store.StatusDone)).Inc()
	if res.info.Duration > 0 {
		d.metrics.rtf.Observe(time.Since(start).Seconds() / res.info.Duration)
	}
	log.Info("job done", "audio_seconds", res.info.Duration, "elapsed_ms", time.Since(start).Milliseconds())
}

// finishJob writes a job's result into j, the job as stored now, and
// returns its callback, unless the run (claim) no longer holds it.
func (d *Daemon) finishJob(j, claim *store.Job, res *jobOutput, body []byte) ([]*store.Delivery, error) {
	if err := checkClaim(j, claim.Attempts); err != nil {
		return nil, err
	}
	j.Status = store.StatusDone
	j.CompletedAt = time.Now().UTC()
	j.Result = body
	dur, ch := res.info.Duration, res.info.Channels
	if j.File == nil {
		j.File = &store.File{ID: j.ID}
	}
	j.File.AudioDuration, j.File.Channels = &dur, &ch
	if res.filename != "" {
		j.File.Filename = &res.filename
	}
	if res.blob != "" {
		j.Blob = res.blob
	}
	if res.redacted != "" {
		j.Blob = res.redacted
	}
	j.PostSessionMetadata = map[string]any{"engine": d.pl.Engines.Embedded().Name(), "attempts": j.Attempts}
	for k, v := range res.result.PostSessionMetadata {
		j.PostSessionMetadata[k] = v
	}
	return callback.ForJob(j, "transcription.success", json.RawMessage(body))
}

// storeRetry is how often a job's outcome the store could not take (the
// database away) is tried again.
const storeRetry = time.Second

// untilStored calls update until the store takes it: while the store is
// unavailable (the database away) it tries again every storeRetry, until
// ctx ends. A job's outcome made while the database restarts is stored
// when it is back, not dropped with the job left processing.
func untilStored(ctx context.Context, update func() error) error {
	for {
		err := update()
		if !errors.Is(err, store.ErrUnavailable) {
			return err
		}
		select {
		case <-ctx.Done():
			return err
		case <-time.After(storeRetry):
		}
	}
}

// errClaimLost is returned by a running job's final update when the job
// is no longer the claim that run holds: its lease ran out (its node
// stalled, or lost the shared store, past cluster.job_lease), so it went
// back to the queue and was claimed again or finished. That run's outcome
// is dropped: the job ends once, with one callback.
var errClaimLost = errors.New("daemon: job claim lost")

// checkClaim returns errClaimLost unless j (as stored now) is still the
// claim a run took at attempts: processing, at the same attempt.
func checkClaim(j *store.Job, attempts int) error {
	if j.Status != store.StatusProcessing || j.Attempts != attempts {
		return errClaimLost
	}
	return nil
}

type jobOutput struct {
	result   *pipeline.Result
	info     *media.Info
	blob     string // set when the audio was fetched by this run
	filename string
	// redacted is the blob of the job's redacted audio this run wrote
	// (redact.go), until the commit that names it.
	redacted string
}

// processJob gets the job's audio on disk (fetching an external audio_url)
// and runs the pipeline. Panics are confined to the job.
func (d *Daemon) processJob(ctx context.Context, job *store.Job) (out *jobOutput, err error) {
	defer func() {
		if r := recover(); r != nil {
			d.log.Error("job panicked", "job_id", job.ID, "panic", r, "stack", string(debug.Stack()))
			err = fmt.Errorf("internal error")
		}
	}()
	p, err := params.StoredPreRecorded(job.Params)
	if err != nil {
		return nil, err
	}
	out = &jobOutput{}
	blob := job.Blob
	if blob == "" {
		blob = jobBlob(job.ID)
		name, err := d.fetcher.Download(ctx, job.Account, p.AudioURL, blob)
		if err != nil {
			return nil, err
		}
		out.blob, out.filename = blob, name
	}
	// The store away for a moment (a restart) delays the job, not fails it.
	var path string
	var release func()
	err = untilStored(ctx, func() (err error) {
		path, release, err = d.blobFile(blob)
		return err
	})
	if err != nil {
		return nil, err
	}
	defer release()
	d.log.Debug("job audio ready; transcribing", "component", "worker", "job_id", job.ID)
	res, info, err := d.pl.TranscribeFile(ctx, path, p)
	if err != nil {
		return nil, err
	}
	out.result, out.info = res, info
	return out, nil
}

// failJobRetry is failJob for a running job (its result could not be made
// or stored: 507 when the disk is full), which must not stay processing:
// while the disk stays too full for even the error, or the store is
// unavailable, it retries with backoff; on shutdown the job is left to
// Recover, which queues it again.
func (d *Daemon) failJobRetry(ctx context.Context, log *slog.Logger, job *store.Job, cause error) {
	wait := 100 * time.Millisecond
	for {
		err := d.failJob(log, job, cause)
		if !errors.Is(err, store.ErrNoSpace) && !errors.Is(err, store.ErrUnavailable) {
			return
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(wait):
		}
		wait = min(2*wait, 5*time.Second)
	}
}

// failJob ends a job as error with the contract status of err. It returns
// the store's error when that could not be recorded (store.ErrNotFound, a job
// deleted meanwhile, is not an error).
func (d *Daemon) failJob(log *slog.Logger, job *store.Job, cause error) error {
	code := errcode.Status(cause)
	if code < 400 {
		code = 500
	}
	msg := errcode.Message(cause)
	if code >= 500 && !errors.Is(cause, errcode.ErrQuota) {
		log.Error("job failed", "error", cause)
	} else {
		log.Info("job failed", "status", code, "error", cause)
	}
	claimed := job.Status == store.StatusProcessing // a worker's run, not a download's
	_, err := d.db.UpdateJob(job.ID, func(j *store.Job) ([]*store.Delivery, error) {
		if claimed {
			if err := checkClaim(j, job.Attempts); err != nil {
				return nil, err
			}
		}
		j.Status = store.StatusError
		j.CompletedAt = time.Now().UTC()
		j.Blob = "" // the audio goes below, once the record no longer names it
		j.ErrorCode = code
		j.ErrorMessage = msg
		if j.PostSessionMetadata == nil {
			j.PostSessionMetadata = map[string]any{}
		}
		j.PostSessionMetadata["error"] = msg
		payload := map[string]any{"error_code": code, "message": msg}
		return callback.ForJob(j, "transcription.error", payload)
	})
	if errors.Is(err, errClaimLost) {
		log.Warn("job claim lost while it ran (its lease ran out); its failure is dropped for the run that holds it now")
		return nil
	}
	if err != nil && !errors.Is(err, store.ErrNotFound) {
		log.Error("store job failure", "error", err)
		return err
	}
	// A failed job keeps no audio: whatever it downloaded or linked
	// (possibly not audio at all) would otherwise stay until deleted.
	d.removeJobBlob(log, job.ID)
	d.quota.Forget(job.Account)
	d.metrics.jobsFinished.WithLabelValues(string(job.Kind), string(store.StatusError)).Inc()
	d.outbox.Wake()
	d.ends.ended()
	return nil
}

// removeJobBlob removes the blob a pre-recorded job downloads to or links
// its upload as ("job-" + id), once no record names it.
func (d *Daemon) removeJobBlob(log *slog.Logger, id string) { d.removeBlob(log, jobBlob(id)) }

// removeBlob removes a job's audio blob, logging a failure.
func (d *Daemon) removeBlob(log *slog.Logger, name string) {
	if err := d.db.RemoveBlob(name); err != nil {
		log.Error("remove job audio", "error", err)
	}
}

// jobBlob names the blob of a pre-recorded job.
func jobBlob(id string) string { return "job-" + id }
