package e2e

import (
	"net"
	"net/http"
	"sync"
	"testing"
	"time"
)

// TestCallbackGuard: callbacks obey fetch.deny (with callbacks.allow as
// the exception for on-prem receivers), never follow a redirect, and every
// refusal is logged with its job.
func TestCallbackGuard(t *testing.T) {
	// Receiver on 127.0.0.2, allowed by callbacks.allow: /redirect answers
	// 302 to /stolen on itself, /ok answers 200.
	var mu sync.Mutex
	hits := map[string]int{} // path -> requests, guarded by mu
	handler := func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		hits[r.Host+r.URL.Path]++
		mu.Unlock()
		if r.URL.Path == "/redirect" {
			http.Redirect(w, r, "/stolen", http.StatusFound)
		}
	}
	listen := func(addr string) string {
		ln, err := net.Listen("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		srv := &http.Server{Handler: http.HandlerFunc(handler)}
		go srv.Serve(ln)
		t.Cleanup(func() { srv.Close() })
		return ln.Addr().String()
	}
	allowed := listen("127.0.0.2:0")
	denied := listen("127.0.0.1:0")

	d := startDaemon(t, "", fastRetries+`
  allow: [127.0.0.2/32]
fetch:
  deny: [169.254.0.0/16, 0.0.0.0/8, 127.0.0.0/8]
`)
	key := createKey(t, d.DataDir, "acme")
	// A denied audio_url fails the job at once: its transcription.error
	// callback is what is delivered.
	job := func(hook string) string {
		t.Helper()
		var j struct{ ID string }
		status, body := d.postJSON("/v2/pre-recorded", key, map[string]any{
			"audio_url": "http://127.0.0.1:9/x.wav", "callback": true,
			"callback_config": map[string]any{"url": hook},
		}, &j)
		if status != 201 {
			t.Fatalf("POST: %d %s", status, body)
		}
		return j.ID
	}
	ok := job("http://" + allowed + "/ok")
	redirected := job("http://" + allowed + "/redirect")
	refused := job("http://" + denied + "/hook")

	d.WaitLog(time.Minute, "callback delivered", ok)
	d.WaitLog(time.Minute, "callback refused", "denied", refused, "127.0.0.1")
	d.WaitLog(time.Minute, "redirects are not followed", redirected)
	mu.Lock()
	defer mu.Unlock()
	if hits[allowed+"/ok"] != 1 {
		t.Errorf("allowed receiver got %d deliveries, want 1 (callbacks.allow)", hits[allowed+"/ok"])
	}
	if hits[allowed+"/redirect"] != 1 || hits[allowed+"/stolen"] != 0 {
		t.Errorf("redirecting receiver: %v; want one request to /redirect and none to /stolen", hits)
	}
	if n := hits[denied+"/hook"]; n != 0 {
		t.Errorf("receiver in fetch.deny got %d callbacks, want 0", n)
	}
}
