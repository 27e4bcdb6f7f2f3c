package e2e

import (
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/fasthttp/websocket"
)

// TestRateLimitPerKey: a key bursting past limits.burst gets 429 with the
// contract's error body and a Retry-After, while another key of the same
// account is not touched; requests without a valid key are 401, not
// counted against anyone.
func TestRateLimitPerKey(t *testing.T) {
	const burst, rps = 5, 1
	d := startDaemon(t, "", "limits:\n  requests_per_second: 1\n  burst: 5\n")
	hot := createKey(t, d.DataDir, "acme")
	calm := createKey(t, d.DataDir, "acme")

	start := time.Now()
	ok, limited := 0, 0
	for range 3 * burst {
		req, err := http.NewRequest("GET", d.Base+"/v2/pre-recorded?limit=1", nil)
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("x-service-key", hot)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		var eb errBody
		json.NewDecoder(resp.Body).Decode(&eb)
		resp.Body.Close()
		switch resp.StatusCode {
		case 200:
			ok++
		case 429:
			limited++
			checkError(t, resp.StatusCode, eb, 429, "over the limit")
			ra, err := strconv.Atoi(resp.Header.Get("Retry-After"))
			if err != nil || ra < 1 || ra > 1/rps {
				t.Errorf("Retry-After %q, want whole seconds in [1, %d]", resp.Header.Get("Retry-After"), 1/rps)
			}
		default:
			t.Fatalf("status %d", resp.StatusCode)
		}
	}
	// The bucket refills at rps while the loop runs.
	if most := burst + int(time.Since(start).Seconds()*rps) + 1; ok < burst || ok > most || limited == 0 {
		t.Errorf("%d allowed and %d limited of %d, want %d to %d allowed", ok, limited, 3*burst, burst, most)
	}
	for i := range burst {
		if status, body := d.do("GET", "/v2/pre-recorded?limit=1", calm, nil, "", nil); status != 200 {
			t.Fatalf("the other key, request %d: %d %s", i, status, body)
		}
	}
	for range 2 * burst {
		if status, _ := d.do("GET", "/v2/pre-recorded", "es_unknown", nil, "", nil); status != 401 {
			t.Fatalf("unknown key: %d, want 401", status)
		}
	}
}

// TestRequestLog: each request is one info line with method, route, path,
// status, elapsed_ms, bytes, request_id and the key's id, never the key,
// the query string or the live WebSocket's token; probes log at debug.
func TestRequestLog(t *testing.T) {
	d := startDaemon(t, "", "")
	key := createKey(t, d.DataDir, "acme")
	out, err := runCLI("keys", "list", "--data-dir", d.DataDir)
	if err != nil {
		t.Fatal(err)
	}
	keyID, _, _ := strings.Cut(strings.TrimSpace(out), "\t")

	missing := "0b3e7c52-52a4-4a57-a2a4-3f4f5d0e1a11"
	var eb errBody
	status, body := d.do("GET", "/v2/pre-recorded/"+missing+"?custom_metadata[client]=hush", key, nil, "", &eb)
	if status != 404 || eb.RequestID == "" {
		t.Fatalf("GET unknown job: %d %s", status, body)
	}
	line := d.WaitLog(10*time.Second, `"msg":"request"`, eb.RequestID)
	var rec map[string]any
	if err := json.Unmarshal([]byte(line), &rec); err != nil {
		t.Fatal(err)
	}
	for k, want := range map[string]any{
		"level": "INFO", "method": "GET", "route": "/v2/pre-recorded/{id}", "path": "/v2/pre-recorded/" + missing,
		"status": 404.0, "bytes": float64(len(body)), "account_id": keyID, "component": "api",
	} {
		if rec[k] != want {
			t.Errorf("request line %s = %v, want %v (%s)", k, rec[k], want, line)
		}
	}
	if ms, ok := rec["elapsed_ms"].(float64); !ok || ms < 0 {
		t.Errorf("request line elapsed_ms %v", rec["elapsed_ms"])
	}

	// A live session: the WebSocket URL's token is nowhere in the log.
	s := d.createLive(key, map[string]any{})
	c, err := dial(t, s.URL)
	if err != nil {
		t.Fatal(err)
	}
	c.WriteMessage(websocket.BinaryMessage, make([]byte, 3200))
	c.WriteJSON(map[string]any{"type": "stop_recording"})
	if _, code := readAll(t, c, time.Minute); code != 1000 {
		t.Fatalf("session closed %d", code)
	}
	c.Close()
	d.WaitLog(10*time.Second, `"msg":"request"`, `"route":"/v2/live"`, `"method":"GET"`, `"status":101`)

	// A probe logs at debug (the harness runs at debug).
	if status, _ := d.do("GET", "/healthz", "", nil, "", nil); status != 200 {
		t.Fatalf("healthz %d", status)
	}
	probe := d.WaitLog(10*time.Second, `"msg":"request"`, `"route":"/healthz"`)
	if !strings.Contains(probe, `"level":"DEBUG"`) {
		t.Errorf("probe logged above debug: %s", probe)
	}

	token := tokenOf(t, s.URL)
	d.mu.Lock()
	defer d.mu.Unlock()
	n := 0
	for _, l := range d.lines {
		if strings.Contains(l, eb.RequestID) && strings.Contains(l, `"msg":"request"`) {
			n++
		}
		for _, bad := range []string{key, token, "hush", "custom_metadata"} {
			if strings.Contains(l, bad) {
				t.Errorf("log line holds %q: %s", bad, l)
			}
		}
	}
	if n != 1 {
		t.Errorf("%d request lines for one request, want 1", n)
	}
}
