package e2e

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fasthttp/websocket"
)

// TestLiveTenantQuota (issue 13, finding 4): one account cannot hold every
// live slot. It gets at most live.max_sessions_per_account sessions (half
// the capacity by default) and then 429, so another account still gets
// one; and a session nobody connects to ends as 408 after
// live.connect_timeout, releasing its slot long before its token expires.
func TestLiveTenantQuota(t *testing.T) {
	d := startDaemon(t, "", "live:\n  capacity: 4\n  connect_timeout: 2s\n")
	hog := createKey(t, d.DataDir, "hog")
	other := createKey(t, d.DataDir, "other")

	held := []liveSession{d.createLive(hog, map[string]any{}), d.createLive(hog, map[string]any{})}
	var eb errBody
	status, body := d.postJSON("/v2/live", hog, map[string]any{}, &eb)
	if status != 429 {
		t.Fatalf("third session of one account with capacity 4: %d %s, want 429", status, body)
	}
	checkError(t, status, eb, 429, "POST /v2/live over the account's quota")
	mine := d.createLive(other, map[string]any{}) // the other account gets its share

	// Nobody connects: each ends as 408 after connect_timeout, not after
	// the hour of its token.
	for _, s := range append(held, mine) {
		key := hog
		if s.ID == mine.ID {
			key = other
		}
		rec := d.waitLive(key, s.ID, 30*time.Second)
		if rec["status"] != "error" || rec["error_code"] != 408.0 {
			t.Errorf("never-connected session %s ended %v %v, want error 408", s.ID, rec["status"], rec["error_code"])
		}
	}
	// The slots are free again.
	for range 2 {
		d.createLive(hog, map[string]any{})
	}
	var list struct{ Items []json.RawMessage }
	if status, body := d.do("GET", "/v2/live?limit=100", hog, nil, "", &list); status != 200 || len(list.Items) != 4 {
		t.Errorf("hog's live jobs: %d, %d items, want 4 (%s)", status, len(list.Items), body)
	}
}

// closeCodeOf reads from c until the server closes it and returns the close
// code (-1 when the read fails otherwise, e.g. past the deadline).
func closeCodeOf(c *websocket.Conn, timeout time.Duration) int {
	c.SetReadDeadline(time.Now().Add(timeout))
	for {
		if _, _, err := c.ReadMessage(); err != nil {
			var ce *websocket.CloseError
			if errors.As(err, &ce) {
				return ce.Code
			}
			return -1
		}
	}
}

