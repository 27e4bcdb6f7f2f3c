package live

import (
	"encoding/json"
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/earshot-dev/earshot/params"
	"github.com/earshot-dev/earshot/recognizer"
	"github.com/earshot-dev/earshot/recognizer/addons/addonstest"
	"github.com/earshot-dev/earshot/recognizer/addons/llm"
	"github.com/earshot-dev/earshot/recognizer/openai"
	"github.com/earshot-dev/earshot/recognizer/pipeline"
	"github.com/earshot-dev/earshot/recognizer/pipeline/pipelinetest"
	"github.com/earshot-dev/earshot/transcript"
)

// collector is a client that keeps every message it is sent.
type collector struct {
	t   *testing.T
	got []map[string]any
}

func (c *collector) Send(b []byte) bool {
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		c.t.Errorf("message %s: %v", b, err)
	}
	c.got = append(c.got, m)
	return true
}

func (c *collector) Kick() {}

// sessionForAddons is a live session reduced to what the add-ons use: its
// parameters, the service's add-ons and a client that collects messages.
// The test's goroutine plays the session's.
func sessionForAddons(t *testing.T, a *pipeline.Addons, p *params.Live) (*session, func() []map[string]any) {
	t.Helper()
	p.MessagesConfig = params.WebSocketDefaults()
	c := &collector{t: t}
	s := &session{svc: &Service{pl: &pipeline.Transcriber{Addons: a}}, id: "5e55a0f1-0000-4000-8000-000000000000", p: p,
		log: slog.New(slog.DiscardHandler), messages: newMessageLog(1 << 20), listener: c}
	return s, func() []map[string]any { g := c.got; c.got = nil; return g }
}

func liveParams() *params.Live {
	return &params.Live{RealtimeProcessing: params.RealtimeProcessing{
		CustomSpelling:         true,
		CustomSpellingConfig:   &params.SpellingConfig{SpellingDictionary: map[string][]string{"woodcutters": {"wood cutters"}}},
		NamedEntityRecognition: true,
		SentimentAnalysis:      true,
		Translation:            true,
		TranslationConfig:      &params.TranslationConfig{TargetLanguages: []string{"fr", "es"}, MatchOriginalUtterances: true},
	}, PostProcessing: params.PostProcessing{Summarization: true, Chapterization: true, SummarizationConfig: params.SummarizationConfig{Type: "concise"}}}
}

// finalOf is a real final: the engine's output for a clip.
func finalOf(t *testing.T, clip string) recognizer.Utterance {
	t.Helper()
	u := addonstest.Load(t, clip).Utterances[0]
	u.Language = "en"
	return u
}

func data(m map[string]any) map[string]any { d, _ := m["data"].(map[string]any); return d }

