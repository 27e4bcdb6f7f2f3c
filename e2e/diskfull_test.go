package e2e

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
	"unsafe"
)

// A disk that fills is the daemon's file-size limit (RLIMIT_FSIZE) lowered
// while it runs: past it every write and every growth of a file fails with
// EFBIG, which the daemon takes as a full disk (store.NoSpace), as it takes
// ENOSPC. Lowering another process's soft limit and raising it back up to
// its hard limit needs no privilege when both run as the same user
// (prlimit(2)), so these tests run, never skip, in an unprivileged
// container; a tmpfs, which they used before, needs CAP_SYS_ADMIN to mount.

// noFileSizeLimit is RLIM_INFINITY.
const noFileSizeLimit = ^uint64(0)

// limitFileSize sets d's soft file-size limit to n bytes (0: no write to a
// regular file succeeds; noFileSizeLimit: as much as its hard limit
// allows). Writes to pipes and sockets, its log among them, are not
// limited. The limit is lifted again before d is stopped, so a test that
// fails with the disk full still stops it cleanly.
func (d *daemonProc) limitFileSize(n uint64) {
	d.t.Helper()
	pid := d.cmd.Process.Pid
	var old syscall.Rlimit
	if err := prlimit(pid, syscall.RLIMIT_FSIZE, nil, &old); err != nil {
		d.t.Fatalf("read earshotd's file size limit: %v", err)
	}
	lim := syscall.Rlimit{Cur: min(n, old.Max), Max: old.Max}
	if err := prlimit(pid, syscall.RLIMIT_FSIZE, &lim, nil); err != nil {
		d.t.Fatalf("set earshotd's file size limit to %d: %v", n, err)
	}
	d.t.Cleanup(func() { prlimit(pid, syscall.RLIMIT_FSIZE, &old, nil) }) // before d.Stop: cleanups run last first
}

// prlimit is prlimit(2) on pid (the syscall package has no wrapper).
func prlimit(pid, resource int, newLimit, old *syscall.Rlimit) error {
	_, _, e := syscall.RawSyscall6(syscall.SYS_PRLIMIT64, uintptr(pid), uintptr(resource),
		uintptr(unsafe.Pointer(newLimit)), uintptr(unsafe.Pointer(old)), 0, 0)
	if e != 0 {
		return e
	}
	return nil
}

// checkRunning fails the test when d has exited (a daemon killed by the
// SIGXFSZ that comes with EFBIG, say).
func (d *daemonProc) checkRunning(when string) {
	d.t.Helper()
	select {
	case <-d.done:
		d.t.Fatalf("earshotd exited %s: %s", when, d.stderr.String())
	default:
	}
}

// tempBlobs lists the partial blob files (".tmp-*") in d's blob directory.
func (d *daemonProc) tempBlobs() []string {
	d.t.Helper()
	entries, err := os.ReadDir(filepath.Join(d.DataDir, "blobs"))
	if err != nil {
		d.t.Fatal(err)
	}
	var tmp []string
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), ".tmp-") {
			tmp = append(tmp, e.Name())
		}
	}
	return tmp
}