// TestRevokeEndsLiveSessions (issue 13, finding 10): revoking a key, over
// HTTP or with the CLI through the admin socket, ends the live sessions it
// created at once (close 4401, job error 401) and refuses their tokens;
// another key of the same account streams on.
func TestRevokeEndsLiveSessions(t *testing.T) {
	d := startDaemon(t, "", "")
	admin := createKey(t, d.DataDir, "admin")
	newKey := func() adminKey {
		var k adminKey
		if status, body := d.postJSON("/admin/keys", admin, map[string]any{"account": "acme"}, &k); status != 201 {
			t.Fatalf("POST /admin/keys: %d %s", status, body)
		}
		return k
	}
	doomed, kept, cliDoomed := newKey(), newKey(), newKey()
	path, _ := clip(t, "ls-test-clean-1089-134686-0000.wav")
	audio := pcmOf(t, path)

	// connect opens a session of key and streams its first second.
	connect := func(key string) (liveSession, *websocket.Conn, chan int) {
		s := d.createLive(key, map[string]any{})
		c, err := dial(t, s.URL)
		if err != nil {
			t.Fatal(err)
		}
		if err := c.WriteMessage(websocket.BinaryMessage, audio[:32000]); err != nil {
			t.Fatal(err)
		}
		code := make(chan int, 1)
		go func() { code <- closeCodeOf(c, 30*time.Second) }()
		return s, c, code
	}
	streaming, sc, streamingCode := connect(doomed.Key)
	defer sc.Close()
	waiting := d.createLive(doomed.Key, map[string]any{})
	other, oc, otherCode := connect(kept.Key)
	defer oc.Close()
	viaCLI, cc, cliCode := connect(cliDoomed.Key)
	defer cc.Close()

	if status, body := d.do("DELETE", "/admin/keys/"+doomed.ID, admin, nil, "", nil); status != 202 {
		t.Fatalf("DELETE /admin/keys/%s: %d %s", doomed.ID, status, body)
	}
	if code := <-streamingCode; code != 4401 {
		t.Errorf("streaming session of the revoked key: close %d, want 4401", code)
	}
	for _, s := range []liveSession{streaming, waiting} {
		c, err := dial(t, s.URL)
		if err != nil {
			t.Fatal(err)
		}
		if code := closeCodeOf(c, 10*time.Second); code != 4401 {
			t.Errorf("token of a revoked key's session %s: close %d, want 4401", s.ID, code)
		}
		c.Close()
		rec := d.waitLive(kept.Key, s.ID, 10*time.Second)
		if rec["status"] != "error" || rec["error_code"] != 401.0 {
			t.Errorf("session %s of the revoked key ended %v %v, want error 401", s.ID, rec["status"], rec["error_code"])
		}
	}

	// The CLI revokes through the running daemon's admin socket.
	if out, err := exec.Command(earshotd, "keys", "revoke", "--data-dir", d.DataDir, "--id", cliDoomed.ID).CombinedOutput(); err != nil {
		t.Fatalf("keys revoke: %v %s", err, out)
	}
	if code := <-cliCode; code != 4401 {
		t.Errorf("session of the key revoked with the CLI: close %d, want 4401", code)
	}
	if rec := d.waitLive(kept.Key, viaCLI.ID, 10*time.Second); rec["error_code"] != 401.0 {
		t.Errorf("session of the key revoked with the CLI ended %v %v, want error 401", rec["status"], rec["error_code"])
	}

	// The other key's session was untouched: it finishes normally.
	if err := oc.WriteJSON(map[string]any{"type": "stop_recording"}); err != nil {
		t.Fatal(err)
	}
	if code := <-otherCode; code != 1000 {
		t.Errorf("session of the kept key: close %d, want 1000", code)
	}
	if rec := d.waitLive(kept.Key, other.ID, 10*time.Second); rec["status"] != "done" {
		t.Errorf("session of the kept key ended %v %v", rec["status"], rec["error_code"])
	}
}

// trickleServer serves /fast.wav whole and /slow/... at 10 bytes/s until
// the client goes away or stop is closed, counting the slow downloads open.
type trickleServer struct {
	wav           []byte
	stop          chan struct{}
	open, maxOpen atomic.Int32
}

func (s *trickleServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "audio/wav")
	if r.URL.Path == "/fast.wav" {
		w.Write(s.wav)
		return
	}
	n := s.open.Add(1)
	defer s.open.Add(-1)
	for m := s.maxOpen.Load(); n > m && !s.maxOpen.CompareAndSwap(m, n); m = s.maxOpen.Load() {
	}
	w.WriteHeader(200)
	for i := 0; (i+1)*10 <= len(s.wav); i++ {
		w.Write(s.wav[i*10 : (i+1)*10])
		w.(http.Flusher).Flush()
		select {
		case <-s.stop:
			return
		case <-r.Context().Done():
			return
		case <-time.After(time.Second): // the trickle's pace, not settling
		}
	}
}

// completedAt is a finished job's completed_at.
func completedAt(t *testing.T, rec map[string]any) time.Time {
	t.Helper()
	s, _ := rec["completed_at"].(string)
	at, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		t.Fatalf("completed_at %q: %v", s, err)
	}
	return at
}

