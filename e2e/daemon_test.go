package e2e

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// earshotd is the earshotd built once by TestMain.
var earshotd string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "earshot-e2e-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	earshotd = filepath.Join(dir, "earshotd")
	build := exec.Command("go", "build", "-o", earshotd, "../cmd/earshotd")
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "build earshotd:", err)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// daemonProc is one running earshotd.
type daemonProc struct {
	t       *testing.T
	DataDir string
	Config  string // config file path, "" for none
	Base    string // http://127.0.0.1:port
	Key     string
	cmd     *exec.Cmd
	done    chan struct{}
	stderr  *tailWriter // the end of its stderr, for a failing test's log
	started time.Time
	cpuLog  sync.Once

	procLog // its log lines so far
}

// createKey creates an API key in dataDir with the CLI (the daemon may or
// may not be running).
func createKey(t *testing.T, dataDir, account string) string {
	t.Helper()
	return cliKey(t, account, "--data-dir", dataDir)
}

// createClusterKey creates an API key with the CLI in the store d's config
// names: a cluster's shared store, which every node reads at once.
func createClusterKey(t *testing.T, d *daemonProc, account string) string {
	t.Helper()
	return cliKey(t, account, "--config", d.Config)
}

// cliKey runs keys create for account in the store where names and
// returns the key it printed.
func cliKey(t *testing.T, account string, where ...string) string {
	t.Helper()
	args := append(append([]string{"keys", "create"}, where...), "--account", account)
	out, err := exec.Command(earshotd, args...).Output()
	if err != nil {
		t.Fatalf("keys create %s: %v", strings.Join(where, " "), err)
	}
	key := strings.TrimSpace(string(out))
	if !strings.HasPrefix(key, "es_") || strings.ContainsAny(key, " \n") {
		t.Fatalf("keys create printed %q, want only a key", out)
	}
	return key
}

// startDaemon starts earshotd on a fresh data dir (or dataDir, to restart on
// one) with an optional YAML config and extra arguments of run (a later
// --listen wins), and waits for its "api listening" line.
func startDaemon(t *testing.T, dataDir, configYAML string, extra ...string) *daemonProc {
	t.Helper()
	// The telephone live pool's lean search for an overloaded box is off:
	// CI runs other packages' tests beside these, and a call's finals
	// switching to it under that load would move the accuracy the tests
	// bound (the lean search has its own tests: recognizer/sphinx
	// TestLeanSearch, recognizer TestLiveLoadHysteresis, and e2e
	// TestLiveShippedDefaultsUnderLoad through startShippedDaemon); it also
	// spares every daemon start making one more search per telephone
	// decoder. The pools load on demand (sphinx.load_on_demand): a test
	// daemon serves a few streams, and filling its pools in the background
	// cost every start about 2.5 s of CPU, 6 s with the telephone model (24
	// decoders), most of make test's CPU on 2 cores; loading the pools'
	// first decoders at start cost 2.5 s more on a slow box (0.36 s
	// without, 2026-11-30);
	// a test that counts the loaded pools or measures the daemon's memory
	// passes --set sphinx.load_on_demand=false (warmPools).
	return launchDaemon(t, dataDir, configYAML, append([]string{"--decoders", "2", "--set", "sphinx.overload_max_hmms_per_frame=-1", "--set", "sphinx.load_on_demand=true"}, extra...)...)
}

// warmPools is the extra flag of startDaemon that fills the live pools in
// the background after start, as the shipped daemon does.
var warmPools = []string{"--set", "sphinx.load_on_demand=false"}

// startShippedDaemon starts earshotd on a fresh data dir as startDaemon
// does, but on the shipped engine defaults: the lean search under load on,
// and the decoder pools sized from the CPUs.
func startShippedDaemon(t *testing.T, configYAML string, extra ...string) *daemonProc {
	t.Helper()
	return launchDaemon(t, "", configYAML, extra...)
}

