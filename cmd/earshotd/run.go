package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"golang.org/x/sync/errgroup"

	"github.com/earshot-dev/earshot/api"
	"github.com/earshot-dev/earshot/app"
	"github.com/earshot-dev/earshot/daemon"
	"github.com/earshot-dev/earshot/ingest/sip"
	"github.com/earshot-dev/earshot/ingest/webrtc"
)

// loadConfig reads the file at path (none when ""), applies the EARSHOT_*
// variables of env, then set (the flags: they win), fills defaults and
// validates.
func loadConfig(path string, env []string, set func(*app.Config) error) (app.Config, error) {
	cfg, err := app.Load(path, env)
	if err != nil {
		return cfg, err
	}
	if err := set(&cfg); err != nil {
		return cfg, err
	}
	cfg.SetDefaults()
	if err := cfg.Validate(); err != nil {
		return cfg, fmt.Errorf("invalid config:\n%w", err)
	}
	return cfg, nil
}

func newLogger(w io.Writer, level string) *slog.Logger {
	var l slog.Level
	if err := l.UnmarshalText([]byte(level)); err != nil {
		l = slog.LevelInfo
	}
	return slog.New(slog.NewJSONHandler(w, &slog.HandlerOptions{Level: l}))
}

func cmdRun(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	cfg, err := runConfig(args, os.Environ(), stderr)
	if err != nil {
		return err
	}
	logOut := newLineBuffer(stdout)
	defer logOut.Close()
	log := newLogger(logOut, cfg.LogLevel)
	db, err := app.OpenStore(ctx, cfg.Config, nil)
	if err != nil {
		return err
	}
	d, err := daemon.New(cfg.Config, db, log)
	if err != nil {
		return err
	}
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
	if sipSrv != nil {
		d.Metrics().MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "earshot_sip_tcp_connections", Help: "TCP connections the SIP door holds open (bounded by sip.max_tcp_conns).",
		}, func() float64 { return float64(sipSrv.TCPConns()) }))
		d.Metrics().MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "earshot_sip_calls", Help: "SIP calls being set up or running.",
		}, func() float64 { return float64(sipSrv.Calls()) }))
		d.Metrics().MustRegister(prometheus.NewCounterFunc(prometheus.CounterOpts{
			Name: "earshot_sip_tls_handshakes_total", Help: "TLS handshakes completed at the SIP door (sip.tls_listen).",
		}, func() float64 { n, _ := sipSrv.TLSHandshakes(); return float64(n) }))
		d.Metrics().MustRegister(prometheus.NewCounterFunc(prometheus.CounterOpts{
			Name: "earshot_sip_tls_handshake_failures_total", Help: "TLS connections at the SIP door closed because their handshake failed or did not finish within sip.tls_handshake_timeout.",
		}, func() float64 { _, n := sipSrv.TLSHandshakes(); return float64(n) }))
		d.Metrics().MustRegister(prometheus.NewCounterFunc(prometheus.CounterOpts{
			Name: "earshot_sip_auth_failures_total", Help: "SIP digest authentications that failed (wrong credentials, a nonce not the door's) on routes with auth.",
		}, func() float64 { n, _ := sipSrv.AuthTotals(); return float64(n) }))
		d.Metrics().MustRegister(prometheus.NewCounterFunc(prometheus.CounterOpts{
			Name: "earshot_sip_auth_refused_total", Help: "INVITEs refused 403 unchallenged: their source failed digest authentication sip.auth_max_failures times within a minute.",
		}, func() float64 { _, n := sipSrv.AuthTotals(); return float64(n) }))
		d.Metrics().MustRegister(prometheus.NewCounterFunc(prometheus.CounterOpts{
			Name: "earshot_sip_refused_total", Help: "SIP datagrams and TCP connections from sources outside sip.allow dropped unread.",
		}, func() float64 { return float64(sipSrv.Refused()) }))
		d.Metrics().MustRegister(prometheus.NewCounterFunc(prometheus.CounterOpts{
			Name: "earshot_rtp_packets_total", Help: "RTP packets played out, summed over the streams of ended SIP calls.",
		}, func() float64 { r, _ := sipSrv.RTPTotals(); return float64(r) }))
		d.Metrics().MustRegister(prometheus.NewCounterFunc(prometheus.CounterOpts{
			Name: "earshot_rtp_lost_packets_total", Help: "RTP packets never received (concealed with silence), summed over the streams of ended SIP calls.",
		}, func() float64 { _, l := sipSrv.RTPTotals(); return float64(l) }))
		d.Metrics().MustRegister(prometheus.NewCounterFunc(prometheus.CounterOpts{
			Name: "earshot_rtp_foreign_packets_total", Help: "RTP packets dropped because they came from a source other than the call's (SDP, signalling peer or latched source), summed over ended SIP calls.",
		}, func() float64 { f, _, _ := sipSrv.SourceTotals(); return float64(f) }))
		d.Metrics().MustRegister(prometheus.NewCounterFunc(prometheus.CounterOpts{
			Name: "earshot_rtp_latched_total", Help: "Streams of ended SIP calls that latched onto an RTP source other than their SDP address (sip.rtp_latching).",
		}, func() float64 { _, l, _ := sipSrv.SourceTotals(); return float64(l) }))
		d.Metrics().MustRegister(prometheus.NewCounterFunc(prometheus.CounterOpts{
			Name: "earshot_sip_calls_without_audio_total", Help: "SIP calls that ended having received no RTP audio.",
		}, func() float64 { _, _, n := sipSrv.SourceTotals(); return float64(n) }))
		d.Metrics().MustRegister(prometheus.NewCounterFunc(prometheus.CounterOpts{
			Name: "earshot_sip_dtmf_dropped_total", Help: "DTMF keys (RFC 4733 events, SIP INFO) of ended SIP calls dropped: past their call's bound (a flood: 40 at once, 20 a second after), or with the audio of a session too far behind.",
		}, func() float64 { return float64(sipSrv.DTMFDropped()) }))
		d.Metrics().MustRegister(prometheus.NewCounterFunc(prometheus.CounterOpts{
			Name: "earshot_sip_srtp_refused_total", Help: "SIP offers refused with 488 by their route's srtp policy (plain on mandatory, RTP/SAVP on off, SDES keys without TLS, no usable a=crypto, a re-offer turning SRTP on or off).",
		}, func() float64 { n, _, _ := sipSrv.SRTPTotals(); return float64(n) }))
		d.Metrics().MustRegister(prometheus.NewCounterFunc(prometheus.CounterOpts{
			Name: "earshot_srtp_auth_failed_packets_total", Help: "SRTP and SRTCP packets of ended SIP calls dropped because they did not authenticate (forged, damaged, plain, unknown MKI).",
		}, func() float64 { _, n, _ := sipSrv.SRTPTotals(); return float64(n) }))
		d.Metrics().MustRegister(prometheus.NewCounterFunc(prometheus.CounterOpts{
			Name: "earshot_srtp_replayed_packets_total", Help: "SRTP and SRTCP packets of ended SIP calls dropped as replays (RFC 3711 replay window).",
		}, func() float64 { _, _, n := sipSrv.SRTPTotals(); return float64(n) }))
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
	runDoor(func(ctx context.Context) error { return srv.Run(ctx, ln) })
	if opsLn != nil {
		runDoor(func(ctx context.Context) error { return srv.RunOps(ctx, opsLn) })
		log.Info("ops listening", "addr", opsLn.Addr().String())
	}
	if sipSrv != nil {
		runDoor(func(ctx context.Context) error { return sipSrv.Run(ctx, sipSocks) })
	}
	var reloads []func() error
	if sipSrv != nil {
		reloads = append(reloads, sipSrv.ReloadTLS)
	}
	runDoor(func(ctx context.Context) error { reloadOnHangup(ctx, log, d.Audit, reloads...); return nil })
	var daemonErr error
	var running sync.WaitGroup
	running.Go(func() {
		defer closeDoors()
		daemonErr = d.Run(daemonCtx)
	})
	log.Info("api listening", "addr", ln.Addr().String(), "tls", acfg.TLSCert != "")
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

