package main

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/earshot-dev/earshot/packaging"
)

func TestConfigCheck(t *testing.T) {
	tests := []struct {
		name string
		yaml string
		want []string // output lines; ["ok"] for a good file
	}{
		{"packaged default", string(packaging.DefaultConfig()), []string{"ok"}},
		{"empty file", "", []string{"ok"}},
		{"unknown nested key", "limits:\n  max_queud: 5\n",
			[]string{"limits.max_queud (line 2): unknown key"}},
		{"every problem at once", "workers: many\nbogus: 1\ncallbacks:\n  max_age: forever\n",
			[]string{
				`workers (line 1): must be an integer, not "many"`,
				"bogus (line 2): unknown key",
				`callbacks.max_age (line 4): must be a duration such as "90s", "5m" or "72h", not "forever"`,
			}},
		{"section not a mapping", "limits: 5\n", []string{"limits (line 1): must be a mapping of keys"}},
		{"validate names key and line", "listen: 127.0.0.1:8080\n\ncallbacks:\n  max_age: 1h\nworkers: 100\n",
			[]string{
				"workers (line 5): must be 1 to 64, not 100",
				"callbacks.max_age (line 4): must be at least 24h (PROTOCOL.md), not 1h0m0s",
			}},
		{"nested validate", "sphinx:\n  hmm: /nonexistent/model\n",
			[]string{"sphinx.hmm (line 2): stat /nonexistent/model: no such file or directory"}},
		{"default not in file", "log_level: \"\"\nlimits:\n  max_attempts: -1\n",
			[]string{"limits.max_attempts (line 3): must be at least 1"}},
		{"yaml syntax", "listen: [127.0.0.1\nworkers: 2\n", []string{"yaml: line 1: did not find expected ',' or ']'"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "earshot.yaml")
			if err := os.WriteFile(path, []byte(tc.yaml), 0o600); err != nil {
				t.Fatal(err)
			}
			out, err := earshotd(t, "config", "check", path)
			if ok := len(tc.want) == 1 && tc.want[0] == "ok"; ok != (err == nil) {
				t.Errorf("error = %v, want error %t (exit 1 on problems)", err, !ok)
			}
			got := strings.Split(strings.TrimSpace(out), "\n")
			if !slices.Equal(slices.Sorted(slices.Values(got)), slices.Sorted(slices.Values(tc.want))) {
				t.Errorf("output:\n%s\nwant:\n%s", out, strings.Join(tc.want, "\n"))
			}
		})
	}
	if _, err := earshotd(t, "config", "check", filepath.Join(t.TempDir(), "missing.yaml")); err == nil {
		t.Error("check of a missing file succeeded")
	}
	if _, err := earshotd(t, "config", "lint"); err == nil {
		t.Error("config lint succeeded")
	}
}

// TestConfigCheckFlag: config check takes --config FILE (and
// --config=FILE) as run does, besides the positional form (issue 16:
// --config was refused).
func TestConfigCheckFlag(t *testing.T) {
	good := filepath.Join(t.TempDir(), "earshot.yaml")
	bad := filepath.Join(t.TempDir(), "bad.yaml")
	if err := os.WriteFile(good, []byte("workers: 2\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(bad, []byte("workers: 100\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"--config", good}, {"--config=" + good}, {good}} {
		if out, err := earshotd(t, append([]string{"config", "check"}, args...)...); err != nil || strings.TrimSpace(out) != "ok" {
			t.Errorf("config check %v: %q, %v", args, out, err)
		}
	}
	if out, err := earshotd(t, "config", "check", "--config", bad); err == nil || !strings.Contains(out, "workers (line 1)") {
		t.Errorf("config check --config %s: %q, %v; want the workers problem", bad, out, err)
	}
	for _, args := range [][]string{{"--config"}, {"--config="}, {"--bogus", good}, {good, good}} {
		if _, err := earshotd(t, append([]string{"config", "check"}, args...)...); err == nil {
			t.Errorf("config check %v succeeded", args)
		}
	}
}
