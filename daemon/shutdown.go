package daemon

import (
	"context"
	"errors"
	"log/slog"
	"time"

	"github.com/earshot-dev/earshot/store"
)

// errStageTimeout ends a shutdown stage that ran out of its bound
// (shutdown: in the config).
var errStageTimeout = errors.New("daemon: shutdown stage bound reached")

// stoppers end the modules Run started, one group per stage.
type stoppers struct {
	live, work, outbox context.CancelFunc
}

// shutdown stops the job service in stages once the doors are closed
// (app/run.go closes them first), each within its bound of
// Config.Shutdown: live sessions finish (or keep their recording for the
// next start), workers finish their jobs (or put them back in the queue),
// the outbox delivers what is due (or leaves it in the store). Close then
// closes the store.
func (d *Daemon) shutdown(s stoppers) {
	sd := d.cfg.Shutdown
	d.stopOnce.Do(func() { close(d.stopping) }) // no new claim from here on

	start := time.Now()
	ctx, cancel := context.WithTimeoutCause(context.Background(), sd.Live, errStageTimeout)
	err := d.shutdownLive(ctx)
	cancel()
	s.live()
	d.stageDone("live", start, err)

	// The workers stage waits for the pre-recorded workers only: a batch
	// pass was cut when the shutdown began (runBatchPass), and one still
	// in a decoder call, which a niced thread on a loaded box can be for a
	// minute or more, is left to the exit (its pass goes back to the queue
	// at the next start). Before (until 2026-11-30) the stage waited for it.
	start = time.Now()
	t := time.NewTimer(sd.Workers)
	err = nil
	select {
	case <-d.workersDone:
	case <-t.C:
		err = errStageTimeout
	}
	t.Stop()
	s.work()
	if err != nil {
		// A job in the middle of a decoder call sees its context only when
		// the call returns, which can take as long as a segment's audio:
		// its record goes back to the queue now, and Close leaves the
		// engines to the process's exit if that call still runs.
		d.requeueRunning()
	}
	d.stageDone("workers", start, err)

	start = time.Now()
	ctx, cancel = context.WithTimeoutCause(context.Background(), sd.Outbox, errStageTimeout)
	err = d.outbox.Shutdown(ctx)
	cancel()
	s.outbox()
	d.stageDone("outbox", start, err)
}

// requeueRunning puts back in the queue every pre-recorded job a worker is
// still processing (a shutdown's workers stage ran out of its bound).
func (d *Daemon) requeueRunning() {
	d.mu.Lock()
	claims := make(map[string]int, len(d.running))
	for id, r := range d.running {
		claims[id] = r.attempts
	}
	d.mu.Unlock()
	for id, attempts := range claims {
		d.requeue(d.log.With("component", "worker", "job_id", id), id, attempts)
	}
}

// requeue puts a pre-recorded job that is processing under this node's
// claim (attempts, see runningJob) back in the queue, to run again after
// the restart, and logs it; a job in any other state (a download waiting
// for its audio, a live job's batch pass, a job that just ended) or under
// another claim (this node stalled past cluster.job_lease and another
// claimed it since) is left as it is.
func (d *Daemon) requeue(log *slog.Logger, id string, attempts int) {
	_, err := d.db.UpdateJob(id, func(j *store.Job) ([]*store.Delivery, error) {
		if j.Kind != store.KindPreRecorded || checkClaim(j, attempts) != nil {
			return nil, errNotRunning
		}
		j.Status = store.StatusQueued
		return nil, nil
	})
	switch {
	case err == nil:
		log.Info("job requeued at shutdown")
	case errors.Is(err, errNotRunning), errors.Is(err, store.ErrNotFound):
	default:
		log.Error("requeue job", "error", err)
	}
}

// errNotRunning leaves a job requeue finds not processing as it is.
var errNotRunning = errors.New("daemon: job not processing")

// shutdownLive admits no new live session and finishes the running ones
// as at stop_recording, until ctx ends (live.Service.Shutdown); a session
// never connected stays queued for the restart. A session still finishing
// when ctx ends has its engine calls cancelled; if it cannot store its
// result, its job stays processing and the next start transcribes its
// recording (live.Service.Recover).
func (d *Daemon) shutdownLive(ctx context.Context) error {
	return d.live.Shutdown(ctx)
}

// stageDone logs the end of a shutdown stage: at info, or at warn when its
// bound cut it short.
func (d *Daemon) stageDone(stage string, start time.Time, err error) {
	log := d.log.Info
	if err != nil {
		log = d.log.Warn
	}
	log("shutdown stage done", "stage", stage, "elapsed_ms", time.Since(start).Milliseconds(), "cut_short", err != nil)
}

// stopped reports whether the shutdown has begun.
func (d *Daemon) stopped() bool {
	select {
	case <-d.stopping:
		return true
	default:
		return false
	}
}
