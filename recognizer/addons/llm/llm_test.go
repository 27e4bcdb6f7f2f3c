package llm

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"regexp"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/earshot-dev/earshot/recognizer"
	"github.com/earshot-dev/earshot/recognizer/addons/addonstest"
	"github.com/earshot-dev/earshot/recognizer/openai"
	"github.com/earshot-dev/earshot/recognizer/pipeline/pipelinetest"
)

// received is one request the stand-in server got.
type received struct {
	Path, Auth, ContentType string
	Body                    request
}

// standIn is an OpenAI-compatible chat-completions server for tests: it
// records requests and answers each with reply(n, req), n counting from 1.
// A reply that blocks on stall is released when the test ends.
type standIn struct {
	t     *testing.T
	srv   *httptest.Server
	stall chan struct{} // closed at cleanup, before the server closes
	reply func(n int, req request, w http.ResponseWriter, stall <-chan struct{})

	mu   sync.Mutex
	reqs []received // guarded by mu
}

func newStandIn(t *testing.T, reply func(n int, req request, w http.ResponseWriter, stall <-chan struct{})) *standIn {
	t.Helper()
	s := &standIn{t: t, reply: reply, stall: make(chan struct{})}
	s.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req request
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
			http.Error(w, `{"error":{"message":"bad json"}}`, http.StatusBadRequest)
			return
		}
		s.mu.Lock()
		s.reqs = append(s.reqs, received{r.URL.Path, r.Header.Get("Authorization"), r.Header.Get("Content-Type"), req})
		n := len(s.reqs)
		s.mu.Unlock()
		s.reply(n, req, w, s.stall)
	}))
	t.Cleanup(s.srv.Close)
	t.Cleanup(func() { close(s.stall) })
	return s
}

func (s *standIn) requests() []received {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]received(nil), s.reqs...)
}

// answer writes a chat completion with content.
func answer(w http.ResponseWriter, content string) {
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(map[string]any{
		"id": "chatcmpl-1", "object": "chat.completion", "model": "m",
		"choices": []any{map[string]any{"index": 0, "finish_reason": "stop",
			"message": map[string]any{"role": "assistant", "content": content}}},
	})
}

