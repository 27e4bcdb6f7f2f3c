package pipeline

import (
	"bytes"
	"encoding/json"
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/earshot-dev/earshot/config"
	"github.com/earshot-dev/earshot/recognizer/addons/llm"
	"github.com/earshot-dev/earshot/recognizer/openai"
	"github.com/earshot-dev/earshot/recognizer/pipeline/pipelinetest"
)

func TestAddonsConfig(t *testing.T) {
	tests := []struct {
		name    string
		cfg     AddonsConfig
		wantErr []string // keys the error must name; nil means valid
		backend bool
	}{
		{"no backend", AddonsConfig{}, nil, false},
		{"backend", AddonsConfig{LLM: llm.Config{Endpoint: openai.Endpoint{URL: "http://gpu:8000/v1", Model: "m", APIKey: "k"}}}, nil, true},
		{"never retry", AddonsConfig{LLM: llm.Config{Endpoint: openai.Endpoint{URL: "https://gpu/v1", Model: "m", Retries: -1}}}, nil, true},
		{"model without url", AddonsConfig{LLM: llm.Config{Endpoint: openai.Endpoint{Model: "m"}}}, []string{"addons.llm.url"}, false},
		{"key without url", AddonsConfig{LLM: llm.Config{Endpoint: openai.Endpoint{APIKey: "k"}}}, []string{"addons.llm.url"}, false},
		{"url without model", AddonsConfig{LLM: llm.Config{Endpoint: openai.Endpoint{URL: "http://gpu/v1"}}}, []string{"addons.llm.model"}, true},
		{"not http", AddonsConfig{LLM: llm.Config{Endpoint: openai.Endpoint{URL: "ftp://gpu/v1", Model: "m"}}}, []string{"addons.llm.url"}, true},
		{"bounds", AddonsConfig{LLM: llm.Config{Endpoint: openai.Endpoint{URL: "http://gpu/v1", Model: "m", Retries: 11, Timeout: -time.Second}, Budget: -1}},
			[]string{"addons.llm.retries", "addons.llm.timeout", "addons.llm.budget"}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := tt.cfg
			c.SetDefaults()
			err := config.Under("addons", c.Validate()) // its keys as the file names them
			if tt.wantErr == nil && err != nil {
				t.Fatalf("Validate: %v", err)
			}
			for _, key := range tt.wantErr {
				if err == nil || !strings.Contains(err.Error(), key) {
					t.Errorf("Validate() = %v, want it to name %s", err, key)
				}
			}
			if c.LLM.Configured() != tt.backend {
				t.Errorf("Configured() = %v", c.LLM.Configured())
			}
			if err != nil {
				return
			}
			a, err := NewAddons(c, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer a.Close()
			if (a.Translation != nil) != tt.backend || (a.Prompts != nil) != tt.backend {
				t.Errorf("backend add-ons wired = %v, want %v", a.Translation != nil, tt.backend)
			}
		})
	}
}

// TestSecretRedacted checks every way the config is printed hides the key,
// and that the YAML file still sets it.
func TestSecretRedacted(t *testing.T) {
	const key = "sk-live-0123456789"
	var c AddonsConfig
	if err := yaml.Unmarshal([]byte("llm:\n  url: http://gpu/v1\n  model: m\n  api_key: "+key+"\n"), &c); err != nil {
		t.Fatal(err)
	}
	if string(c.LLM.APIKey) != key || llmClient(c.LLM, "").APIKey != key {
		t.Fatalf("api_key not read from YAML: %q", string(c.LLM.APIKey))
	}
	var logged bytes.Buffer
	slog.New(slog.NewJSONHandler(&logged, nil)).Info("config", "addons", c.LLM, "key", c.LLM.APIKey)
	y, _ := yaml.Marshal(c)
	j, _ := json.Marshal(c)
	outputs := map[string]string{
		"slog": logged.String(),
		"fmt":  fmt.Sprintf("%v %+v %#v %s", c, c, c, c.LLM.APIKey),
		"yaml": string(y),
		"json": string(j),
	}
	for name, out := range outputs {
		if strings.Contains(out, key) {
			t.Errorf("%s output carries the key: %s", name, out)
		}
		if !strings.Contains(out, "REDACTED") {
			t.Errorf("%s output does not say REDACTED: %s", name, out)
		}
	}
}

func backendAddons(t *testing.T, url string, mod func(*llm.Config)) *Addons {
	t.Helper()
	c := AddonsConfig{LLM: llm.Config{Endpoint: openai.Endpoint{URL: url + "/v1", Model: "stand-in", APIKey: "sk-test", Timeout: 5 * time.Second, Retries: -1}}}
	if mod != nil {
		mod(&c.LLM)
	}
	c.SetDefaults()
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
	a, err := NewAddons(c, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { a.Close() })
	return a
}

