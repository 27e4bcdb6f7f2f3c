package e2e

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"
)

// heldLLM is an LLM backend stand-in (the OpenAI chat protocol, as
// chatStandIn) that holds every request until the test releases it. A
// pre-recorded job with an LLM add-on (audio_to_llm) is then processing,
// its audio decoded and its result not yet stored, for as long as the test
// wants and at no CPU: a test acts on a running job (fills the disk, stops
// the database) at a point it chooses, not in a race with a long decode.
type heldLLM struct {
	srv     *httptest.Server
	arrived chan struct{} // a value for each request as it comes (buffered; extra ones dropped)
	release chan struct{} // closed by Release: every request held, and every later one, is answered
	once    sync.Once
}

// newHeldLLM starts a held backend for the test's life; a cleanup
// releases it before closing it.
func newHeldLLM(t *testing.T) *heldLLM {
	t.Helper()
	h := &heldLLM{arrived: make(chan struct{}, 16), release: make(chan struct{})}
	h.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		select {
		case h.arrived <- struct{}{}:
		default:
		}
		select {
		case <-h.release:
		case <-r.Context().Done():
			return
		}
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(map[string]any{"object": "chat.completion",
			"choices": []any{map[string]any{"index": 0, "message": map[string]any{"role": "assistant", "content": "A command to go forward."}}}})
	}))
	t.Cleanup(func() {
		h.Release()
		h.srv.Close()
	})
	return h
}

// config is the daemon's addons.llm section naming h, with a timeout far
// above any hold.
func (h *heldLLM) config() string {
	return fmt.Sprintf("addons:\n  llm:\n    url: %s/v1\n    model: stand-in-model\n    timeout: 5m\n    retries: -1\n", h.srv.URL)
}

// waitRequest waits until a request has come (and is held).
func (h *heldLLM) waitRequest(t *testing.T, timeout time.Duration) {
	t.Helper()
	select {
	case <-h.arrived:
	case <-time.After(timeout):
		t.Fatalf("no request to the LLM backend within %s", timeout)
	}
}

// Release answers every held request, and every later one at once.
func (h *heldLLM) Release() { h.once.Do(func() { close(h.release) }) }

// queueHeldJob uploads the short clip and queues a pre-recorded job of it
// with the audio_to_llm add-on, which stays processing, once decoded,
// until h is released. It returns the job's id.
func queueHeldJob(t *testing.T, d *daemonProc, key string) string {
	t.Helper()
	path, _ := clip(t, shortJobClip)
	status, up, body := d.upload(key, path)
	if status != 200 {
		t.Fatalf("upload: %d %s", status, body)
	}
	var created struct{ ID string }
	if status, body := d.postJSON("/v2/pre-recorded", key, map[string]any{"audio_url": up.AudioURL, "audio_to_llm": true,
		"audio_to_llm_config": map[string]any{"prompts": []string{"What is the command?"}}}, &created); status != 201 {
		t.Fatalf("create: %d %s", status, body)
	}
	return created.ID
}