// client returns a client of the stand-in with fast retries, closed at
// cleanup.
func client(t *testing.T, s *standIn, mod func(*Config)) *Client {
	t.Helper()
	cfg := Config{Endpoint: openai.Endpoint{URL: s.srv.URL + "/v1/", Model: "test-model", APIKey: "sekret", Backoff: time.Millisecond, Timeout: 5 * time.Second}}
	if mod != nil {
		mod(&cfg)
	}
	c, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

func TestComplete(t *testing.T) {
	pipelinetest.CheckNoLeaks(t)
	s := newStandIn(t, func(n int, req request, w http.ResponseWriter, _ <-chan struct{}) { answer(w, "  bonjour \n") })
	c := client(t, s, nil)
	got, err := c.Complete(t.Context(), "be brief", "say hello")
	if err != nil || got != "bonjour" {
		t.Fatalf("got %q, %v", got, err)
	}
	reqs := s.requests()
	if len(reqs) != 1 {
		t.Fatalf("%d requests", len(reqs))
	}
	r := reqs[0]
	want := request{Model: "test-model", Messages: []message{{"system", "be brief"}, {"user", "say hello"}}}
	if r.Path != "/v1/chat/completions" || r.Auth != "Bearer sekret" || r.ContentType != "application/json" ||
		fmt.Sprint(r.Body) != fmt.Sprint(want) {
		t.Errorf("request %+v, want path /v1/chat/completions, bearer key, body %+v", r, want)
	}
}

func TestCompleteFailures(t *testing.T) {
	tests := []struct {
		name     string
		reply    func(n int, req request, w http.ResponseWriter, _ <-chan struct{})
		mod      func(*Config)
		want     error
		status   int
		requests int
		answer   string
	}{
		{name: "500 then 200", reply: func(n int, _ request, w http.ResponseWriter, _ <-chan struct{}) {
			if n == 1 {
				http.Error(w, `{"error":{"message":"overloaded"}}`, http.StatusInternalServerError)
				return
			}
			answer(w, "ok")
		}, requests: 2, answer: "ok"},
		{name: "429 with retry-after then 200", reply: func(n int, _ request, w http.ResponseWriter, _ <-chan struct{}) {
			if n == 1 {
				w.Header().Set("Retry-After", "0")
				w.WriteHeader(http.StatusTooManyRequests)
				return
			}
			answer(w, "ok")
		}, requests: 2, answer: "ok"},
		{name: "empty 200 body", reply: func(int, request, http.ResponseWriter, <-chan struct{}) {},
			want: ErrMalformed, requests: 1},
		{name: "503 always", reply: func(_ int, _ request, w http.ResponseWriter, _ <-chan struct{}) {
			http.Error(w, `{"error":{"message":"model loading"}}`, http.StatusServiceUnavailable)
		}, want: ErrBackend, status: 503, requests: 3},
		{name: "400 not retried", reply: func(_ int, _ request, w http.ResponseWriter, _ <-chan struct{}) {
			http.Error(w, `{"error":{"message":"context length exceeded"}}`, http.StatusBadRequest)
		}, want: ErrBackend, status: 400, requests: 1},
		{name: "malformed json", reply: func(_ int, _ request, w http.ResponseWriter, _ <-chan struct{}) {
			w.Write([]byte(`{"choices": [`))
		}, want: ErrMalformed, requests: 1},
		{name: "no choices", reply: func(_ int, _ request, w http.ResponseWriter, _ <-chan struct{}) {
			w.Write([]byte(`{"choices": []}`))
		}, want: ErrMalformed, requests: 1},
		{name: "response too large", reply: func(_ int, _ request, w http.ResponseWriter, _ <-chan struct{}) {
			answer(w, strings.Repeat("x", 5000))
		}, mod: func(c *Config) { c.MaxResponseBytes = 2048 }, want: ErrMalformed, requests: 1},
		{name: "slow server", reply: func(_ int, req request, w http.ResponseWriter, stall <-chan struct{}) {
			<-stall
		}, mod: func(c *Config) { c.Timeout = 50 * time.Millisecond; c.Retries = 1 }, want: ErrTimeout, requests: 1}, // a timeout is not retried (package openai's rule)
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			pipelinetest.CheckNoLeaks(t)
			s := newStandIn(t, tc.reply)
			c := client(t, s, tc.mod)
			got, err := c.Complete(t.Context(), "", "q")
			if tc.want == nil && (err != nil || got != tc.answer) {
				t.Errorf("got %q, %v; want %q", got, err, tc.answer)
			}
			if tc.want != nil && !errors.Is(err, tc.want) {
				t.Errorf("got %q, %v; want %v", got, err, tc.want)
			}
			var be *BackendError
			if tc.status != 0 && (!errors.As(err, &be) || be.StatusCode != tc.status || be.Message == "") {
				t.Errorf("error %v, want a BackendError with status %d and message", err, tc.status)
			}
			if n := len(s.requests()); n != tc.requests {
				t.Errorf("%d requests, want %d", n, tc.requests)
			}
			if err != nil && strings.Contains(err.Error(), "sekret") {
				t.Errorf("error shows the key: %v", err)
			}
		})
	}
}

func TestServerDown(t *testing.T) {
	pipelinetest.CheckNoLeaks(t)
	s := newStandIn(t, func(int, request, http.ResponseWriter, <-chan struct{}) {})
	c := client(t, s, nil)
	s.srv.Close()
	_, err := c.Complete(t.Context(), "", "q")
	if !errors.Is(err, ErrUnavailable) {
		t.Errorf("got %v, want ErrUnavailable", err)
	}
}

