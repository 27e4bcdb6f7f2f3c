package daemon

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"sync"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/earshot-dev/earshot/admin"
	"github.com/earshot-dev/earshot/audit"
	"github.com/earshot-dev/earshot/callback"
	"github.com/earshot-dev/earshot/crash"
	"github.com/earshot-dev/earshot/daemon/live"
	"github.com/earshot-dev/earshot/ingest/fetch"
	"github.com/earshot-dev/earshot/params"
	"github.com/earshot-dev/earshot/quota"
	"github.com/earshot-dev/earshot/recognizer/pipeline"
	"github.com/earshot-dev/earshot/retention"
	"github.com/earshot-dev/earshot/store"
	"github.com/earshot-dev/earshot/transcript"
)

// Daemon is the job service: it owns the store, the recognition pipeline,
// the pre-recorded workers and the callback outbox. Doors (the HTTP API today) call its
// methods; app.Run builds it and runs it beside them.
type Daemon struct {
	cfg     Config
	log     *slog.Logger
	db      store.Store
	pl      *pipeline.Transcriber // engines, routing, add-ons: owned, closed by Close
	caps    params.Capabilities
	outbox  *callback.Outbox // callback deliveries
	metrics *jobMetrics
	quota   *quota.Quota // limits.max_account_bytes
	audit   *audit.Trail // the audit trail's queue to the store (audit.go)

	wake      chan struct{} // cap 1: a pre-recorded job was queued
	batchWake chan struct{} // cap 1: a live session's batch pass was queued
	ends      jobEnds       // a pre-recorded job ended: WaitJob's waiters read theirs again

	mu      sync.Mutex
	running map[string]runningJob // guarded by mu: job id → its worker's cancel and claim
	closed  bool                  // guarded by mu

	live    *live.Service // the live sessions (package live)
	tenants tenants       // whether the live pools bound each account's share (tenants.go)

	started     chan struct{} // closed by Run once what a kill left is recovered and every module runs (Started)
	stopping    chan struct{} // closed when the shutdown begins: no new claim
	stopOnce    sync.Once     // closes stopping
	workersDone chan struct{} // closed once every pre-recorded worker has returned; set by Run
	passesDone  chan struct{} // closed once every batch-pass loop has returned; set by Run

	fetcher     *fetch.Fetcher // downloads audio_url beside the workers
	claimMu     sync.Mutex     // serialises claims, so workers take turns between accounts
	lastClaimed string         // guarded by claimMu: the account of the last job claimed
}

// unsealedCounter is a sealed store's count of what it holds that was
// written before sealing was on (store/sealed).
type unsealedCounter interface {
	Unsealed(ctx context.Context) (blobs, jobs, deliveries int, err error)
}

// New builds the job service on the store db and the recognition pipeline
// pl (cfg.ServicePipeline()), which the composition root opened and built
// (app.Run). It starts nothing. The Daemon owns both from here: Close
// closes them.
func New(cfg Config, db store.Store, pl *pipeline.Transcriber, logger *slog.Logger) *Daemon {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	// Before any door can write a blob: remove what no record names (a
	// failed job's download left by an older version, a crash between a
	// write and its record).
	swept, err := db.SweepBlobs()
	if len(swept) > 0 {
		logger.Info("removed unreferenced audio files", "component", "store", "count", len(swept))
	}
	if err != nil {
		logger.Error("remove unreferenced audio files", "component", "store", "error", err)
	}
	// Before a door can start a live recording: the keys of sealed
	// recordings whose files are gone (recordingPath's directory).
	if sp := db.Sealer(); sp != nil {
		gone, err := sp.SweepSpools(filepath.Join(cfg.DataDir, recordingsDir))
		if len(gone) > 0 {
			logger.Info("destroyed the keys of live recordings whose files are gone", "component", "store", "count", len(gone))
		}
		if err != nil {
			logger.Error("destroy the keys of live recordings whose files are gone", "component", "store", "error", err)
		}
	}
	d := &Daemon{
		cfg:       cfg,
		log:       logger,
		db:        db,
		pl:        pl,
		caps:      pl.Capabilities(),
		quota:     quota.New(*cfg.Limits.MaxAccountBytes, db, logger.With("component", "quota")),
		wake:      make(chan struct{}, 1),
		batchWake: make(chan struct{}, 1),
		running:   make(map[string]runningJob),
		started:   make(chan struct{}),
		stopping:  make(chan struct{}),
	}
	d.audit = audit.New(cfg.Audit, db, logger.With("component", "audit"))
	d.fetcher = newFetcher(cfg, db, d.quota)
	cb := cfg.Callbacks
	cb.Deny = cfg.Fetch.Deny
	d.outbox = callback.New(cb, db, logger.With("component", "outbox"))
	d.live = newLive(d)
	d.metrics = newMetrics(d)
	return d
}

