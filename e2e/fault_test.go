package e2e

import (
	"bytes"
	"encoding/json"
	"net"
	"net/http"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/fasthttp/websocket"
)

// waitLive polls a live job until it is done or error.
func (d *daemonProc) waitLive(key, id string, timeout time.Duration) map[string]any {
	d.t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		var rec map[string]any
		if status, body := d.do("GET", "/v2/live/"+id, key, nil, "", &rec); status != 200 {
			d.t.Fatalf("GET live %s: %d %s", id, status, body)
		}
		if s := rec["status"]; s == "done" || s == "error" {
			return rec
		}
		if time.Now().After(deadline) {
			d.t.Fatalf("live job %s still %v after %s", id, rec["status"], timeout)
		}
		time.Sleep(100 * time.Millisecond) // polling interval against a real process, not settling
	}
}

// streamAndKill creates a live session on d, sends about 3 s of audio in
// 100 ms frames, SIGKILLs d once 2 s are acknowledged, and returns the
// session's ID and the highest byte offset acknowledged (counting acks in
// flight at the kill).
func (d *daemonProc) streamAndKill(t *testing.T, key string, audio []byte) (id string, lastAck int) {
	t.Helper()
	s := d.createLive(key, map[string]any{})
	c, err := dial(t, s.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	acked := make(chan int, 1024)
	go func() {
		defer close(acked)
		for {
			_, msg, err := c.ReadMessage()
			if err != nil {
				return
			}
			var m struct {
				Type string
				Data struct {
					ByteRange []int `json:"byte_range"`
				}
			}
			if json.Unmarshal(msg, &m) == nil && m.Type == "audio_chunk" && len(m.Data.ByteRange) == 2 {
				acked <- m.Data.ByteRange[1]
			}
		}
	}()
	for i := 0; i < 3*32000 && i < len(audio); i += 3200 {
		if err := c.WriteMessage(websocket.BinaryMessage, audio[i:i+3200]); err != nil {
			t.Fatal(err)
		}
	}
	deadline := time.After(30 * time.Second)
	for lastAck < 2*32000 {
		select {
		case n, ok := <-acked:
			if !ok {
				t.Fatal("socket closed before the acks")
			}
			lastAck = max(lastAck, n)
		case <-deadline:
			t.Fatalf("acked %d bytes within 30s", lastAck)
		}
	}
	d.Kill()
	for n := range acked { // acks that were in flight at the kill
		lastAck = max(lastAck, n)
	}
	return s.ID, lastAck
}

// TestKillDuringLive: SIGKILL while a WebSocket session streams; after a
// restart the job ends done or error (never stuck), and the recording on
// disk holds every byte that was acknowledged, unchanged.
func TestKillDuringLive(t *testing.T) {
	d := startDaemon(t, "", "")
	key := createKey(t, d.DataDir, "acme")
	path, _ := clip(t, "ls-test-clean-1089-134686-0000.wav")
	audio := pcmOf(t, path)
	id, lastAck := d.streamAndKill(t, key, audio)

	d2 := startDaemon(t, d.DataDir, "")
	rec := d2.waitLive(key, id, 3*time.Minute)
	t.Logf("after the crash: %v (error_code %v), %d bytes acked", rec["status"], rec["error_code"], lastAck)
	if st := rec["status"]; st == "error" {
		if ec, _ := rec["error_code"].(float64); ec < 400 || ec > 599 {
			t.Errorf("error without error_code: %v", rec["error_code"])
		}
	}
	status, wav := d2.do("GET", "/v2/live/"+id+"/file", key, nil, "", nil)
	if status != 200 {
		if rec["status"] == "done" {
			t.Fatalf("done job without its recording: %d %s", status, wav)
		}
		t.Fatalf("recording after the crash: %d %.200s", status, wav)
	}
	got := wav[min(44, len(wav)):]
	if len(got) < lastAck || len(got) > 3*32000 || !bytes.Equal(got, audio[:len(got)]) {
		t.Errorf("recording %d bytes (matches the sent prefix: %v), acked %d", len(got), bytes.Equal(got, audio[:min(len(got), len(audio))]), lastAck)
	}
	if rec["status"] == "done" {
		tr, _ := rec["result"].(map[string]any)["transcription"].(map[string]any)
		if tr == nil || tr["full_transcript"] == "" {
			t.Errorf("done after the crash with no transcript: %v", rec["result"])
		}
	}
}

// TestKillDuringBurst: SIGKILL while clients create jobs as fast as they
// can; every job answered 201 is there after a restart, in a consistent
// state, and finishes.
func TestKillDuringBurst(t *testing.T) {
	t.Parallel() // waits more than it computes: see doc.go
	d := startDaemon(t, "", "")
	key := createKey(t, d.DataDir, "acme")
	// One second of real speech keeps draining 40+ jobs quick.
	pcm := pcmOf(t, mustClip(t, "pocketsphinx-goforward.wav"))[:32000]
	samples := make([]int16, len(pcm)/2)
	for i := range samples {
		samples[i] = int16(uint16(pcm[2*i]) | uint16(pcm[2*i+1])<<8)
	}
	path := filepath.Join(t.TempDir(), "one-second.wav")
	writeWAV16(t, path, 1, samples)
	_, up, _ := d.upload(key, path)
	body, _ := json.Marshal(map[string]any{"audio_url": up.AudioURL, "custom_metadata": map[string]any{"burst": true}})

	var mu sync.Mutex
	var ids []string
	stop := make(chan struct{})
	var wg sync.WaitGroup
	client := &http.Client{Timeout: 10 * time.Second}
	for range 8 {
		wg.Go(func() {
			for {
				select {
				case <-stop:
					return
				default:
				}
				req, _ := http.NewRequest("POST", d.Base+"/v2/pre-recorded", bytes.NewReader(body))
				req.Header.Set("x-service-key", key)
				req.Header.Set("Content-Type", "application/json")
				resp, err := client.Do(req)
				if err != nil {
					return // the daemon is gone
				}
				var created struct{ ID string }
				json.NewDecoder(resp.Body).Decode(&created)
				resp.Body.Close()
				if resp.StatusCode == 201 {
					mu.Lock()
					ids = append(ids, created.ID)
					mu.Unlock()
				}
			}
		})
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		mu.Lock()
		n := len(ids)
		mu.Unlock()
		if n >= 40 || time.Now().After(deadline) {
			break
		}
		time.Sleep(5 * time.Millisecond) // polling the counter, not settling
	}
	d.Kill()
	close(stop)
	wg.Wait()
	if len(ids) < 10 {
		t.Fatalf("only %d jobs created before the kill", len(ids))
	}

	d2 := startDaemon(t, d.DataDir, "")
	for _, id := range ids {
		var rec map[string]any
		status, b := d2.do("GET", "/v2/pre-recorded/"+id, key, nil, "", &rec)
		if status != 200 {
			t.Fatalf("job %s answered 201 before the kill: %d %s after", id, status, b)
		}
		switch rec["status"] {
		case "queued", "processing", "done", "error":
		default:
			t.Errorf("job %s status %v", id, rec["status"])
		}
	}
	// Every one of them finishes (the queue drains after the restart).
	for _, id := range ids {
		rec := d2.waitJob(key, id, 5*time.Minute)
		if rec["status"] != "done" {
			t.Errorf("job %s ended %v %v", id, rec["status"], rec["error_code"])
		}
	}
	// The list agrees with the records: no duplicates, nothing missing.
	var page struct{ Items []map[string]any }
	d2.do("GET", "/v2/pre-recorded?limit=1000", key, nil, "", &page)
	seen := map[string]int{}
	for _, it := range page.Items {
		seen[it["id"].(string)]++
	}
	for _, id := range ids {
		if seen[id] != 1 {
			t.Errorf("job %s listed %d times", id, seen[id])
		}
	}
}

func mustClip(t *testing.T, file string) string {
	t.Helper()
	p, _ := clip(t, file)
	return p
}

// TestCallbackDownFirstN: the receiver fails the first attempts; the
// callback is delivered exactly once when it recovers, and every attempt
// carries the same delivery id.
func TestCallbackDownFirstN(t *testing.T) {
	d := startDaemon(t, "", fastRetries)
	key := createKey(t, d.DataDir, "acme")
	path, _ := clip(t, "pocketsphinx-goforward.wav")
	_, up, _ := d.upload(key, path)

	const failFirst = 4
	var mu sync.Mutex
	attempts := map[string]int{} // delivery id -> requests
	ok := map[string]int{}       // delivery id -> 2xx answers
	hit := make(chan struct{}, 16)
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id := r.Header.Get("x-earshot-delivery")
		mu.Lock()
		attempts[id]++
		n := attempts[id]
		if n > failFirst {
			ok[id]++
		}
		mu.Unlock()
		if n <= failFirst {
			w.WriteHeader([]int{503, 500, 429, 502}[n%4])
			return
		}
		hit <- struct{}{}
	})}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go srv.Serve(ln)
	defer srv.Close()

	var j struct{ ID string }
	d.postJSON("/v2/pre-recorded", key, map[string]any{
		"audio_url": up.AudioURL, "callback": true,
		"callback_config": map[string]any{"url": "http://" + ln.Addr().String() + "/hook"},
	}, &j)
	select {
	case <-hit:
	case <-time.After(2 * time.Minute):
		t.Fatalf("no delivery; attempts %v", attempts)
	}
	d.WaitLog(time.Minute, "callback delivered", j.ID)
	mu.Lock()
	defer mu.Unlock()
	if len(attempts) != 1 {
		t.Fatalf("%d distinct delivery ids %v, want 1", len(attempts), attempts)
	}
	for id, n := range attempts {
		if id == "" || n != failFirst+1 || ok[id] != 1 {
			t.Errorf("delivery %q: %d attempts, %d delivered; want %d and exactly 1", id, n, ok[id], failFirst+1)
		}
	}
}