// launchDaemon is startDaemon with only extra's flags after the
// listener's, data dir's and log level's.
func launchDaemon(t *testing.T, dataDir, configYAML string, extra ...string) *daemonProc {
	t.Helper()
	if dataDir == "" {
		dataDir = t.TempDir()
	}
	d := &daemonProc{t: t, DataDir: dataDir, done: make(chan struct{})}
	args := []string{"run", "--listen", "127.0.0.1:0", "--data-dir", dataDir, "--log-level", "debug"}
	if configYAML != "" {
		d.Config = filepath.Join(t.TempDir(), "earshot.yaml")
		if err := os.WriteFile(d.Config, []byte(configYAML), 0o600); err != nil {
			t.Fatal(err)
		}
		args = append(args, "--config", d.Config)
	}
	args = append(args, extra...)
	d.cmd = exec.Command(earshotd, args...)
	d.stderr = &tailWriter{max: 8 << 10}
	d.cmd.Stderr = d.stderr
	stdout, err := d.cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := d.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	d.started = time.Now()
	addr := make(chan string, 1)
	go func() {
		defer close(d.done)
		sc := bufio.NewScanner(stdout)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			line := sc.Text()
			var rec struct {
				Msg  string `json:"msg"`
				Addr string `json:"addr"`
			}
			if json.Unmarshal([]byte(line), &rec) == nil && rec.Msg == "api listening" {
				addr <- rec.Addr
			}
			d.add(line)
		}
		d.cmd.Wait()
	}()
	t.Cleanup(d.dumpIfFailed) // runs after Stop: cleanups run last first
	t.Cleanup(d.Stop)
	select {
	case a := <-addr:
		d.Base = "http://" + a
	case <-d.done:
		t.Fatalf("earshotd exited before listening")
	case <-time.After(60 * time.Second):
		t.Fatalf("earshotd did not start listening within 60s")
	}
	return d
}

// dumpIfFailed logs the end of d's stdout and stderr when its test failed.
func (d *daemonProc) dumpIfFailed() {
	if !d.t.Failed() {
		return
	}
	d.t.Logf("earshotd %s: last log lines:\n%s\nend of its stderr:\n%s",
		d.DataDir, strings.Join(d.tail(40), "\n"), d.stderr.String())
}

// Stop sends SIGTERM and waits for a clean exit, as long as the systemd
// unit's TimeoutStopSec (60s, above the sum of the default shutdown:
// stages).
func (d *daemonProc) Stop() {
	defer d.logCPU()
	select {
	case <-d.done:
		return
	default:
	}
	d.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-d.done:
	case <-time.After(60 * time.Second):
		d.cmd.Process.Kill()
		<-d.done
		d.t.Errorf("earshotd did not stop within 60s of SIGTERM")
	}
}

// logCPU logs, once d has exited, the CPU time it used and how long it ran:
// where a test's time goes (CI's budget is CPU on 2 cores).
func (d *daemonProc) logCPU() {
	d.cpuLog.Do(func() {
		ps := d.cmd.ProcessState
		if ps == nil {
			return
		}
		d.t.Logf("earshotd %s: CPU user %.1f s, sys %.1f s over %.1f s; %s",
			filepath.Base(d.DataDir), ps.UserTime().Seconds(), ps.SystemTime().Seconds(), time.Since(d.started).Seconds(), d.work())
	})
}

// work sums, from d's log lines, the engine work its CPU went to beside
// decoding the audio sent: the decoders it loaded and the batch passes it
// ran or cut at the stop (a test that never reads a session's record still
// pays for its pass while the daemon runs).
func (d *daemonProc) work() string {
	var loads, loadMs, passes, passMs, cut int
	d.mu.Lock()
	defer d.mu.Unlock()
	for _, l := range d.lines {
		var rec struct {
			Msg     string `json:"msg"`
			Elapsed int    `json:"elapsed_ms"`
		}
		if !strings.Contains(l, `"msg":"sphinx decoder loaded`) && !strings.Contains(l, `"msg":"batch pass `) ||
			json.Unmarshal([]byte(l), &rec) != nil {
			continue
		}
		switch {
		case strings.HasPrefix(rec.Msg, "sphinx decoder loaded"):
			loads, loadMs = loads+1, loadMs+rec.Elapsed
		case rec.Msg == "batch pass done" || rec.Msg == "batch pass failed; the live result stays":
			passes, passMs = passes+1, passMs+rec.Elapsed
		case rec.Msg == "batch pass left to the next start" || rec.Msg == "batch pass requeued":
			cut++
		}
	}
	return fmt.Sprintf("%d decoder loads (%.1f s), %d batch passes (%.1f s), %d cut at the stop",
		loads, float64(loadMs)/1000, passes, float64(passMs)/1000, cut)
}