// Config returns the daemon's effective configuration.
func (d *Daemon) Config() Config { return d.cfg }

// Run recovers jobs left by a kill, a power loss or a crash (package
// crash, crash.go), then runs the workers, the fetcher, the outbox,
// retention and the admin socket (package admin) until ctx ends. It then
// stops them in the stages of Config.Shutdown (shutdown.go), each within
// its bound, and returns once they have all exited. Cancel ctx only once
// the doors are closed.
func (d *Daemon) Run(ctx context.Context) error {
	crashed, err := crash.Arm(d.cfg.DataDir, d.log)
	if err != nil {
		return err
	}
	rep, err := d.db.Recover(store.RecoverOptions{Crashed: crashed})
	if err != nil {
		return fmt.Errorf("recover: %w", err)
	}
	if len(rep.Quarantined) > 0 || len(rep.Corrupt) > 0 {
		d.log.Warn("jobs whose stored records could not be read: quarantined ones ended error, unreadable ones left out of the queue",
			"quarantined", rep.Quarantined, "unreadable", rep.Corrupt)
	}
	if len(rep.Requeued) > 0 || len(rep.Suspects) > 0 || len(rep.Live) > 0 || len(rep.BatchPasses) > 0 {
		d.log.Info("recovered jobs", "requeued", len(rep.Requeued), "failed_after_crash", len(rep.Suspects), "live", len(rep.Live), "batch_passes", len(rep.BatchPasses))
	}
	d.failSuspects(rep.Suspects)
	d.dropTakenRecordings() // cluster_live.go
	for _, id := range rep.Live {
		d.live.Recover(ctx, id)
	}
	adm, err := admin.Listen(d.cfg.DataDir)
	if err != nil {
		return err
	}
	// Each stage of the shutdown (shutdown.go) ends its own modules; a
	// module that fails ends them all (failed), and the stages still run.
	g, failed := errgroup.WithContext(context.WithoutCancel(ctx))
	// The live sessions end in the live stage (live.Service.Shutdown), not
	// when a module fails: that stage bounds them.
	sessions, stopLive := context.WithCancel(context.WithoutCancel(ctx))
	work, stopWork := context.WithCancel(failed)     // workers and fetcher
	outbox, stopOutbox := context.WithCancel(failed) // callback deliveries
	rest, stopRest := context.WithCancel(failed)     // retention, admin socket, cluster upkeep
	defer stopRest()
	// Workers are not in g: Run need not wait for a decoder call that
	// outlives the workers stage (shutdown.go); Close looks at workersDone.
	d.startWorkers(work)
	if c := d.db.Cluster(); c != nil {
		g.Go(func() error { return c.WatchQueue(rest, d.wakeWorkers) }) // other nodes queue jobs too
		g.Go(func() error { return c.KeepLeases(rest, d.leasesKept) })  // other nodes may die holding jobs
		g.Go(func() error { return d.runHeartbeat(rest, c) })           // the nodes see each other's load
	}
	g.Go(func() error { return d.runFetcher(work) })
	g.Go(func() error { return d.outbox.Run(outbox) })
	g.Go(func() error { return d.live.Run(sessions) })
	d.checkTenants(true)
	g.Go(func() error { return d.runTenants(rest) })
	g.Go(func() error {
		return retention.Run(rest, auditedExpiry{d.db, d}, d.cfg.Retention, d.log.With("component", "retention"))
	})
	g.Go(func() error { return d.audit.Run(rest) }) // after the doors closed: their last entries are stored
	g.Go(func() error { return admin.NewServer(d.db, d.live, d.log).Run(rest, adm) })
	g.Go(func() error { d.reportUnsealed(rest); return nil })
	telephone := "none"
	if m := d.pl.TelephoneModel(); m != "" {
		telephone = fmt.Sprintf("%s (%d decoders)", m, d.cfg.Sphinx.TelephoneDecoders)
	}
	d.log.Info("daemon started", "workers", d.cfg.Workers, "decoders", d.cfg.Sphinx.Decoders,
		"live_decoders", d.cfg.Sphinx.LiveDecoders, "telephone_model", telephone, "data_dir", d.cfg.DataDir)
	close(d.started)
	select {
	case <-ctx.Done():
	case <-failed.Done():
	}
	d.shutdown(stoppers{live: stopLive, work: stopWork, outbox: stopOutbox})
	stopRest()
	err = g.Wait()
	if errors.Is(err, context.Canceled) {
		err = nil
	}
	return err
}

