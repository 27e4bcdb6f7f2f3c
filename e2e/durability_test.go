package e2e

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// TestRestartDuringProcessing kills the daemon mid-job; after a restart on
// the same data dir every accepted job completes: the one processing at the
// kill and the two still queued behind it (the daemon's one worker). Only
// the first needs the long clip, to be processing when the kill comes; the
// queued ones are short (before, all three were the long clip: two more
// minutes of audio decoded after the restart for no other check).
func TestRestartDuringProcessing(t *testing.T) {
	t.Parallel() // waits more than it computes: see doc.go
	d := startDaemon(t, "", "")
	key := createKey(t, d.DataDir, "acme")
	ids := queueJobs(t, d, key, longJobClip, shortJobClip, shortJobClip)
	d.WaitLog(time.Minute, `"job processing"`, ids[0])
	d.Kill()

	d2 := startDaemon(t, d.DataDir, "")
	d2.WaitLog(time.Minute, `"recovered jobs"`)
	for _, id := range ids {
		rec := d2.waitJob(key, id, 5*time.Minute)
		checkRecord(t, rec, id, "done")
		if tr := rec["result"].(map[string]any)["transcription"].(map[string]any); tr["full_transcript"] == "" {
			t.Errorf("job %s: empty transcript after restart", id)
		}
	}
}

// longJobClip is the clip of a job a test kills or shuts the daemon down
// on while it decodes: 66 s of speech, tens of seconds of decoding, so the
// job is still decoding when the signal lands. shortJobClip is a job that
// only has to run (or, with heldLLM, to be held processing).
const (
	longJobClip  = "ljspeech-LJ001-0007-to-0016-long.wav"
	shortJobClip = "pocketsphinx-goforward.wav"
)

// queueJobs uploads each clip once and queues a pre-recorded job of each,
// in order (the oldest queued job is claimed first), returning their ids.
func queueJobs(t *testing.T, d *daemonProc, key string, clips ...string) []string {
	t.Helper()
	urls := map[string]string{}
	var ids []string
	for _, c := range clips {
		if urls[c] == "" {
			path, _ := clip(t, c)
			status, up, body := d.upload(key, path)
			if status != 200 {
				t.Fatalf("upload %s: %d %s", c, status, body)
			}
			urls[c] = up.AudioURL
		}
		var created struct{ ID string }
		if status, body := d.postJSON("/v2/pre-recorded", key, map[string]any{"audio_url": urls[c]}, &created); status != 201 {
			t.Fatalf("create: %d %s", status, body)
		}
		ids = append(ids, created.ID)
	}
	return ids
}

// TestKeysWhileRunning: keys create works through the admin socket while the
// daemon holds the store, and revocation takes effect at once.
func TestKeysWhileRunning(t *testing.T) {
	d := startDaemon(t, "", "")
	key := createKey(t, d.DataDir, "acme")
	if status, _ := d.do("GET", "/v2/pre-recorded", key, nil, "", nil); status != 200 {
		t.Fatalf("list with new key: %d", status)
	}
	out, err := exec.Command(earshotd, "keys", "list", "--data-dir", d.DataDir).Output()
	if err != nil {
		t.Fatal(err)
	}
	id, _, _ := strings.Cut(strings.TrimSpace(string(out)), "\t")
	if !strings.Contains(string(out), "acme") || strings.Contains(string(out), key) {
		t.Fatalf("keys list: %q", out)
	}
	if err := exec.Command(earshotd, "keys", "revoke", "--data-dir", d.DataDir, "--id", id).Run(); err != nil {
		t.Fatal(err)
	}
	var eb errBody
	status, _ := d.do("GET", "/v2/pre-recorded", key, nil, "", &eb)
	checkError(t, status, eb, 401, "revoked key")
}

// callbackReceiver records callbacks.
type callbackReceiver struct {
	mu      sync.Mutex
	got     []callbackHit // guarded by mu
	hit     chan struct{}
	fail    int      // answer 503 to this many requests first
	refused []string // guarded by mu: the x-earshot-delivery of each request answered 503
}