func TestBudgetAndCancel(t *testing.T) {
	pipelinetest.CheckNoLeaks(t)
	s := newStandIn(t, func(_ int, _ request, w http.ResponseWriter, stall <-chan struct{}) { <-stall })
	c := client(t, s, func(c *Config) { c.Budget = 100 * time.Millisecond })

	_, err := AbstractiveSummary(t.Context(), c, "some words", SummaryConcise)
	if !errors.Is(err, ErrTimeout) {
		t.Errorf("over budget: got %v, want ErrTimeout", err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	go func() {
		// Cancel once the request has reached the server.
		for len(s.requests()) < 2 {
			runtime.Gosched()
		}
		cancel()
	}()
	_, err = c.Complete(ctx, "", "q")
	if !errors.Is(err, context.Canceled) || errors.Is(err, ErrTimeout) {
		t.Errorf("cancelled: got %v, want context.Canceled", err)
	}
}

func TestConfig(t *testing.T) {
	tests := []struct {
		name string
		c    Config
		key  string
	}{
		{"no url", Config{Endpoint: openai.Endpoint{Model: "m"}}, "url"},
		{"ftp url", Config{Endpoint: openai.Endpoint{URL: "ftp://x/v1", Model: "m"}}, "url"},
		{"no model", Config{Endpoint: openai.Endpoint{URL: "http://x/v1"}}, "model"},
		{"retries", Config{Endpoint: openai.Endpoint{URL: "http://x/v1", Model: "m", Retries: 11}}, "retries"},
		{"timeout", Config{Endpoint: openai.Endpoint{URL: "http://x/v1", Model: "m", Timeout: -1}}, "timeout"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := New(tc.c)
			if !errors.Is(err, ErrInvalidConfig) || !strings.Contains(err.Error(), tc.key) {
				t.Errorf("got %v, want ErrInvalidConfig naming %s", err, tc.key)
			}
		})
	}
	v := Config{Endpoint: openai.Endpoint{URL: "http://x/v1", Model: "m", APIKey: "sekret"}}.LogValue().String()
	if strings.Contains(v, "sekret") || !strings.Contains(v, "REDACTED") {
		t.Errorf("LogValue %s", v)
	}
}

// translator answers translation requests line by line, upper-casing each
// line as its "translation" (dropping the last line when drop is set).
func translator(drop bool) func(int, request, http.ResponseWriter, <-chan struct{}) {
	line := regexp.MustCompile(`(?m)^\[(\d+)\] (.*)$`)
	return func(_ int, req request, w http.ResponseWriter, _ <-chan struct{}) {
		var out []string
		for _, m := range line.FindAllStringSubmatch(req.Messages[len(req.Messages)-1].Content, -1) {
			out = append(out, "["+m[1]+"] "+strings.ToUpper(m[2]))
		}
		if drop {
			out = out[:len(out)-1]
		}
		answer(w, strings.Join(out, "\n"))
	}
}

func TestTranslate(t *testing.T) {
	pipelinetest.CheckNoLeaks(t)
	tr := addonstest.Load(t, "ljspeech-LJ001-0007-to-0016-long.wav")
	utts := append(tr.Utterances, addonstest.Load(t, "stereo-two-speaker-librispeech.wav").Utterances...)
	utts = append(utts, recognizer.Utterance{Start: 70, End: 71})
	s := newStandIn(t, translator(false))
	c := client(t, s, func(c *Config) { c.MaxInputChars = 1000 })
	out, err := Translate(t.Context(), c, utts, "fr", TranslationOptions{Context: "a lecture on printing", Informal: true, MatchOriginalUtterances: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(out) != len(utts) {
		t.Fatalf("%d utterances out, %d in", len(out), len(utts))
	}
	for i, u := range out {
		in := utts[i]
		if u.Text != strings.ToUpper(in.Text) || u.Start != in.Start || u.End != in.End || u.Channel != in.Channel || u.Language != "fr" {
			t.Errorf("utterance %d: %+v from %+v", i, u, in)
		}
		var ws []string
		for k, w := range u.Words {
			ws = append(ws, w.Word)
			if w.Start < u.Start || w.End > u.End || w.End < w.Start || k > 0 && w.Start < u.Words[k-1].End-1e-9 {
				t.Errorf("utterance %d word %d times [%v, %v] outside [%v, %v]", i, k, w.Start, w.End, u.Start, u.End)
			}
		}
		if strings.Join(ws, " ") != u.Text {
			t.Errorf("utterance %d words %q, text %q", i, ws, u.Text)
		}
	}
	reqs := s.requests()
	if len(reqs) < 2 {
		t.Errorf("%d requests; MaxInputChars 1000 should split the batch", len(reqs))
	}
	sys := reqs[0].Body.Messages[0]
	if sys.Role != "system" || !strings.Contains(sys.Content, "French") || !strings.Contains(sys.Content, "a lecture on printing") ||
		!strings.Contains(sys.Content, "informal") {
		t.Errorf("system message %+v", sys)
	}

	// A reply with a line missing.
	s2 := newStandIn(t, translator(true))
	c2 := client(t, s2, nil)
	if _, err := Translate(t.Context(), c2, utts, "de", TranslationOptions{MatchOriginalUtterances: true}); !errors.Is(err, ErrMalformed) {
		t.Errorf("matched, short reply: got %v, want ErrMalformed", err)
	}
	out, err = Translate(t.Context(), c2, tr.Utterances, "de", TranslationOptions{})
	if err != nil || len(out) != 1 || out[0].Start != tr.Utterances[0].Start || out[0].End != tr.Utterances[len(tr.Utterances)-1].End {
		t.Errorf("unmatched, short reply: got %d utterances, %v; want one spanning the batch", len(out), err)
	}
}

func TestAnswerPrompts(t *testing.T) {
	pipelinetest.CheckNoLeaks(t)
	s := newStandIn(t, func(_ int, req request, w http.ResponseWriter, _ <-chan struct{}) {
		user := req.Messages[len(req.Messages)-1].Content
		if strings.Contains(user, "Request: fail") {
			http.Error(w, `{"error":{"message":"refused"}}`, http.StatusBadRequest)
			return
		}
		_, p, _ := strings.Cut(user, "Request: ")
		answer(w, "answer to "+p)
	})
	c := client(t, s, nil)
	transcript := "the earliest book printed with movable types"
	got, err := AnswerPrompts(t.Context(), c, transcript, []string{"who printed it", "fail please", "when"})
	if len(got) != 3 || got[0].Response != "answer to who printed it" || got[2].Response != "answer to when" ||
		got[1].Err == nil || got[0].Err != nil || !errors.Is(err, ErrBackend) {
		t.Fatalf("got %+v, %v", got, err)
	}
	for _, r := range s.requests() {
		if !strings.Contains(r.Body.Messages[1].Content, transcript) || r.Body.Messages[0].Role != "system" {
			t.Errorf("request without transcript: %+v", r.Body)
		}
	}
	c2 := client(t, s, func(c *Config) { c.MaxInputChars = 1000 })
	n := len(s.requests())
	got, err = AnswerPrompts(t.Context(), c2, strings.Repeat("word ", 300), []string{"a"})
	if !errors.Is(err, ErrTooLarge) || !errors.Is(got[0].Err, ErrTooLarge) || len(s.requests()) != n {
		t.Errorf("too large: %+v, %v", got, err)
	}
}

func TestAbstractiveSummary(t *testing.T) {
	pipelinetest.CheckNoLeaks(t)
	s := newStandIn(t, func(_ int, req request, w http.ResponseWriter, _ <-chan struct{}) {
		user := req.Messages[len(req.Messages)-1].Content
		switch {
		case strings.Contains(user, "(part)"):
			answer(w, "part summary")
		case strings.Contains(user, "key points"):
			answer(w, "Here:\n* first point\n2. second point\n\n• third")
		default:
			answer(w, "A summary.")
		}
	})
	c := client(t, s, func(c *Config) { c.MaxInputChars = 1000 })
	got, err := AbstractiveSummary(t.Context(), c, "short text", SummaryBulletPoints)
	if err != nil || got != "- Here:\n- first point\n- second point\n- third" {
		t.Errorf("bullets: %q, %v", got, err)
	}
	n := len(s.requests())
	got, err = AbstractiveSummary(t.Context(), c, strings.Repeat("word ", 700), SummaryGeneral)
	if err != nil || got != "A summary." {
		t.Errorf("long: %q, %v", got, err)
	}
	if parts := len(s.requests()) - n; parts != 5 { // 3500 chars in 1000-char parts, then the final request
		t.Errorf("%d requests for a long transcript, want 4 parts and the final one", parts)
	}
}