// TestDiskFull: an upload that does not fit gets 507 with the error body
// and leaves no partial file; what fits is still stored and transcribed;
// with nothing fitting, uploads and job creation are 507 (the database's
// commits too), reads and health go on; once there is room again uploads
// and jobs work, nothing stored before is damaged, and a restart finds a
// consistent store.
func TestDiskFull(t *testing.T) {
	d := startDaemon(t, "", "")
	key := createKey(t, d.DataDir, "acme")
	small, _ := clip(t, "pocketsphinx-goforward.wav")         // 89 kB
	big, _ := clip(t, "ljspeech-LJ001-0007-to-0016-long.wav") // 2.1 MB
	status, first, body := d.upload(key, small)
	if status != 200 {
		t.Fatalf("first upload: %d %s", status, body)
	}
	full := func(what string, status int, body []byte) {
		t.Helper()
		var eb errBody
		if err := json.Unmarshal(body, &eb); err != nil {
			t.Fatalf("%s: %d %q is not an error body", what, status, body)
		}
		checkError(t, status, eb, 507, what)
	}
	create := func(audioURL string) (int, string, []byte) {
		var j struct{ ID string }
		status, body := d.postJSON("/v2/pre-recorded", key, map[string]any{"audio_url": audioURL}, &j)
		return status, j.ID, body
	}

	// Room for 1 MiB a file: the big upload does not fit, the rest does.
	d.limitFileSize(1 << 20)
	status, _, body = d.upload(key, big)
	full("upload past the room left", status, body)
	if tmp := d.tempBlobs(); len(tmp) != 0 {
		t.Errorf("the refused upload left %v", tmp)
	}
	status, second, body := d.upload(key, small)
	if status != 200 {
		t.Fatalf("upload that fits: %d %s", status, body)
	}
	status, id, body := create(second.AudioURL)
	if status != 201 {
		t.Fatalf("create a job with room for it: %d %s", status, body)
	}
	if rec := d.waitJob(key, id, 2*time.Minute); rec["status"] != "done" {
		t.Errorf("job with room for it ended %v %v", rec["status"], rec["error_code"])
	}

	// No room at all: every write refused, the database's too.
	d.limitFileSize(0)
	status, _, body = d.upload(key, small)
	full("upload on a full disk", status, body)
	status, _, body = create(first.AudioURL)
	full("create on a full disk", status, body)
	if status, _ := d.do("GET", "/healthz", "", nil, "", nil); status != 200 {
		t.Errorf("healthz on a full disk: %d", status)
	}
	if status, _ := d.do("GET", "/v2/pre-recorded/"+id, key, nil, "", nil); status != 200 {
		t.Errorf("read a job on a full disk: %d", status)
	}
	if tmp := d.tempBlobs(); len(tmp) != 0 {
		t.Errorf("refused uploads left %v", tmp)
	}
	d.checkRunning("on a full disk")

	// Room again.
	d.limitFileSize(noFileSizeLimit)
	if status, _, body := d.upload(key, big); status != 200 {
		t.Errorf("upload after room returned: %d %s", status, body)
	}
	status, id, body = create(first.AudioURL)
	if status != 201 {
		t.Fatalf("create after room returned: %d %s", status, body)
	}
	if rec := d.waitJob(key, id, 2*time.Minute); rec["status"] != "done" {
		t.Errorf("job after room returned ended %v %v", rec["status"], rec["error_code"])
	}
	want, _ := os.ReadFile(small)
	if status, got := d.do("GET", "/v2/files/"+first.AudioMetadata.ID, key, nil, "", nil); status != 200 || !bytes.Equal(got, want) {
		t.Errorf("first upload after the full disk: %d, %d bytes, want the %d it had", status, len(got), len(want))
	}
	// A restart finds a consistent store.
	d.Stop()
	d2 := startDaemon(t, d.DataDir, "")
	var j2 struct{ ID string }
	if status, b := d2.postJSON("/v2/pre-recorded", key, map[string]any{"audio_url": first.AudioURL}, &j2); status != 201 {
		t.Fatalf("create after restart: %d %s", status, b)
	}
	if rec := d2.waitJob(key, j2.ID, 2*time.Minute); rec["status"] != "done" {
		t.Errorf("job after restart ended %v", rec["status"])
	}
}

// TestDiskFullStoringResult (issue 13, finding 9): the disk fills while a
// job is processing, so its result cannot be stored. The running daemon
// ends the job as error 507 (at once, or as soon as the error itself
// fits); it never stays processing until a restart. The job is held
// processing by its LLM add-on (heldLLM), its audio decoded: the disk
// fills at a point the test chooses (before, the job was the 66 s clip and
// the disk filled while it decoded, the whole clip decoded after).
func TestDiskFullStoringResult(t *testing.T) {
	t.Parallel() // waits more than it computes: see doc.go
	llm := newHeldLLM(t)
	d := startDaemon(t, "", llm.config())
	key := createKey(t, d.DataDir, "acme")
	id := queueHeldJob(t, d, key)
	llm.waitRequest(t, time.Minute)
	d.limitFileSize(0)
	llm.Release()
	d.WaitLog(3*time.Minute, `"store result"`, id, "no space")
	rec := map[string]any{}
	d.do("GET", "/v2/pre-recorded/"+id, key, nil, "", &rec)
	t.Logf("with the disk still full the job is %v %v", rec["status"], rec["error_code"])
	d.checkRunning("on a full disk")

	// Room again; the job ends without a restart.
	d.limitFileSize(noFileSizeLimit)
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
