package pipelinetest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// ChatServer is a stand-in for an OpenAI-compatible chat-completions
// server: it records each request and answers as a model following
// earshot's prompts would, or fails as told.
type ChatServer struct {
	srv   *httptest.Server
	stall chan struct{} // closed at cleanup

	mu     sync.Mutex
	status int           // guarded by mu: answer every request with this HTTP status when set
	hang   bool          // guarded by mu: hold every request until cleanup
	reqs   []ChatRequest // guarded by mu
}

// ChatRequest is what the stand-in recorded of one request.
type ChatRequest struct {
	Path, Auth, Model, System, User string
}

// NewChatServer starts the stand-in; it stops at the test's cleanup.
func NewChatServer(t *testing.T) *ChatServer {
	t.Helper()
	s := &ChatServer{stall: make(chan struct{})}
	s.srv = httptest.NewServer(http.HandlerFunc(s.serve))
	t.Cleanup(s.srv.Close)
	t.Cleanup(func() { close(s.stall) })
	return s
}

func (s *ChatServer) serve(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Model    string `json:"model"`
		Messages []struct {
			Role, Content string
		} `json:"messages"`
	}
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		http.Error(w, `{"error":{"message":"bad json"}}`, 400)
		return
	}
	cr := ChatRequest{Path: r.URL.Path, Auth: r.Header.Get("Authorization"), Model: req.Model}
	for _, m := range req.Messages {
		switch m.Role {
		case "system":
			cr.System = m.Content
		case "user":
			cr.User = m.Content
		}
	}
	s.mu.Lock()
	s.reqs = append(s.reqs, cr)
	status, hang := s.status, s.hang
	s.mu.Unlock()
	if hang {
		select {
		case <-s.stall:
		case <-r.Context().Done():
		}
		return
	}
	if status != 0 {
		w.WriteHeader(status)
		fmt.Fprint(w, `{"error":{"message":"model overloaded"}}`)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(map[string]any{"object": "chat.completion", "choices": []any{
		map[string]any{"index": 0, "message": map[string]any{"role": "assistant", "content": modelReply(cr.System, cr.User)}}}})
}

var numberedLine = regexp.MustCompile(`^\[(\d+)\] (.*)$`)

// modelReply answers earshot's prompts: a translation repeats each
// numbered line tagged with the target language, a prompt is echoed, a
// summary is a fixed sentence.
func modelReply(system, user string) string {
	if _, rest, ok := strings.Cut(system, "numbered line of a speech transcript into "); ok {
		lang, _, _ := strings.Cut(rest, ". ")
		var out []string
		for _, l := range strings.Split(user, "\n") {
			if m := numberedLine.FindStringSubmatch(l); m != nil {
				out = append(out, fmt.Sprintf("[%s] (%s) %s", m[1], lang, m[2]))
			}
		}
		return strings.Join(out, "\n")
	}
	if _, req, ok := strings.Cut(user, "Request: "); ok {
		return "answer to " + req
	}
	return "The speakers talk about printing and dinner."
}

// Set makes the stand-in answer every request with status (0: a
// model's answer), or hold every request until cleanup when hang.
func (s *ChatServer) Set(status int, hang bool) {
	s.mu.Lock()
	s.status, s.hang = status, hang
	s.mu.Unlock()
}

// Requests are the requests received so far.
func (s *ChatServer) Requests() []ChatRequest {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.reqs)
}

// URL is the stand-in's base address (without /v1).
func (s *ChatServer) URL() string { return s.srv.URL }

// Close stops the stand-in early (a backend that went away).
func (s *ChatServer) Close() { s.srv.Close() }

// CheckNoLeaks fails the test if goroutines started during it outlive it.
func CheckNoLeaks(t *testing.T) {
	t.Helper()
	before := runtime.NumGoroutine()
	t.Cleanup(func() {
		deadline := time.Now().Add(5 * time.Second)
		for runtime.NumGoroutine() > before && time.Now().Before(deadline) {
			runtime.Gosched()
		}
		if n := runtime.NumGoroutine(); n > before {
			buf := make([]byte, 1<<16)
			t.Errorf("%d goroutines before, %d after:\n%s", before, n, buf[:runtime.Stack(buf, true)])
		}
	})
}
