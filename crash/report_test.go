package crash

import (
	"bytes"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestArm: a clean start reports no crash and leaves an empty report file;
// a report left by the last run is kept as PrevFile and logged, and the
// next start without a new report is clean again.
func TestArm(t *testing.T) {
	dir := t.TempDir()
	var logged bytes.Buffer
	log := slog.New(slog.NewTextHandler(&logged, nil))
	if crashed, err := Arm(dir, log); err != nil || crashed {
		t.Fatalf("first start: crashed %t, %v", crashed, err)
	}
	if fi, err := os.Stat(filepath.Join(dir, File)); err != nil || fi.Size() != 0 || fi.Mode().Perm() != 0o600 {
		t.Fatalf("report file after a clean start: %v, %v", fi, err)
	}
	const report = "fatal error: unexpected signal during runtime execution"
	if err := os.WriteFile(filepath.Join(dir, File), []byte(report), 0o600); err != nil {
		t.Fatal(err)
	}
	if crashed, err := Arm(dir, log); err != nil || !crashed {
		t.Fatalf("start after a crash: crashed %t, %v", crashed, err)
	}
	if b, err := os.ReadFile(filepath.Join(dir, PrevFile)); err != nil || string(b) != report {
		t.Errorf("%s = %q, %v; want the last run's report", PrevFile, b, err)
	}
	if !strings.Contains(logged.String(), "the last run crashed") || !strings.Contains(logged.String(), "unexpected signal") {
		t.Errorf("log lacks the crash and its excerpt: %s", logged.String())
	}
	if crashed, err := Arm(dir, log); err != nil || crashed {
		t.Errorf("start after a clean run: crashed %t, %v", crashed, err)
	}
}
