package e2e

import (
	"encoding/json"
	"fmt"
	"math"
	"sync"
	"testing"
	"time"

	"github.com/fasthttp/websocket"
)

// TestLivePauseStorm streams real speech at real time while three clients
// hammer the session for its whole length: its owner's key alternating
// POST pause and resume as fast as it can, the WebSocket client sending
// pause_recording and resume_recording between its audio frames, and
// another account's key pausing it. Every API answer is 200 (or the key's
// 429 rate limit), the other account's 404 (or 429); the session ends
// normally (close 1000, job done); the record lists at most 1000 spans,
// sorted, apart, inside the recording; and the stored recording, as long
// as the clip, is the clip's samples outside the listed spans and digital
// silence inside them, sample for sample (16 samples of slack at each edge,
// where seconds are rounded to the millisecond): nothing lost, nothing
// silenced that is not listed.
func TestLivePauseStorm(t *testing.T) {
	d := startDaemon(t, "", "")
	key := createKey(t, d.DataDir, "acme")
	other := createKey(t, d.DataDir, "globex")
	path, _ := clip(t, "ljspeech-LJ001-0003.wav")
	audio := pcmOf(t, path)
	clipSamples := wavSamples(t, mustRead(t, path))
	s := d.createLive(key, map[string]any{})
	c, err := dial(t, s.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	r := readLive(t, c)

	stop := make(chan struct{})
	var wg sync.WaitGroup
	var mu sync.Mutex
	counts := map[string]int{}
	storm := func(who, k string, want int) {
		defer wg.Done()
		for i := range 2000 { // at most: the key's rate limit answers most of them 429 at once
			select {
			case <-stop:
				return
			default:
			}
			word := "pause"
			if i%2 == 1 {
				word = "resume"
			}
			status, body := d.do("POST", "/v2/live/"+s.ID+"/"+word, k, nil, "", nil)
			if status != want && status != 429 {
				t.Errorf("%s %s: %d %s; want %d or 429", who, word, status, body, want)
				return
			}
			mu.Lock()
			counts[fmt.Sprint(who, " ", status)]++
			mu.Unlock()
		}
	}
	wg.Add(2)
	go storm("owner", key, 200)
	go storm("other account", other, 404)

	start := time.Now()
	for n, off := 0, 0; off < len(audio); n, off = n+1, off+3200 {
		if err := c.WriteMessage(websocket.BinaryMessage, audio[off:min(off+3200, len(audio))]); err != nil {
			t.Fatalf("send: %v", err)
		}
		for i := range 4 {
			typ := "pause_recording"
			if (n+i)%2 == 1 {
				typ = "resume_recording"
			}
			if err := c.WriteJSON(map[string]any{"type": typ}); err != nil {
				t.Fatalf("send %s: %v", typ, err)
			}
		}
		if d := time.Until(start.Add(time.Duration(n+1) * 100 * time.Millisecond)); d > 0 {
			time.Sleep(d) // real-time pacing of the sender, not settling
		}
	}
	close(stop)
	wg.Wait()
	if err := c.WriteJSON(map[string]any{"type": "stop_recording"}); err != nil {
		t.Fatal(err)
	}
	<-r.done
	t.Logf("answers: %v", counts)
	if r.code != 1000 {
		t.Fatalf("socket closed %d", r.code)
	}
	if counts["owner 200"] == 0 || counts["other account 404"] == 0 {
		t.Fatalf("the storm did not reach the session: %v", counts)
	}
	var job map[string]any
	if err := json.Unmarshal(getRateLimited(t, d, key, "/v2/live/"+s.ID), &job); err != nil {
		t.Fatal(err)
	}
	job = d.waitLive(key, s.ID, 2*time.Minute)
	if job["status"] != "done" {
		t.Fatalf("job %v: %v", job["status"], job["error_code"])
	}
	b, _ := json.Marshal(job["post_session_metadata"].(map[string]any)["paused_intervals"])
	var spans []pauseSpan
	if err := json.Unmarshal(b, &spans); err != nil || len(spans) == 0 || len(spans) > 1000 {
		t.Fatalf("paused_intervals: %d spans (%v): %.300s", len(spans), err, b)
	}
	dur := float64(len(clipSamples)) / 16000
	for i, sp := range spans {
		if sp.Start < 0 || sp.End < sp.Start || sp.End > dur+0.001 || i > 0 && sp.Start <= spans[i-1].End {
			t.Fatalf("span %d %v out of order or bounds (previous %v, duration %.3f)", i, sp, spans[max(i-1, 0)], dur)
		}
	}
	got := wavSamples(t, getRateLimited(t, d, key, "/v2/live/"+s.ID+"/file"))
	if len(got) != len(clipSamples) {
		t.Fatalf("recording has %d samples, the clip %d", len(got), len(clipSamples))
	}
	const slack = 16
	silent := 0
	for i := range got {
		inside, near := false, false
		for _, sp := range spans {
			a, b := int(math.Round(sp.Start*16000)), int(math.Round(sp.End*16000))
			if i >= a-slack && i < a+slack || i >= b-slack && i < b+slack {
				near = true
			}
			if i >= a && i < b {
				inside = true
			}
		}
		switch {
		case near:
		case inside && got[i] != 0:
			t.Fatalf("sample %d (%.4f s) inside a listed span is %d, not silence", i, float64(i)/16000, got[i])
		case !inside && got[i] != clipSamples[i]:
			t.Fatalf("sample %d (%.4f s) outside every listed span differs from the clip", i, float64(i)/16000)
		case inside:
			silent++
		}
	}
	t.Logf("%d spans, %.2f s of %.2f s silenced", len(spans), float64(silent)/16000, dur)
}

// getRateLimited GETs path with key, waiting out the key's rate limit (429
// with Retry-After) the storm ran it into; any other answer than 200 fails.
func getRateLimited(t *testing.T, d *daemonProc, key, path string) []byte {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); ; {
		status, body := d.do("GET", path, key, nil, "", nil)
		switch {
		case status == 200:
			return body
		case status != 429 || time.Now().After(deadline):
			t.Fatalf("GET %s: %d %.200s", path, status, body)
		}
		time.Sleep(time.Second) // the rate limit's Retry-After, not settling
	}
}