// setFlags collects repeated --set key.path=value flags.
type setFlags []string

func (s *setFlags) String() string { return strings.Join(*s, " ") }

func (s *setFlags) Set(v string) error {
	if k, _, ok := strings.Cut(v, "="); !ok || k == "" {
		return fmt.Errorf("want key.path=value, not %q", v)
	}
	*s = append(*s, v)
	return nil
}

// apply sets each key in order through app.Config.Set.
func (s setFlags) apply(c *app.Config) error {
	var errs []error
	for _, kv := range s {
		k, v, _ := strings.Cut(kv, "=")
		if err := c.Set(k, v); err != nil {
			errs = append(errs, fmt.Errorf("--set %s: %w", k, err))
		}
	}
	return errors.Join(errs...)
}

// runConfig parses the run flags and loads the config they name: defaults <
// file < env < flags, --set after the named flags.
func runConfig(args, env []string, stderr io.Writer) (app.Config, error) {
	fs := flag.NewFlagSet("run", flag.ContinueOnError)
	fs.SetOutput(stderr)
	cfgPath := fs.String("config", "", "YAML config file")
	listen := fs.String("listen", "", "API listen address (default 127.0.0.1:8080)")
	dataDir := fs.String("data-dir", "", "data directory (default /var/lib/earshot)")
	publicURL := fs.String("public-url", "", "public base URL")
	logLevel := fs.String("log-level", "", "debug, info, warn or error")
	decoders := fs.Int("decoders", 0, "PocketSphinx decoders (default: CPUs)")
	var sets setFlags
	fs.Var(&sets, "set", "`key.path=value`: set any config key, e.g. --set limits.max_queued=100 (repeatable; after the other flags)")
	if err := fs.Parse(args); err != nil {
		return app.Config{}, err
	}
	return loadConfig(*cfgPath, env, func(c *app.Config) error {
		if *listen != "" {
			c.Listen = *listen
		}
		if *dataDir != "" {
			c.DataDir = *dataDir
		}
		if *publicURL != "" {
			c.PublicURL = *publicURL
		}
		if *logLevel != "" {
			c.LogLevel = *logLevel
		}
		if *decoders != 0 {
			c.Sphinx.Decoders = *decoders
		}
		return sets.apply(c)
	})
}
