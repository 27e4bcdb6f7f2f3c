package systemd

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

func TestUnitDirectives(t *testing.T) {
	// What the appliance promises about its service (issue 7).
	for _, line := range []string{
		"User=earshot",
		"ExecStart=/usr/bin/earshotd run --config /etc/earshot/earshot.yaml",
		"StateDirectory=earshot",
		"ConfigurationDirectory=earshot",
		"NoNewPrivileges=yes",
		"ProtectSystem=strict",
		"ProtectHome=yes",
		"PrivateTmp=yes",
		"CapabilityBoundingSet=CAP_NET_BIND_SERVICE",
		"AmbientCapabilities=CAP_NET_BIND_SERVICE",
		"Restart=on-failure",
		"LimitNOFILE=65536",
		"TimeoutStopSec=60",
		"WantedBy=multi-user.target",
	} {
		t.Run(line, func(t *testing.T) {
			if !strings.Contains("\n"+Unit()+"\n", "\n"+line+"\n") {
				t.Errorf("unit lacks %q", line)
			}
		})
	}
	// kardianos/service renders SystemdScript as a template: the unit must
	// hold no markup, so that what it installs is this text.
	if strings.Contains(Unit(), "{{") {
		t.Error("unit contains template markup {{")
	}
	if !strings.Contains(Unit(), DefaultConfig) {
		t.Errorf("unit does not pass %s", DefaultConfig)
	}
}

func TestUnitFor(t *testing.T) {
	tests := []struct {
		name    string
		exe     string
		wantErr bool
	}{
		{"shipped", DefaultExec, false},
		{"local", "/usr/local/bin/earshotd", false},
		{"relative", "bin/earshotd", true},
		{"unclean", "/usr/bin/../bin/earshotd", true},
		{"space", "/opt/my apps/earshotd", true},
		{"specifier", "/opt/%h/earshotd", true},
		{"template", "/opt/{{Path}}/earshotd", true},
		{"newline", "/opt/x\nUser=root", true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := UnitFor(tc.exe)
			if tc.wantErr {
				if !errors.Is(err, ErrBadExec) {
					t.Fatalf("UnitFor(%q) = %v, want ErrBadExec", tc.exe, err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			want := "\nExecStart=" + tc.exe + " run --config " + DefaultConfig + "\n"
			if !strings.Contains(got, want) {
				t.Errorf("UnitFor(%q) lacks %q", tc.exe, want)
			}
			if len(got)-len(Unit()) != len(tc.exe)-len(DefaultExec) {
				t.Errorf("UnitFor changed more than ExecStart")
			}
		})
	}
}

// TestVerify runs systemd-analyze verify on the unit, with ExecStart naming
// a binary that exists here (verify checks it is executable).
func TestVerify(t *testing.T) {
	sa, err := exec.LookPath("systemd-analyze")
	if err != nil {
		t.Skip("systemd-analyze not installed (Debian package systemd)")
	}
	exe, err := exec.LookPath("true")
	if err != nil {
		t.Skip("no true(1) to stand in for earshotd")
	}
	exe, _ = filepath.EvalSymlinks(exe)
	text, err := UnitFor(exe)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), UnitName)
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.CommandContext(t.Context(), sa, "verify", path).CombinedOutput()
	// verify warns (unknown keys, bad values) on stderr with exit 0.
	if err != nil || len(bytes.TrimSpace(out)) > 0 {
		t.Fatalf("systemd-analyze verify: %v\n%s", err, out)
	}
}