type callbackHit struct {
	body      []byte
	signature string // x-earshot-signature
	timed     string // x-earshot-webhook-signature
	delivery  string
	method    string
}

func (c *callbackReceiver) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	b, _ := io.ReadAll(r.Body)
	c.mu.Lock()
	if c.fail > 0 {
		c.fail--
		c.refused = append(c.refused, r.Header.Get("x-earshot-delivery"))
		c.mu.Unlock()
		w.WriteHeader(503)
		return
	}
	c.got = append(c.got, callbackHit{b, r.Header.Get("x-earshot-signature"), r.Header.Get("x-earshot-webhook-signature"), r.Header.Get("x-earshot-delivery"), r.Method})
	c.mu.Unlock()
	select {
	case c.hit <- struct{}{}:
	default:
	}
}

func (c *callbackReceiver) wait(t *testing.T, n int, timeout time.Duration) []callbackHit {
	t.Helper()
	return c.waitFor(t, timeout, fmt.Sprintf("%d callbacks", n), func(got []callbackHit) bool { return len(got) >= n })
}

// waitEvent waits until a callback of event for job id has come.
func (c *callbackReceiver) waitEvent(t *testing.T, id, event string, timeout time.Duration) {
	t.Helper()
	c.waitFor(t, timeout, event+" for "+id, func(got []callbackHit) bool {
		return slices.ContainsFunc(got, func(h callbackHit) bool {
			var cb struct{ ID, Event string }
			return json.Unmarshal(h.body, &cb) == nil && cb.ID == id && cb.Event == event
		})
	})
}

// waitFor waits until the callbacks so far satisfy done and returns them.
func (c *callbackReceiver) waitFor(t *testing.T, timeout time.Duration, what string, done func([]callbackHit) bool) []callbackHit {
	t.Helper()
	deadline := time.After(timeout)
	for {
		c.mu.Lock()
		got := append([]callbackHit(nil), c.got...)
		c.mu.Unlock()
		if done(got) {
			return got
		}
		select {
		case <-c.hit:
		case <-deadline:
			t.Fatalf("got %d callbacks within %s, not %s", len(got), timeout, what)
		}
	}
}

const fastRetries = `
callbacks:
  min_backoff: 100ms
  max_backoff: 500ms
`

func TestCallbacks(t *testing.T) {
	d := startDaemon(t, "", fastRetries)
	key := createKey(t, d.DataDir, "acme")
	path, _ := clip(t, "pocketsphinx-goforward.wav")
	_, up, _ := d.upload(key, path)

	// Reserve a port, then leave it closed: the receiver is down at first.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	downAddr := ln.Addr().String()
	ln.Close()

	upRecv := &callbackReceiver{hit: make(chan struct{}, 1), fail: 1}
	upSrv := &http.Server{Handler: upRecv}
	upLn, _ := net.Listen("tcp", "127.0.0.1:0")
	go upSrv.Serve(upLn)
	defer upSrv.Close()

	var a, b struct{ ID string }
	d.postJSON("/v2/pre-recorded", key, map[string]any{
		"audio_url": up.AudioURL, "callback": true,
		"callback_config": map[string]any{"url": "http://" + upLn.Addr().String() + "/hook", "method": "PUT"},
	}, &a)
	d.postJSON("/v2/pre-recorded", key, map[string]any{
		"audio_url": up.AudioURL, "callback_url": "http://" + downAddr + "/hook",
	}, &b)
	if a.ID == "" || b.ID == "" {
		t.Fatal("jobs not created")
	}
	// Receiver up (after one 503): delivered once, signed, with the result.
	hits := upRecv.wait(t, 1, 2*time.Minute)
	checkCallback(t, d, key, hits[0], a.ID, "PUT")

	// Receiver down: the daemon retries; bring it up on the same port.
	d.WaitLog(time.Minute, "callback failed; will retry", b.ID)
	downRecv := &callbackReceiver{hit: make(chan struct{}, 1)}
	ln2, err := net.Listen("tcp", downAddr)
	if err != nil {
		t.Fatalf("relisten %s: %v", downAddr, err)
	}
	downSrv := &http.Server{Handler: downRecv}
	go downSrv.Serve(ln2)
	defer downSrv.Close()
	hits = downRecv.wait(t, 1, time.Minute)
	checkCallback(t, d, key, hits[0], b.ID, "POST")

	// Exactly once: after delivery the outbox is empty and nothing repeats.
	d.WaitLog(time.Minute, "callback delivered", b.ID)
	if n := len(upRecv.wait(t, 1, time.Second)); n != 1 {
		t.Errorf("receiver got %d callbacks, want 1", n)
	}
}