// TestBackendAddons runs translation, audio_to_llm and abstractive
// summarization against the stand-in, and through its failure modes.
func TestBackendAddons(t *testing.T) {
	pipelinetest.CheckNoLeaks(t)
	m := buildMixture(t, 1.0, twoVoices[:3])
	p := allBuiltins()
	p.AudioToLLMConfig.Model = "other-model"
	p.PIIRedaction, p.PunctuationEnhanced = false, false

	t.Run("answers", func(t *testing.T) {
		s := pipelinetest.NewChatServer(t)
		_, out := runAddons(t, backendAddons(t, s.URL(), nil), m, false, [][]int16{m.pcm}, p)
		reqs := s.Requests()
		// One translation batch per language, one request per prompt, one summary.
		if len(reqs) != 2+2+1 {
			t.Fatalf("%d requests: %+v", len(reqs), reqs)
		}
		for _, r := range reqs {
			if r.Path != "/v1/chat/completions" || r.Auth != "Bearer sk-test" {
				t.Errorf("request %s auth %q", r.Path, r.Auth)
			}
		}
		env := envelopeOf(t, "translation", out["translation"])
		results := env["results"].([]any)
		if env["success"] != true || len(results) != 2 {
			t.Fatalf("translation %v", env)
		}
		for i, lang := range []string{"French", "German"} {
			res := results[i].(map[string]any)
			if res["error"] != nil || res["languages"].([]any)[0] != p.TranslationConfig.TargetLanguages[i] {
				t.Errorf("%s result: %v %v", lang, res["error"], res["languages"])
			}
			tu := res["utterances"].([]any)
			if len(tu) != len(m.utts) {
				t.Fatalf("%s: %d utterances for %d", lang, len(tu), len(m.utts))
			}
			for k, u := range tu {
				u := u.(map[string]any)
				if !strings.HasPrefix(u["text"].(string), "("+lang+")") || abs(u["start"].(float64)-m.utts[k].Start) > 0.001 ||
					abs(u["end"].(float64)-m.utts[k].End) > 0.001 || u["speaker"] == nil {
					t.Errorf("%s utterance %d: %v", lang, k, u)
				}
			}
			if !strings.Contains(res["full_transcript"].(string), "("+lang+")") {
				t.Errorf("%s full_transcript %q", lang, res["full_transcript"])
			}
			subs := res["subtitles"].([]any)
			if len(subs) != 2 || !strings.Contains(subs[0].(map[string]any)["subtitles"].(string), "("+lang+")") {
				t.Errorf("%s subtitles %v", lang, subs)
			}
			if len(res["sentences"].([]any)) != 1 {
				t.Errorf("%s sentences %v", lang, res["sentences"])
			}
		}
		env = envelopeOf(t, "audio_to_llm", out["audio_to_llm"])
		answers := env["results"].([]any)
		if env["success"] != true || len(answers) != 2 {
			t.Fatalf("audio_to_llm %v", env)
		}
		for i, a := range answers {
			inner := envelopeOf(t, "audio_to_llm answer", a)
			res := inner["results"].(map[string]any)
			prompt := p.AudioToLLMConfig.Prompts[i]
			if res["prompt"] != prompt || res["response"] != "answer to "+prompt {
				t.Errorf("answer %d: %v", i, res)
			}
		}
		models := map[string]int{}
		for _, r := range reqs {
			models[r.Model]++
			if strings.Contains(r.User, "Request: ") && !strings.Contains(r.User, "flour") {
				t.Errorf("prompt sent without the (respelled) transcript: %q", r.User)
			}
		}
		if models["other-model"] != 2 || models["stand-in"] != 3 {
			t.Errorf("models used %v: audio_to_llm_config.model not honoured", models)
		}
		env = envelopeOf(t, "summarization", out["summarization"])
		if env["results"] != "- The speakers talk about printing and dinner." {
			t.Errorf("abstractive summary %v", env["results"])
		}
	})

	failures := []struct {
		name      string
		status    int
		hang      bool
		down      bool
		code      int
		exception string
	}{
		{"server error", 500, false, false, 502, "BackendError"},
		{"server down", 0, false, true, 503, "BackendUnavailable"},
		{"timeout", 0, true, false, 504, "Timeout"},
	}
	for _, f := range failures {
		t.Run(f.name, func(t *testing.T) {
			s := pipelinetest.NewChatServer(t)
			s.Set(f.status, f.hang)
			url := s.URL()
			if f.down {
				s.Close()
			}
			a := backendAddons(t, url, func(c *llm.Config) { c.Timeout = 200 * time.Millisecond })
			start := time.Now()
			_, out := runAddons(t, a, m, false, [][]int16{m.pcm}, p)
			t.Logf("%s: add-ons took %s", f.name, time.Since(start))
			for _, name := range []string{"translation", "audio_to_llm", "summarization"} {
				env := envelopeOf(t, name, out[name])
				code, exc, msg := errorStatus(env)
				if env["success"] != false || code != f.code || exc != f.exception {
					t.Errorf("%s: %v %d %s %q, want %d %s", name, env["success"], code, exc, msg, f.code, f.exception)
				}
				if strings.Contains(msg, "sk-test") {
					t.Errorf("%s: message carries the key: %q", name, msg)
				}
			}
			// The built-ins and the transcript are unaffected.
			for _, name := range []string{"sentences", "sentiment_analysis", "named_entity_recognition", "diarization"} {
				if env := envelopeOf(t, name, out[name]); env["success"] != true {
					t.Errorf("%s failed with the backend: %v", name, env)
				}
			}
			if out["transcription"].(map[string]any)["full_transcript"] == "" {
				t.Errorf("no transcript")
			}
		})
	}
}