// Kill sends SIGKILL and waits for the process to be gone.
func (d *daemonProc) Kill() {
	d.cmd.Process.Signal(syscall.SIGKILL)
	<-d.done
	d.logCPU()
}

// stall stops d (SIGSTOP) and returns resume, which lets it run again
// (SIGCONT) the first time it is called; a cleanup resumes it too, before
// d is stopped.
func (d *daemonProc) stall() (resume func()) {
	d.t.Helper()
	if err := d.cmd.Process.Signal(syscall.SIGSTOP); err != nil {
		d.t.Fatal(err)
	}
	var once sync.Once
	resume = func() { once.Do(func() { d.cmd.Process.Signal(syscall.SIGCONT) }) }
	d.t.Cleanup(resume)
	return resume
}

// WaitLog waits until a log line contains every one of parts.
func (d *daemonProc) WaitLog(timeout time.Duration, parts ...string) string {
	d.t.Helper()
	return d.waitLine(d.t, "earshotd", d.done, timeout, parts)
}

// containsAll reports whether line contains every one of parts.
func containsAll(line string, parts []string) bool {
	for _, p := range parts {
		if !strings.Contains(line, p) {
			return false
		}
	}
	return true
}

// do sends a request with the API key (key "" sends none) and decodes a
// JSON answer into out when out is not nil. It returns the status and body.
func (d *daemonProc) do(method, path, key string, body io.Reader, ctype string, out any) (int, []byte) {
	d.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, method, d.Base+path, body)
	if err != nil {
		d.t.Fatal(err)
	}
	if key != "" {
		req.Header.Set("x-service-key", key)
	}
	if ctype != "" {
		req.Header.Set("Content-Type", ctype)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		d.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		d.t.Fatal(err)
	}
	if out != nil && len(b) > 0 {
		if err := json.Unmarshal(b, out); err != nil {
			d.t.Fatalf("%s %s: decode %q: %v", method, path, b, err)
		}
	}
	return resp.StatusCode, b
}

func (d *daemonProc) postJSON(path, key string, v any, out any) (int, []byte) {
	d.t.Helper()
	var body []byte
	switch v := v.(type) {
	case string:
		body = []byte(v)
	default:
		var err error
		if body, err = json.Marshal(v); err != nil {
			d.t.Fatal(err)
		}
	}
	return d.do("POST", path, key, bytes.NewReader(body), "application/json", out)
}

type uploadResponse struct {
	AudioURL      string `json:"audio_url"`
	AudioMetadata struct {
		ID               string  `json:"id"`
		Filename         string  `json:"filename"`
		Extension        string  `json:"extension"`
		Size             int64   `json:"size"`
		AudioDuration    float64 `json:"audio_duration"`
		NumberOfChannels int     `json:"number_of_channels"`
	} `json:"audio_metadata"`
}

// upload sends a file as the multipart field "audio".
func (d *daemonProc) upload(key, path string) (int, uploadResponse, []byte) {
	d.t.Helper()
	body, ctype := multipartAudio(d.t, path)
	var up uploadResponse
	status, resp := d.do("POST", "/v2/upload", key, bytes.NewReader(body), ctype, nil)
	if status == 200 {
		if err := json.Unmarshal(resp, &up); err != nil {
			d.t.Fatalf("upload response %q: %v", resp, err)
		}
	}
	return status, up, resp
}

// multipartAudio is the /v2/upload body carrying the file at path as the
// "audio" field, and its Content-Type.
func multipartAudio(t testing.TB, path string) ([]byte, string) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	mw := multipart.NewWriter(&buf)
	fw, err := mw.CreateFormFile("audio", filepath.Base(path))
	if err != nil {
		t.Fatal(err)
	}
	fw.Write(b)
	mw.Close()
	return buf.Bytes(), mw.FormDataContentType()
}

// waitJob polls a job until it is done or error.
func (d *daemonProc) waitJob(key, id string, timeout time.Duration) map[string]any {
	d.t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		var rec map[string]any
		status, body := d.do("GET", "/v2/pre-recorded/"+id, key, nil, "", &rec)
		if status != 200 {
			d.t.Fatalf("GET job %s: %d %s", id, status, body)
		}
		if s := rec["status"]; s == "done" || s == "error" {
			return rec
		}
		if time.Now().After(deadline) {
			d.t.Fatalf("job %s still %v after %s", id, rec["status"], timeout)
		}
		time.Sleep(100 * time.Millisecond) // polling interval against a real process, not settling
	}
}