func checkCallback(t *testing.T, d *daemonProc, key string, h callbackHit, id, method string) {
	t.Helper()
	var cb struct {
		ID      string          `json:"id"`
		Event   string          `json:"event"`
		Payload json.RawMessage `json:"payload"`
	}
	if err := json.Unmarshal(h.body, &cb); err != nil {
		t.Fatalf("callback body %q: %v", h.body, err)
	}
	if cb.ID != id || cb.Event != "transcription.success" || h.method != method || h.delivery == "" {
		t.Errorf("callback id %s event %s method %s delivery %q", cb.ID, cb.Event, h.method, h.delivery)
	}
	var res struct {
		Transcription struct {
			FullTranscript string `json:"full_transcript"`
		} `json:"transcription"`
	}
	json.Unmarshal(cb.Payload, &res)
	if res.Transcription.FullTranscript != "go forward ten meters" {
		t.Errorf("callback transcript %q", res.Transcription.FullTranscript)
	}
	// The signature verifies under the account's callback secret.
	out, err := exec.Command(earshotd, "keys", "secret", "--data-dir", d.DataDir, "--account", "acme").Output()
	if err != nil {
		t.Fatalf("keys secret: %v", err)
	}
	secret, err := hex.DecodeString(strings.TrimSpace(string(out)))
	if err != nil {
		t.Fatalf("secret %q: %v", out, err)
	}
	mac := hmac.New(sha256.New, secret)
	mac.Write(h.body)
	if want := hex.EncodeToString(mac.Sum(nil)); h.signature != want {
		t.Errorf("signature %q, want %q", h.signature, want)
	}
	checkReplay(t, secret, h)
}

// TestCrashedJobNotRetried: when the daemon dies of a fatal error of its
// own (here SIGSEGV, as the vocabulary crash in ps_process_raw did) while
// a job is processing, the restarted daemon ends that job as an error
// after this first crash instead of running it again (before: it was
// claimed again, up to three crashes); a job still queued at the time runs
// normally. A SIGKILL still requeues (TestRestartDuringProcessing). Only
// the crashed job is the long clip, to be processing at the crash; the
// queued one is short.
func TestCrashedJobNotRetried(t *testing.T) {
	t.Parallel() // waits more than it computes: see doc.go
	d := startDaemon(t, "", "")
	key := createKey(t, d.DataDir, "acme")
	ids := queueJobs(t, d, key, longJobClip, shortJobClip)
	d.WaitLog(time.Minute, `"job processing"`, ids[0])
	d.cmd.Process.Signal(syscall.SIGSEGV)
	<-d.done

	d2 := startDaemon(t, d.DataDir, "")
	d2.WaitLog(time.Minute, `"recovered jobs"`, `"failed_after_crash":1`)
	rec := d2.waitJob(key, ids[0], time.Minute)
	checkRecord(t, rec, ids[0], "error")
	meta, _ := rec["post_session_metadata"].(map[string]any)
	if msg, _ := meta["error"].(string); !strings.Contains(msg, "not retried") || rec["error_code"] != float64(500) {
		t.Errorf("error_code %v, post_session_metadata.error %q", rec["error_code"], meta["error"])
	}
	if n := d2.logCount(`"job processing"`, ids[0]); n != 0 {
		t.Errorf("the crashed job was processed again (%d times)", n)
	}
	checkRecord(t, d2.waitJob(key, ids[1], 5*time.Minute), ids[1], "done")
	if _, err := os.Stat(filepath.Join(d.DataDir, "crash.prev.log")); err != nil {
		t.Errorf("crash report not kept: %v", err)
	}
}