// TestLiveRealtime runs the realtime add-ons on one final as onEvent does,
// then post-processing as finish does, without a backend.
func TestLiveRealtime(t *testing.T) {
	s, sent := sessionForAddons(t, (*pipeline.Addons)(nil).OrBuiltin(), liveParams())
	u := s.spell(finalOf(t, "ljspeech-LJ001-0003.wav"))
	if !strings.Contains(u.Text, "woodcutters") || strings.Contains(u.Text, "wood cutters") {
		t.Fatalf("spelling not applied to the final: %s", u.Text)
	}
	s.finals = append(s.finals, u)
	s.realtime(7, u)
	byType := map[string][]map[string]any{}
	for _, m := range sent() {
		byType[m["type"].(string)] = append(byType[m["type"].(string)], m)
		if m["session_id"] != s.id || m["created_at"] == nil {
			t.Errorf("message %v", m)
		}
		if _, ok := m["error"]; !ok {
			t.Errorf("%s has no error field", m["type"])
		}
	}
	ner := byType["named_entity_recognition"]
	if len(ner) != 1 || ner[0]["error"] != nil || data(ner[0])["utterance_id"] != "5e55a0f1_7" {
		t.Fatalf("named_entity_recognition %v", ner)
	}
	ents := data(ner[0])["results"].([]any)
	if len(ents) != 1 || ents[0].(map[string]any)["entity_type"] != "LOCATION" || ents[0].(map[string]any)["text"] != "netherlands" {
		t.Errorf("entities %v", ents)
	}
	if utt := data(ner[0])["utterance"].(map[string]any); !strings.Contains(utt["text"].(string), "woodcutters") {
		t.Errorf("utterance %v", utt)
	}
	sa := byType["sentiment_analysis"]
	if len(sa) != 1 || len(data(sa[0])["results"].([]any)) != 1 {
		t.Fatalf("sentiment_analysis %v", sa)
	}
	if r := data(sa[0])["results"].([]any)[0].(map[string]any); r["sentiment"] == "" || r["end"].(float64) <= r["start"].(float64) {
		t.Errorf("sentiment %v", r)
	}
	tr := byType["translation"]
	if len(tr) != 2 {
		t.Fatalf("%d translation messages, want one per target", len(tr))
	}
	for _, m := range tr {
		e, _ := m["error"].(map[string]any)
		if e == nil || e["status_code"] != 501.0 || e["exception"] != "NotConfigured" || data(m)["translated_utterance"] != nil {
			t.Errorf("translation without backend: %v", m)
		}
	}

	res := &pipeline.Result{}
	s.postProcess(t.Context(), res)
	post := sent()
	if len(post) != 2 || post[0]["type"] != "post_summarization" || post[1]["type"] != "post_chapterization" {
		t.Fatalf("post-processing messages %v", post)
	}
	if sum, _ := data(post[0])["results"].(string); sum == "" || post[0]["error"] != nil {
		t.Errorf("post_summarization %v", post[0])
	}
	chapters, _ := data(post[1])["results"].([]any)
	if len(chapters) != 1 || chapters[0].(map[string]any)["headline"] == "" {
		t.Errorf("post_chapterization %v", post[1])
	}
	if res.Summarization == nil || !res.Summarization.Success || res.Chapterization == nil || !res.Chapterization.Success {
		t.Errorf("result envelopes %+v %+v", res.Summarization, res.Chapterization)
	}
	// The realtime results reach the result's envelopes, shaped as a
	// pre-recorded job's.
	if e := res.NamedEntityRecognition; e == nil || !e.Success || e.IsEmpty || fmt.Sprint(e.Results) != fmt.Sprint([]pipeline.EntityResult{{EntityType: "LOCATION", Text: "netherlands", Start: ents[0].(map[string]any)["start"].(float64), End: ents[0].(map[string]any)["end"].(float64)}}) {
		t.Errorf("named_entity_recognition envelope %+v", e)
	}
	if e := res.SentimentAnalysis; e == nil || !e.Success || !strings.Contains(fmt.Sprint(e.Results), `"sentiment":`) {
		t.Errorf("sentiment_analysis envelope %+v", e)
	}
	if e := res.Translation; e == nil || e.Success || e.Error == nil || e.Error.StatusCode != 501 || len(e.Results.([]transcript.TranslationResult)) != 2 {
		t.Errorf("translation envelope without backend %+v", e)
	}
}

