package main

import (
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestRunConfigPrecedence: defaults < file < EARSHOT_* < flags, with --set
// applied after the named flags and in order; bad or unknown --set keys
// and variables are errors naming them.
func TestRunConfigPrecedence(t *testing.T) {
	path := filepath.Join(t.TempDir(), "earshot.yaml")
	if err := os.WriteFile(path, []byte("workers: 2\nlog_level: warn\nlimits:\n  max_queued: 7\napi:\n  max_conns: 50\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	type got struct {
		workers, maxQueued, maxConns, decoders int
		logLevel                               string
		idle                                   time.Duration
	}
	tests := []struct {
		name    string
		args    []string
		env     []string
		want    got
		wantErr string
	}{
		{"defaults", nil, nil, got{1, 10000, 4096, 0, "info", time.Minute}, ""},
		{"file", []string{"--config", path}, nil, got{2, 7, 50, 0, "warn", time.Minute}, ""},
		{"env over file", []string{"--config", path},
			[]string{"EARSHOT_WORKERS=3", "EARSHOT_LIMITS_MAX_QUEUED=8", "EARSHOT_API_IDLE_TIMEOUT=5s", "EARSHOT_DECODERS=2"},
			got{3, 8, 50, 2, "warn", 5 * time.Second}, ""},
		{"flags over env", []string{"--config", path, "--log-level", "debug", "--decoders", "3", "--set", "workers=4", "--set", "api.max_conns=60"},
			[]string{"EARSHOT_WORKERS=3", "EARSHOT_LOG_LEVEL=error", "EARSHOT_SPHINX_DECODERS=1"},
			got{4, 7, 60, 3, "debug", time.Minute}, ""},
		{"--set after named flags, in order", []string{"--set", "log_level=error", "--log-level", "debug", "--set", "workers=5", "--set", "workers=6"}, nil,
			got{6, 10000, 4096, 0, "error", time.Minute}, ""},
		{"--set empty value is the default", []string{"--config", path, "--set", "workers="}, nil, got{1, 7, 50, 0, "warn", time.Minute}, ""},
		{"bad --set value", []string{"--set", "workers=x"}, nil, got{}, `--set workers: workers: must be an integer, not "x"`},
		{"unknown --set key", []string{"--set", "limits.max_qeued=1"}, nil, got{}, "--set limits.max_qeued: config: unknown key"},
		{"--set without =", []string{"--set", "workers"}, nil, got{}, `want key.path=value, not "workers"`},
		{"--set invalid after defaults", []string{"--set", "workers=100"}, nil, got{}, "workers: must be 1 to 64, not 100"},
		{"unknown variable", nil, []string{"EARSHOT_WORKER=2"}, got{}, "EARSHOT_WORKER: config: unknown key"},
		{"bad variable", nil, []string{"EARSHOT_LIVE_TOKEN_TTL=soon"}, got{}, `EARSHOT_LIVE_TOKEN_TTL (live.token_ttl): must be a duration`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg, err := runConfig(tt.args, tt.env, io.Discard)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("runConfig = %v, want an error containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			g := got{cfg.Workers, cfg.Limits.MaxQueued, cfg.API.MaxConns, cfg.Sphinx.Decoders, cfg.LogLevel, cfg.API.IdleTimeout}
			if tt.want.decoders == 0 {
				g.decoders = 0 // the default is the CPU count
			}
			if g != tt.want {
				t.Errorf("got %+v, want %+v", g, tt.want)
			}
			if a := cfg.HTTP(); a.MaxConns != cfg.API.MaxConns || a.IdleTimeout != cfg.API.IdleTimeout ||
				a.ReadTimeout != cfg.API.ReadTimeout || a.WriteTimeout != cfg.API.WriteTimeout || a.MaxUploadBytes != cfg.Limits.MaxUploadBytes {
				t.Errorf("HTTP does not carry the api: section: %+v", a)
			}
		})
	}
}

// TestConfigCheckEnv: config check applies EARSHOT_* as run does and names
// the variable of every bad or unknown one, and of a value it set that
// Validate refuses.
func TestConfigCheckEnv(t *testing.T) {
	path := filepath.Join(t.TempDir(), "earshot.yaml")
	if err := os.WriteFile(path, []byte("workers: 100\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		env  []string
		want []string
	}{
		{"env fixes the file", []string{"EARSHOT_WORKERS=2"}, nil},
		{"file problem stays", nil, []string{"workers (line 1): must be 1 to 64, not 100"}},
		{"bad and unknown variables", []string{"EARSHOT_WORKERS=many", "EARSHOT_LIMITS_MAX_QUED=1", "EARSHOT_STORE_SEED=3"}, []string{
			`EARSHOT_WORKERS: workers: must be an integer, not "many"`,
			"EARSHOT_LIMITS_MAX_QUED: names no config key",
		}},
		{"invalid value from env", []string{"EARSHOT_WORKERS=2", "EARSHOT_CALLBACKS_MAX_AGE=1h"}, []string{
			"callbacks.max_age: must be at least 24h (PROTOCOL.md), not 1h0m0s (set by EARSHOT_CALLBACKS_MAX_AGE)",
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			problems, err := checkConfig(path, tt.env)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, p := range problems {
				got = append(got, describe(p))
			}
			if strings.Join(got, "\n") != strings.Join(tt.want, "\n") {
				t.Errorf("problems:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(tt.want, "\n"))
			}
		})
	}
	t.Run("through the command", func(t *testing.T) {
		t.Setenv("EARSHOT_WORKERS", "3")
		if out, err := earshotd(t, "config", "check", path); err != nil || strings.TrimSpace(out) != "ok" {
			t.Errorf("config check with EARSHOT_WORKERS=3: %q, %v", out, err)
		}
	})
}
