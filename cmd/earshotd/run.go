package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"

	"github.com/earshot-dev/earshot/app"
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
	return app.Run(ctx, cfg, log)
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
