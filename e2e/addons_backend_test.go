package e2e

import (
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// chatStandIn is an OpenAI-compatible chat-completions server: it records
// requests and answers as a model following earshot's prompts would (a
// translation repeats each numbered line tagged with the target language;
// a prompt is echoed; a summary is one fixed sentence).
type chatStandIn struct {
	srv  *httptest.Server
	mu   sync.Mutex
	reqs []chatReq // guarded by mu
}

type chatReq struct {
	Path, Auth, Model, System, User string
}

var chatLine = regexp.MustCompile(`^\[(\d+)\] (.*)$`)

func newChatStandIn(t *testing.T) *chatStandIn {
	t.Helper()
	c := &chatStandIn{}
	c.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			Model    string
			Messages []struct{ Role, Content string }
		}
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
			http.Error(w, `{"error":{"message":"bad json"}}`, 400)
			return
		}
		cr := chatReq{Path: r.URL.Path, Auth: r.Header.Get("Authorization"), Model: req.Model}
		for _, m := range req.Messages {
			if m.Role == "system" {
				cr.System = m.Content
			} else {
				cr.User = m.Content
			}
		}
		c.mu.Lock()
		c.reqs = append(c.reqs, cr)
		c.mu.Unlock()
		reply := "The recording is about going forward."
		if _, rest, ok := strings.Cut(cr.System, "speech transcript into "); ok {
			lang, _, _ := strings.Cut(rest, ". ")
			var lines []string
			for _, l := range strings.Split(cr.User, "\n") {
				if m := chatLine.FindStringSubmatch(l); m != nil {
					lines = append(lines, fmt.Sprintf("[%s] (%s) %s", m[1], lang, m[2]))
				}
			}
			reply = strings.Join(lines, "\n")
		} else if _, q, ok := strings.Cut(cr.User, "Request: "); ok {
			reply = "answer to " + q
		}
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(map[string]any{"object": "chat.completion",
			"choices": []any{map[string]any{"index": 0, "message": map[string]any{"role": "assistant", "content": reply}}}})
	}))
	t.Cleanup(c.srv.Close)
	return c
}

func (c *chatStandIn) requests() []chatReq {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.reqs)
}

