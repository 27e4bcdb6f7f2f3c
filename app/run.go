package app

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"sync"
	"time"

	"github.com/earshot-dev/earshot/api"
	"github.com/earshot-dev/earshot/daemon"
	"github.com/earshot-dev/earshot/ingest/rtp"
	"github.com/earshot-dev/earshot/ingest/sip"
	"github.com/earshot-dev/earshot/ingest/webrtc"
	"github.com/earshot-dev/earshot/recognizer"
	"github.com/earshot-dev/earshot/recognizer/pipeline"
	"golang.org/x/sync/errgroup"
)

// Run is the appliance: it opens the store cfg names (OpenStore), loads
// the recognition pipeline (pipeline.New), builds the job service on them
// (daemon.New) and the doors on the job service (the
// HTTP API, WHIP, SIP), runs them until ctx ends, then closes the doors
// first (shutdown.doors) and stops the job service in its own stages
// (daemon/shutdown.go). A door or the job service failing starts the same
// shutdown. It is the composition root: the one place that names the
// store backend, the doors and the job service together.
func Run(ctx context.Context, cfg Config, log *slog.Logger) error {
	db, err := OpenStore(ctx, cfg.Config, nil)
	if err != nil {
		return err
	}
	// The process's one CPU admission policy: the engines' live decodes,
	// the live sessions' box meter and the batch passes' gate (the job
	// service reads it from the pipeline, pipeline.Transcriber.CPU).
	cpu := recognizer.NewCPU(cfg.Sphinx.LiveDecodes)
	pl, err := pipeline.New(cfg.ServicePipeline(), cpu, log)
	if err != nil {
		db.Close()
		return err
	}
	d := daemon.New(cfg.Config, db, pl, log)
	defer d.Close()
	acfg := cfg.HTTP()
	acfg.SetDefaults()
	if err := acfg.Validate(); err != nil {
		return err
	}
	srv, err := api.New(acfg, d, log.With("component", "api"))
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", cfg.Listen)
	if err != nil {
		return fmt.Errorf("listen: %w", err)
	}
	var opsLn net.Listener // the operations endpoints' own, when ops_listen is set
	if cfg.OpsListen != "" {
		if opsLn, err = net.Listen("tcp", cfg.OpsListen); err != nil {
			ln.Close()
			return fmt.Errorf("ops listen: %w", err)
		}
	}
	if !cfg.WebRTC.Disabled {
		door, err := webrtc.New(cfg.WebRTC, d, log.With("component", "webrtc"))
		if err != nil {
			return err
		}
		defer door.Close() // after the daemon has finalised its sessions
		srv.SetWHIP(door)
	}
	var sipSrv *sip.Server // the SIP door, when sip.listen is set
	var sipSocks sip.Sockets
	if cfg.SIP.Listen != "" || cfg.SIP.TLSListen != "" {
		if sipSrv, err = sip.New(cfg.SIP, d, log); err != nil {
			return err
		}
		for _, r := range cfg.SIP.Routes { // calls open sessions for these accounts without a key of theirs
			d.AddDoorAccounts(r.Account)
		}
	}
	if cfg.SIP.Listen != "" {
		if sipSocks.UDP, sipSocks.TCP, err = sip.Listen(cfg.SIP.Listen); err != nil {
			return fmt.Errorf("sip listen: %w", err)
		}
	}
	if cfg.SIP.TLSListen != "" {
		if sipSocks.TLS, err = net.Listen("tcp", cfg.SIP.TLSListen); err != nil {
			return fmt.Errorf("sip tls listen: %w", err)
		}
	}
	bounds := map[string]int{"api.max_conns": acfg.MaxConns}
	if sipSrv != nil {
		bounds["sip.max_tcp_conns"] = cfg.SIP.MaxTCPConns
		bounds["sip.max_calls (rtp sockets)"] = 4 * cfg.SIP.MaxCalls
	}
	checkDescriptors(log, bounds)
	if sipSrv != nil || !cfg.WebRTC.Disabled {
		granted, err := rtp.GrantedReadBuffer()
		checkReadQueue(log, granted, err)
	}
	if sipSrv != nil {
		registerSIPMetrics(d.Metrics(), sipSrv)
	}
	// The doors close first (shutdown.doors); only then is the daemon
	// stopped, in its own stages (daemon/shutdown.go). A door or the daemon
	// failing starts the same shutdown.
	doorCtx, closeDoors := context.WithCancel(ctx)
	defer closeDoors()
	daemonCtx, stopDaemon := context.WithCancel(context.WithoutCancel(ctx))
	defer stopDaemon()
	var doors errgroup.Group
	runDoor := func(run func(context.Context) error) {
		doors.Go(func() error {
			defer closeDoors()
			return run(doorCtx)
		})
	}
	var daemonErr error
	var running sync.WaitGroup
	running.Go(func() {
		defer closeDoors()
		daemonErr = d.Run(daemonCtx)
	})
	// The operations door (ops_listen) opens at once: during a long
	// recovery /healthz answers and /readyz says "not ready"
	// (daemon.ErrStarting). The other doors open once the daemon has
	// recovered what a kill left (daemon.Started): the sockets are bound,
	// so a client that comes sooner waits in the listen backlog instead of
	// being told its recovered session or job does not exist.
	if opsLn != nil {
		runDoor(func(ctx context.Context) error { return srv.RunOps(ctx, opsLn) })
		log.Info("ops listening", "addr", opsLn.Addr().String())
	}
	select {
	case <-d.Started():
		runDoor(func(ctx context.Context) error { return srv.Run(ctx, ln) })
		if sipSrv != nil {
			runDoor(func(ctx context.Context) error { return sipSrv.Run(ctx, sipSocks) })
		}
		var reloads []func() error
		if sipSrv != nil {
			reloads = append(reloads, sipSrv.ReloadTLS)
		}
		runDoor(func(ctx context.Context) error { reloadOnHangup(ctx, log, d.Audit, reloads...); return nil })
		log.Info("api listening", "addr", ln.Addr().String(), "tls", acfg.TLSCert != "")
	case <-doorCtx.Done(): // the daemon failed to start, or a signal came first
	}
	<-doorCtx.Done()
	doorErr := closeWithin(&doors, cfg.Shutdown.Doors, log)
	stopDaemon()
	running.Wait()
	log.Info("daemon stopped")
	err = errors.Join(doorErr, daemonErr)
	if errors.Is(err, context.Canceled) {
		return nil
	}
	return err
}

// closeWithin waits for the doors to close, at most bound (the doors
// stage of a shutdown), and logs the stage. A door still closing after it
// is left to finish while the daemon stops (a SIP call's session then ends
// in the live stage).
func closeWithin(doors *errgroup.Group, bound time.Duration, log *slog.Logger) error {
	start := time.Now()
	errc := make(chan error, 1)
	go func() { errc <- doors.Wait() }() // waited for below, up to bound
	t := time.NewTimer(bound)
	defer t.Stop()
	select {
	case err := <-errc:
		log.Info("shutdown stage done", "stage", "doors", "elapsed_ms", time.Since(start).Milliseconds(), "cut_short", false)
		return err
	case <-t.C:
		log.Warn("shutdown stage done", "stage", "doors", "elapsed_ms", time.Since(start).Milliseconds(), "cut_short", true)
		return nil
	}
}
