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

	"golang.org/x/sync/errgroup"

	"github.com/earshot-dev/earshot/api"
	"github.com/earshot-dev/earshot/daemon"
	"github.com/earshot-dev/earshot/ingest/sip"
	"github.com/earshot-dev/earshot/ingest/webrtc"
)

// loadConfig reads --config, then EARSHOT_* variables, then the given flags
// (flags win), fills defaults and validates.
func loadConfig(fs *flag.FlagSet, path string, set func(*daemon.Config)) (daemon.Config, error) {
	cfg, err := daemon.LoadConfig(path, os.Environ())
	if err != nil {
		return cfg, err
	}
	set(&cfg)
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
	fs := flag.NewFlagSet("run", flag.ContinueOnError)
	fs.SetOutput(stderr)
	cfgPath := fs.String("config", "", "YAML config file")
	listen := fs.String("listen", "", "API listen address (default 127.0.0.1:8080)")
	dataDir := fs.String("data-dir", "", "data directory (default /var/lib/earshot)")
	publicURL := fs.String("public-url", "", "public base URL")
	logLevel := fs.String("log-level", "", "debug, info, warn or error")
	decoders := fs.Int("decoders", 0, "PocketSphinx decoders (default: CPUs)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	cfg, err := loadConfig(fs, *cfgPath, func(c *daemon.Config) {
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
	})
	if err != nil {
		return err
	}
	log := newLogger(stdout, cfg.LogLevel)
	d, err := daemon.New(cfg, log)
	if err != nil {
		return err
	}
	defer d.Close()
	acfg := api.Config{PublicURL: cfg.PublicURL, MaxBodyBytes: cfg.Limits.MaxBodyBytes, MaxUploadBytes: cfg.Limits.MaxUploadBytes,
		Live: api.LiveLimits{MaxFrameBytes: cfg.Live.MaxFrameBytes, MaxMessagesPerSecond: cfg.Live.MaxMessagesPerSecond, IdleTimeout: cfg.Live.IdleTimeout}}
	acfg.SetDefaults()
	if err := acfg.Validate(); err != nil {
		return err
	}
	ln, err := net.Listen("tcp", cfg.Listen)
	if err != nil {
		return fmt.Errorf("listen: %w", err)
	}
	srv := api.New(acfg, d, log.With("component", "api"))
	if !cfg.WebRTC.Disabled {
		door, err := webrtc.New(cfg.WebRTC, d, log.With("component", "webrtc"))
		if err != nil {
			return err
		}
		defer door.Close() // after the daemon has finalised its sessions
		srv.SetWHIP(door)
	}
	var sipSrv *sip.Server // the SIP door, when sip.listen is set
	var sipUDP net.PacketConn
	var sipTCP net.Listener
	if cfg.SIP.Listen != "" {
		if sipSrv, err = sip.New(cfg.SIP, d, log); err != nil {
			return err
		}
		if sipUDP, err = net.ListenPacket("udp", cfg.SIP.Listen); err != nil {
			return fmt.Errorf("sip listen: %w", err)
		}
		if sipTCP, err = net.Listen("tcp", sipUDP.LocalAddr().String()); err != nil {
			sipUDP.Close()
			return fmt.Errorf("sip listen: %w", err)
		}
	}
	g, gctx := errgroup.WithContext(ctx)
	g.Go(func() error { return d.Run(gctx) })
	g.Go(func() error { return srv.Run(gctx, ln) })
	if sipSrv != nil {
		g.Go(func() error { return sipSrv.Run(gctx, sipUDP, sipTCP) })
	}
	log.Info("api listening", "addr", ln.Addr().String())
	err = g.Wait()
	log.Info("daemon stopped")
	if errors.Is(err, context.Canceled) {
		return nil
	}
	return err
}