// TestLiveTranslation runs realtime translation through the stand-in: the
// worker answers off the session's goroutine and the session sends the
// messages as they come or at the end.
func TestLiveTranslation(t *testing.T) {
	pipelinetest.CheckNoLeaks(t)
	srv := pipelinetest.NewChatServer(t)
	s, sent := sessionForAddons(t, backendAddons(t, srv.URL()), liveParams())
	s.p.RealtimeProcessing.NamedEntityRecognition, s.p.RealtimeProcessing.SentimentAnalysis = false, false
	u := finalOf(t, "ls-test-clean-1089-134691-0001.wav")
	s.realtime(1, u)
	s.realtime(2, finalOf(t, "ljspeech-LJ001-0002.wav"))
	res := &pipeline.Result{}
	s.postProcess(t.Context(), res)
	msgs := sent()
	var types []string
	for _, m := range msgs {
		types = append(types, m["type"].(string))
	}
	want := "translation translation translation translation post_summarization post_chapterization"
	if strings.Join(types, " ") != want {
		t.Fatalf("messages %v, want %s", types, want)
	}
	first := msgs[0]
	d := data(first)
	tu, _ := d["translated_utterance"].(map[string]any)
	if first["error"] != nil || d["utterance_id"] != "5e55a0f1_1" || d["original_language"] != "en" || d["target_language"] != "fr" || tu == nil {
		t.Fatalf("translation message %v", first)
	}
	if !strings.HasPrefix(tu["text"].(string), "(French) ") || tu["language"] != "fr" || tu["start"].(float64) != transcript.Round3(u.Start) || tu["end"].(float64) != transcript.Round3(u.End) {
		t.Errorf("translated utterance %v", tu)
	}
	if data(msgs[4])["results"] != "The speakers talk about printing and dinner." {
		t.Errorf("abstractive post_summarization %v", msgs[4])
	}
	if n := len(srv.Requests()); n != 2*2+1 {
		t.Errorf("%d requests, want 4 translations and a summary", n)
	}
	// The translation envelope holds, per target, both utterances in order.
	env := res.Translation
	if env == nil || !env.Success || env.IsEmpty || env.ExecTime <= 0 {
		t.Fatalf("translation envelope %+v", env)
	}
	for i, tr := range env.Results.([]transcript.TranslationResult) {
		target := []string{"fr", "es"}[i]
		if tr.Error != nil || fmt.Sprint(tr.Languages) != "["+target+"]" || len(tr.Utterances) != 2 ||
			tr.Utterances[0].Start != transcript.Round3(u.Start) || tr.Utterances[0].Language != target || tr.FullTranscript == "" {
			t.Errorf("translation result %d: %+v", i, tr)
		}
	}
}

// TestLiveTranslationBounds: a full queue answers at once with an error,
// and the end of the session cancels what the backend has not answered.
func TestLiveTranslationBounds(t *testing.T) {
	pipelinetest.CheckNoLeaks(t)
	srv := pipelinetest.NewChatServer(t)
	srv.Set(0, true)
	s, sent := sessionForAddons(t, backendAddons(t, srv.URL()), liveParams())
	s.p.RealtimeProcessing.NamedEntityRecognition, s.p.RealtimeProcessing.SentimentAnalysis = false, false
	s.p.PostProcessing = params.PostProcessing{}
	u := finalOf(t, "ljspeech-LJ001-0002.wav")
	n := liveTranslationQueue + 3
	for i := range n {
		s.realtime(i, u)
	}
	busy := sent()
	if len(busy) < 2 {
		t.Fatalf("%d immediate messages with the queue full, want at least 2", len(busy))
	}
	for _, m := range busy {
		if e, _ := m["error"].(map[string]any); e == nil || e["status_code"] != 503.0 {
			t.Errorf("backlog message %v", m)
		}
	}
	start := time.Now()
	s.addons.finish(t.Context(), 100*time.Millisecond)
	if el := time.Since(start); el > 5*time.Second {
		t.Errorf("finish took %s with the backend hanging", el)
	}
	s.pumpAddons()
	rest := sent()
	if len(busy)+len(rest) != 2*n {
		t.Errorf("%d + %d messages for %d finals in 2 languages", len(busy), len(rest), n)
	}
	for _, m := range rest {
		if e, _ := m["error"].(map[string]any); e == nil || e["status_code"] != 499.0 {
			t.Errorf("cancelled translation %v", m)
		}
	}
}

// backendAddons are the add-ons with the stand-in at url as their backend.
func backendAddons(t *testing.T, url string) *pipeline.Addons {
	t.Helper()
	c := pipeline.AddonsConfig{LLM: llm.Config{Endpoint: openai.Endpoint{URL: url + "/v1", Model: "stand-in", APIKey: "sk-test", Timeout: 5 * time.Second, Retries: -1}}}
	c.SetDefaults()
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
	a, err := pipeline.NewAddons(c, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { a.Close() })
	return a
}
