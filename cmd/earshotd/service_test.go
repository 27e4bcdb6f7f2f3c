package main

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/earshot-dev/earshot/packaging"
	"github.com/earshot-dev/earshot/systemd"
)

// earshotd runs the command line in process and returns stdout and the error.
func earshotd(t *testing.T, args ...string) (string, error) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	err := run(t.Context(), args, &stdout, &stderr)
	if err != nil {
		t.Logf("earshotd %s: %v\n%s", strings.Join(args, " "), err, stderr.String())
	}
	return stdout.String(), err
}

func TestServiceInstallRoot(t *testing.T) {
	truePath, err := exec.LookPath("true")
	if err != nil {
		t.Fatal(err)
	}
	truePath, _ = filepath.EvalSymlinks(truePath)
	tests := []struct {
		name     string
		exec     string // --exec; "" for the default
		wantExec string
		config   string // existing config file content; "" for none
	}{
		{name: "default exec", wantExec: systemd.DefaultExec},
		{name: "own exec, existing config", exec: truePath, wantExec: truePath, config: "listen: 0.0.0.0:80\n"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			root := t.TempDir()
			cfgPath := filepath.Join(root, systemd.DefaultConfig)
			if tc.config != "" {
				if err := os.MkdirAll(filepath.Dir(cfgPath), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(cfgPath, []byte(tc.config), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			status := func() string {
				t.Helper()
				out, err := earshotd(t, "service", "status", "--root", root)
				if err != nil {
					t.Fatal(err)
				}
				return strings.TrimSpace(out)
			}
			if got := status(); got != "not installed" {
				t.Errorf("status before install = %q", got)
			}
			args := []string{"service", "install", "--root", root}
			if tc.exec != "" {
				args = append(args, "--exec", tc.exec)
			}
			if _, err := earshotd(t, args...); err != nil {
				t.Fatal(err)
			}
			unitPath := filepath.Join(root, "etc/systemd/system", systemd.UnitName)
			got, err := os.ReadFile(unitPath)
			if err != nil {
				t.Fatal(err)
			}
			want, err := systemd.UnitFor(tc.wantExec)
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != want {
				t.Errorf("installed unit differs from systemd.UnitFor(%s)", tc.wantExec)
			}
			if tc.exec == "" && string(got) != systemd.Unit() {
				t.Errorf("installed unit differs from systemd/earshotd.service")
			}
			link, err := os.Readlink(filepath.Join(root, "etc/systemd/system/multi-user.target.wants", systemd.UnitName))
			if err != nil || link != "/etc/systemd/system/"+systemd.UnitName {
				t.Errorf("enable symlink = %q, %v", link, err)
			}
			if got := status(); got != "installed, enabled" {
				t.Errorf("status after install = %q", got)
			}
			cfg, err := os.ReadFile(cfgPath)
			if err != nil {
				t.Fatal(err)
			}
			wantCfg := packaging.DefaultConfig()
			if tc.config != "" {
				wantCfg = []byte(tc.config)
			}
			if !bytes.Equal(cfg, wantCfg) {
				t.Errorf("config after install:\n%s\nwant:\n%s", cfg, wantCfg)
			}
			if tc.exec != "" {
				verifyUnit(t, unitPath)
			}

			if _, err := earshotd(t, args...); err == nil || !strings.Contains(err.Error(), "already exists") {
				t.Errorf("second install: %v, want already exists", err)
			}
			if _, err := earshotd(t, "service", "start", "--root", root); err == nil {
				t.Error("start with --root succeeded")
			}
			if _, err := earshotd(t, "service", "uninstall", "--root", root); err != nil {
				t.Fatal(err)
			}
			if got := status(); got != "not installed" {
				t.Errorf("status after uninstall = %q", got)
			}
			if _, err := os.Stat(cfgPath); err != nil {
				t.Errorf("uninstall removed the config: %v", err)
			}
			if _, err := earshotd(t, "service", "uninstall", "--root", root); err == nil {
				t.Error("second uninstall succeeded")
			}
		})
	}
}

// verifyUnit runs systemd-analyze verify on the unit file at path.
func verifyUnit(t *testing.T, path string) {
	t.Helper()
	sa, err := exec.LookPath("systemd-analyze")
	if err != nil {
		t.Log("systemd-analyze not installed (Debian package systemd): unit not verified")
		return
	}
	out, err := exec.CommandContext(t.Context(), sa, "verify", path).CombinedOutput()
	if err != nil || len(bytes.TrimSpace(out)) > 0 {
		t.Errorf("systemd-analyze verify %s: %v\n%s", path, err, out)
	}
}

func TestServiceUsage(t *testing.T) {
	for _, args := range [][]string{
		{"service"},
		{"service", "restart"},
		{"service", "install", "--root", t.TempDir(), "extra"},
		{"service", "install", "--root", t.TempDir(), "--exec", "relative/earshotd"},
	} {
		if _, err := earshotd(t, args...); err == nil {
			t.Errorf("earshotd %v succeeded", args)
		}
	}
}

// TestServeManaged runs the kardianos/service program the way a service
// manager does: run ends when the signal context is cancelled (graceful
// stop, nil), or by itself with its error.
func TestServeManaged(t *testing.T) {
	errBoom := errors.New("listen: address in use")
	tests := []struct {
		name string
		run  func(ctx context.Context) error
		stop bool // cancel the parent context (SIGTERM)
		want error
	}{
		{"graceful stop", func(ctx context.Context) error { <-ctx.Done(); return nil }, true, nil},
		{"fails by itself", func(ctx context.Context) error { return errBoom }, false, errBoom},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(t.Context())
			defer cancel()
			started := make(chan struct{})
			run := func(ctx context.Context) error {
				close(started)
				return tc.run(ctx)
			}
			done := make(chan error, 1)
			go func() { done <- serveManaged(ctx, run) }()
			<-started
			if tc.stop {
				cancel()
			}
			if err := <-done; !errors.Is(err, tc.want) {
				t.Errorf("serveManaged = %v, want %v", err, tc.want)
			}
		})
	}
}