// Close releases the engine and the store. Call it after Run returned.
func (d *Daemon) Close() error {
	d.mu.Lock()
	if d.closed {
		d.mu.Unlock()
		return nil
	}
	d.closed = true
	d.mu.Unlock()
	start := time.Now()
	var err error
	switch n := d.live.Sessions(); {
	case !d.workersIdle():
		// A worker or a batch pass is still inside a decoder call (its
		// job or pass is back in the queue, or goes back at the next
		// start): freeing the decoders under it would crash; the exit that
		// follows frees them.
		d.log.Warn("engines left open: a worker is still in a decoder call")
	case n > 0:
		// A live session the live stage cut short is still finishing
		// (its engine calls cancelled): the same holds for its decoder.
		d.log.Warn("engines left open: a live session is still finishing", "sessions", n)
	default:
		err = d.pl.Close()
	}
	err = errors.Join(err, d.db.Close())
	d.stageDone("store", start, nil)
	return err
}

// workersIdle reports whether no pre-recorded worker and no batch-pass
// loop runs (true when Run never started them).
func (d *Daemon) workersIdle() bool {
	for _, done := range []chan struct{}{d.workersDone, d.passesDone} {
		if done == nil {
			continue
		}
		select {
		case <-done:
		default:
			return false
		}
	}
	return true
}

// Started is closed once Run has recovered what a kill, a power loss or a
// crash left (the live sessions whose clients may come back among it) and
// started every module: the composition root opens the doors only then,
// so that no request finds a recovered session or job not yet known (a
// client joining its live session right after a restart was refused 4404,
// e2e TestLiveQueuedAcrossRestart in CI, 2026-12-02). It is never closed
// when Run fails before.
func (d *Daemon) Started() <-chan struct{} { return d.started }

// ErrStarting is Ready's answer until Run has recovered what the last
// run left (Started): the operations door answers /readyz during a long
// recovery, "not ready" rather than a probe left waiting.
var ErrStarting = errors.New("daemon: still recovering what the last run left")

// Ready reports whether the daemon can serve: recovery done, store open,
// engine loaded.
func (d *Daemon) Ready() error {
	select {
	case <-d.started:
	default:
		return ErrStarting
	}
	if !d.pl.Ready() {
		return errors.New("daemon: no decoders loaded")
	}
	_, err := d.db.CountJobs(store.KindPreRecorded, store.StatusQueued)
	return err
}

// Languages lists the languages installed engines serve.
func (d *Daemon) Languages() []string { return d.caps.Languages }

// Engines lists the installed engines (GET /v2/engines).
func (d *Daemon) Engines() []transcript.EngineInfo { return d.pl.Engines.Info() }

func signal(c chan struct{}) {
	select {
	case c <- struct{}{}:
	default:
	}
}

// wakeWorkers wakes both queues' loops: jobs of either kind may have been
// queued (another node's, or requeued from a node whose lease ended).
func (d *Daemon) wakeWorkers() {
	signal(d.wake)
	signal(d.batchWake)
}

// reportUnsealed warns when a sealed store still holds audio files, jobs
// or pending callback bodies written before encryption at rest was turned on, and says so when it
// holds none. It runs beside the doors, not before them: the count opens
// each audio file without a data key (a query each on PostgreSQL), which
// on a data dir of many calls stored before the key would hold the start
// back until keys seal-existing has run.
func (d *Daemon) reportUnsealed(ctx context.Context) {
	u, ok := d.db.(unsealedCounter)
	if !ok {
		return
	}
	blobs, jobs, deliveries, err := u.Unsealed(ctx)
	switch {
	case ctx.Err() != nil:
	case err != nil:
		d.log.Error("count what is stored in clear", "component", "store", "error", err)
	case blobs+jobs+deliveries > 0:
		d.log.Warn("audio files, jobs and callback bodies stored before encryption at rest was turned on are still in clear: stop the daemon and run earshotd keys seal-existing",
			"component", "store", "audio_files", blobs, "jobs", jobs, "callbacks", deliveries)
	default:
		d.log.Info("encryption at rest: no audio file, job or callback body is stored in clear", "component", "store")
	}
}
