package e2e

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// fillDisk writes a file in dir until the filesystem is full and returns its
// path.
func fillDisk(t *testing.T, dir string) string {
	t.Helper()
	p := filepath.Join(dir, "filler")
	f, err := os.Create(p)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	buf := make([]byte, 64<<10)
	for {
		if _, err := f.Write(buf); err != nil {
			if !errors.Is(err, syscall.ENOSPC) {
				t.Fatalf("fill the disk: %v", err)
			}
			break
		}
	}
	// Smaller writes take the last blocks too.
	for n := 4096; n >= 1; n /= 2 {
		for {
			if _, err := f.Write(buf[:n]); err != nil {
				break
			}
		}
	}
	return p
}

// TestDiskFullStoringResult (issue 13, finding 9): the disk fills while a
// job is being transcribed, so its result cannot be stored. The running
// daemon ends the job as error 507 (at once, or as soon as the error itself
// fits); it never stays processing until a restart.
func TestDiskFullStoringResult(t *testing.T) {
	t.Parallel() // waits more than it computes: see doc.go
	if os.Geteuid() != 0 {
		t.Skip("mounting a tmpfs needs root")
	}
	dir := t.TempDir()
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size=16m", "tmpfs", dir).CombinedOutput(); err != nil {
		t.Skipf("mount tmpfs: %v %s", err, out)
	}
	t.Cleanup(func() { exec.Command("umount", "-l", dir).Run() })
	d := startDaemon(t, filepath.Join(dir, "data"), "")
	key := createKey(t, d.DataDir, "acme")
	id := queueLongJobs(t, d, key, 1)[0]
	d.WaitLog(time.Minute, `"job processing"`, id)
	filler := fillDisk(t, dir)
	d.WaitLog(3*time.Minute, `"store result"`, id, "no space")
	rec := map[string]any{}
	d.do("GET", "/v2/pre-recorded/"+id, key, nil, "", &rec)
	t.Logf("with the disk still full the job is %v %v", rec["status"], rec["error_code"])

	// Space returns; the job ends without a restart.
	if err := os.Remove(filler); err != nil {
		t.Fatal(err)
	}
	rec = d.waitJob(key, id, 30*time.Second)
	if rec["status"] != "error" || rec["error_code"] != 507.0 {
		t.Fatalf("job whose result did not fit ended %v %v, want error 507", rec["status"], rec["error_code"])
	}
	// The daemon goes on working.
	short, _ := clip(t, "pocketsphinx-goforward.wav")
	_, up2, _ := d.upload(key, short)
	var j struct{ ID string }
	if status, body := d.postJSON("/v2/pre-recorded", key, map[string]any{"audio_url": up2.AudioURL}, &j); status != 201 {
		t.Fatalf("create after the disk had room again: %d %s", status, body)
	}
	if rec := d.waitJob(key, j.ID, 2*time.Minute); rec["status"] != "done" {
		t.Errorf("job after the disk had room again ended %v %v", rec["status"], rec["error_code"])
	}
}