// TestAddonsBackend configures the stand-in as the daemon's LLM backend:
// translation, audio_to_llm and abstractive summaries go through it, on
// pre-recorded and live jobs; then a daemon whose backend is down still
// finishes its jobs with the error in each envelope.
func TestAddonsBackend(t *testing.T) {
	const apiKey = "sk-e2e-3f9a7c"
	chat := newChatStandIn(t)
	d := startDaemon(t, "", fmt.Sprintf("addons:\n  llm:\n    url: %s/v1\n    model: stand-in-model\n    api_key: %s\n    timeout: 10s\n    retries: -1\n", chat.srv.URL, apiKey))
	key := createKey(t, d.DataDir, "acme")
	goforward, _ := clip(t, "pocketsphinx-goforward.wav")
	body := func(url string) map[string]any {
		return map[string]any{
			"audio_url":           url,
			"translation":         true,
			"translation_config":  map[string]any{"target_languages": []string{"fr", "de"}, "context": "robot commands"},
			"subtitles":           true,
			"subtitles_config":    map[string]any{"formats": []string{"vtt"}},
			"sentences":           true,
			"audio_to_llm":        true,
			"audio_to_llm_config": map[string]any{"prompts": []string{"What is the command?", "How far?"}},
			"summarization":       true,
		}
	}

	t.Run("pre-recorded", func(t *testing.T) {
		before := len(chat.requests())
		job := submit(t, d, key, goforward, body)
		res := job["result"].(map[string]any)
		full := res["transcription"].(map[string]any)["full_transcript"].(string)
		reqs := chat.requests()[before:]
		if len(reqs) != 2+2+1 {
			t.Fatalf("backend got %d requests, want 2 translations, 2 prompts, 1 summary: %+v", len(reqs), reqs)
		}
		for _, r := range reqs {
			if r.Path != "/v1/chat/completions" || r.Auth != "Bearer "+apiKey || r.Model != "stand-in-model" || !strings.Contains(r.User, full) {
				t.Errorf("request %+v (transcript %q)", r, full)
			}
		}
		var langs []string
		for _, r := range reqs {
			if _, rest, ok := strings.Cut(r.System, "speech transcript into "); ok {
				lang, _, _ := strings.Cut(rest, ".")
				langs = append(langs, lang)
				if !strings.Contains(r.System, "robot commands") {
					t.Errorf("translation_config.context not sent: %q", r.System)
				}
			}
		}
		if !slices.Equal(langs, []string{"French", "German"}) {
			t.Errorf("translation requests for %v", langs)
		}
		env := envelope(t, "translation", res["translation"])
		results, _ := env["results"].([]any)
		if env["success"] != true || len(results) != 2 {
			t.Fatalf("translation: %v", env)
		}
		for i, lang := range []string{"French", "German"} {
			r := results[i].(map[string]any)
			if r["error"] != nil || !strings.HasPrefix(r["full_transcript"].(string), "("+lang+") ") || len(r["utterances"].([]any)) == 0 {
				t.Errorf("%s: %v", lang, r)
			}
			subs, _ := r["subtitles"].([]any)
			checkSubtitles(t, subs, "vtt")
			if len(subs) == 1 && !strings.Contains(subs[0].(map[string]any)["subtitles"].(string), "("+lang+")") {
				t.Errorf("%s subtitles are not translated: %v", lang, subs)
			}
		}
		env = envelope(t, "audio_to_llm", res["audio_to_llm"])
		answers, _ := env["results"].([]any)
		if env["success"] != true || len(answers) != 2 {
			t.Fatalf("audio_to_llm: %v", env)
		}
		for i, q := range []string{"What is the command?", "How far?"} {
			a := envelope(t, "audio_to_llm answer", answers[i])
			if r := a["results"].(map[string]any); r["prompt"] != q || r["response"] != "answer to "+q {
				t.Errorf("answer %d: %v", i, r)
			}
		}
		if env := envelope(t, "summarization", res["summarization"]); env["results"] != "The recording is about going forward." {
			t.Errorf("abstractive summary: %v", env)
		}
	})

	t.Run("live", func(t *testing.T) {
		msgs, job := liveAddonsSession(t, d, key)
		translated := 0
		for _, m := range msgs {
			var data map[string]any
			json.Unmarshal(m.Data, &data)
			switch m.Type {
			case "translation":
				tu, _ := data["translated_utterance"].(map[string]any)
				if string(m.Error) != "null" || tu == nil || !strings.HasPrefix(tu["text"].(string), "(French) ") || data["target_language"] != "fr" {
					t.Errorf("translation: %s", m.raw)
				}
				translated++
			case "post_summarization":
				if data["results"] != "The recording is about going forward." {
					t.Errorf("abstractive post_summarization: %s", m.raw)
				}
			}
		}
		if translated == 0 {
			t.Errorf("no translation message")
		}
		checkLiveResult(t, job)
	})

	// The key never reaches the log.
	d.mu.Lock()
	for _, l := range d.lines {
		if strings.Contains(l, apiKey) {
			t.Errorf("log line carries the backend key: %s", l)
		}
	}
	d.mu.Unlock()

	t.Run("backend down", func(t *testing.T) {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		dead := ln.Addr().String()
		ln.Close()
		down := startDaemon(t, "", fmt.Sprintf("addons:\n  llm:\n    url: http://%s/v1\n    model: m\n    timeout: 2s\n    retries: -1\n", dead))
		key := createKey(t, down.DataDir, "acme")
		job := submit(t, down, key, goforward, body)
		res := job["result"].(map[string]any)
		for _, name := range []string{"translation", "audio_to_llm", "summarization"} {
			env := envelope(t, name, res[name])
			if code, exc, msg := addonErr(env); env["success"] != false || code != 503 || exc != "BackendUnavailable" {
				t.Errorf("%s: %v %d %s %q", name, env["success"], code, exc, msg)
			} else if strings.Contains(msg, dead) || strings.Contains(msg, "refused") {
				t.Errorf("%s: message %q shows the backend's address or the network error (issue 13 finding 8)", name, msg)
			}
		}
		if res["transcription"].(map[string]any)["full_transcript"] == "" {
			t.Errorf("no transcript")
		}
		down.WaitLog(5*time.Second, "add-on backend failed", "translation")
	})
}