// TestSlowAudioURL (issue 13, finding 5): one account's audio_url trickling
// at 10 bytes/s holds neither the only worker nor another account's
// download (downloads run beside the workers, at most
// fetch.max_per_account of one account); the queue takes turns between
// accounts; and with the default fetch.min_bytes_per_second the trickle
// ends as error 422 instead of holding a download for limits.fetch_timeout.
func TestSlowAudioURL(t *testing.T) {
	t.Parallel() // waits more than it computes: see doc.go
	short, _ := clip(t, "pocketsphinx-goforward.wav")
	wav, err := os.ReadFile(short)
	if err != nil {
		t.Fatal(err)
	}
	srv := &trickleServer{wav: wav, stop: make(chan struct{})}
	hs := httptest.NewServer(srv)
	defer hs.Close()
	defer close(srv.stop)

	// workers: 1 (the default); no minimum rate, so the trickles last.
	d := startDaemon(t, "", "fetch:\n  min_bytes_per_second: 0\n")
	hog := createKey(t, d.DataDir, "hog")
	other := createKey(t, d.DataDir, "other")
	create := func(key, url string) string {
		t.Helper()
		var j struct{ ID string }
		if status, body := d.postJSON("/v2/pre-recorded", key, map[string]any{"audio_url": url}, &j); status != 201 {
			t.Fatalf("create %s: %d %s", url, status, body)
		}
		return j.ID
	}
	for i := range 3 {
		create(hog, fmt.Sprintf("%s/slow/%d.wav", hs.URL, i))
	}
	for deadline := time.Now().Add(30 * time.Second); srv.open.Load() < 2; {
		if time.Now().After(deadline) {
			t.Fatalf("%d slow downloads open after 30 s, want 2", srv.open.Load())
		}
		time.Sleep(50 * time.Millisecond) // polling the stand-in's counter, not settling
	}
	mine := create(other, hs.URL+"/fast.wav")
	if rec := d.waitJob(other, mine, time.Minute); rec["status"] != "done" {
		t.Fatalf("other account's job ended %v %v while the slow downloads ran", rec["status"], rec["error_code"])
	}
	if n, m := srv.open.Load(), srv.maxOpen.Load(); n != 2 || m != 2 {
		t.Errorf("slow downloads of one account: %d open, at most %d at once; want 2 and 2 (fetch.max_per_account)", n, m)
	}

	// Turns between accounts: one account's backlog of four jobs does not
	// keep another's job waiting behind all of them.
	upload := func(key string) string {
		t.Helper()
		status, up, body := d.upload(key, short)
		if status != 200 {
			t.Fatalf("upload: %d %s", status, body)
		}
		return up.AudioURL
	}
	var hogURLs []string
	for range 4 {
		hogURLs = append(hogURLs, upload(hog))
	}
	otherURL := upload(other)
	var hogJobs []string
	for _, u := range hogURLs {
		hogJobs = append(hogJobs, create(hog, u))
	}
	late := completedAt(t, d.waitJob(other, create(other, otherURL), 2*time.Minute))
	before := 0
	for _, id := range hogJobs {
		if completedAt(t, d.waitJob(hog, id, 2*time.Minute)).Before(late) {
			before++
		}
	}
	if before > 2 {
		t.Errorf("%d of the first account's 4 jobs finished before the other account's one job, want at most 2 (turns)", before)
	}

	// The default minimum rate ends a trickle.
	d2 := startDaemon(t, "", "")
	hog2 := createKey(t, d2.DataDir, "hog")
	var j struct{ ID string }
	if status, body := d2.postJSON("/v2/pre-recorded", hog2, map[string]any{"audio_url": hs.URL + "/slow/x.wav"}, &j); status != 201 {
		t.Fatalf("create: %d %s", status, body)
	}
	if rec := d2.waitJob(hog2, j.ID, time.Minute); rec["status"] != "error" || rec["error_code"] != 422.0 {
		t.Errorf("trickling audio_url ended %v %v, want error 422", rec["status"], rec["error_code"])
	}
}
