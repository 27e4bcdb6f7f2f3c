package pipeline

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/earshot-dev/earshot/config"
	"github.com/earshot-dev/earshot/params"
	"github.com/earshot-dev/earshot/recognizer"
	"github.com/earshot-dev/earshot/recognizer/addons/addonstest"
	"github.com/earshot-dev/earshot/recognizer/addons/diarization"
	"github.com/earshot-dev/earshot/recognizer/addons/llm"
	"github.com/earshot-dev/earshot/recognizer/addons/sentiment"
	"github.com/earshot-dev/earshot/recognizer/openai"
	"github.com/earshot-dev/earshot/recognizer/pipeline/pipelinetest"
	"github.com/earshot-dev/earshot/recognizer/recognizertest"
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

// mixture is a mono recording built from clips of the speech set, with
// the engine's stored output for each clip shifted to its place, and the
// true speaker of each utterance.
type mixture struct {
	pcm      []int16
	utts     []recognizer.Utterance
	speakers []int
	offsets  map[string]float64 // clip → start time in the mixture
	duration float64
}

type turn struct {
	speaker int
	clip    string
}

func buildMixture(t *testing.T, gap float64, turns []turn) mixture {
	t.Helper()
	m := mixture{offsets: map[string]float64{}}
	silence := make([]int16, int(gap*recognizer.SampleRate))
	for _, tr := range turns {
		golden := addonstest.Load(t, tr.clip)
		pcm := recognizertest.ReadWAV16(t, golden.Clip.Path)[0]
		off := float64(len(m.pcm)) / recognizer.SampleRate
		m.offsets[tr.clip] = off
		for _, u := range golden.Utterances {
			u.Start += off
			u.End += off
			u.Words = slices.Clone(u.Words)
			for i := range u.Words {
				u.Words[i].Start += off
				u.Words[i].End += off
			}
			m.utts = append(m.utts, u)
			m.speakers = append(m.speakers, tr.speaker)
		}
		m.pcm = append(append(m.pcm, pcm...), silence...)
	}
	m.duration = float64(len(m.pcm)) / recognizer.SampleRate
	return m
}

// twoVoices alternates the LJ Speech reader (a woman) with LibriSpeech
// speaker 1089 (a man).
var twoVoices = []turn{
	{0, "ljspeech-LJ001-0001.wav"},
	{1, "ls-test-clean-1089-134686-0000.wav"},
	{0, "ljspeech-LJ001-0003.wav"},
	{1, "ls-test-clean-1089-134691-0001.wav"},
	{0, "ljspeech-LJ001-0005.wav"},
}

// speakerError is the share of speech time whose speaker differs from the
// truth under the best one-to-one mapping of labels (the diarization
// error rate with true utterance boundaries).
func speakerError(utts []recognizer.Utterance, ref, hyp []int) float64 {
	overlap := map[[2]int]float64{}
	total := 0.0
	for i, u := range utts {
		overlap[[2]int{hyp[i], ref[i]}] += u.End - u.Start
		total += u.End - u.Start
	}
	hs, rs := slices.Max(hyp)+1, slices.Max(ref)+1
	best := 0.0
	var try func(h int, used map[int]bool, sum float64)
	try = func(h int, used map[int]bool, sum float64) {
		if h == hs {
			best = max(best, sum)
			return
		}
		try(h+1, used, sum)
		for r := range rs {
			if !used[r] {
				used[r] = true
				try(h+1, used, sum+overlap[[2]int{h, r}])
				used[r] = false
			}
		}
	}
	try(0, map[int]bool{}, 0)
	return max(0, (total-best)/total)
}

// maxSpeakerError bounds the diarization error on twoVoices: measured
// 0.000 (every utterance on its speaker), plus a margin.
const maxSpeakerError = 0.05

func allBuiltins() *params.PreRecorded {
	yes := true
	return &params.PreRecorded{
		CustomSpelling:         true,
		CustomSpellingConfig:   &params.SpellingConfig{SpellingDictionary: map[string][]string{"flour": {"flower"}}},
		CustomVocabulary:       &yes,
		CustomVocabularyConfig: &params.VocabularyConfig{Vocabulary: []params.VocabularyItem{{Value: "mutton"}}},
		PunctuationEnhanced:    true,
		Diarization:            true,
		NamedEntityRecognition: true,
		PIIRedaction:           true,
		PIIRedactionConfig:     &params.PIIRedactionConfig{EntityTypes: []string{"GDPR", "LOCATION", "NOT_A_TYPE"}, ProcessedTextType: "MARKER"},
		Sentences:              true,
		Subtitles:              true,
		SubtitlesConfig:        &params.SubtitlesConfig{Formats: []string{"srt", "vtt"}, Style: "default"},
		SentimentAnalysis:      true,
		Summarization:          true,
		SummarizationConfig:    &params.SummarizationConfig{Type: "bullet_points"},
		Translation:            true,
		TranslationConfig:      &params.TranslationConfig{TargetLanguages: []string{"fr", "de"}, MatchOriginalUtterances: true},
		AudioToLLM:             true,
		AudioToLLMConfig:       &params.AudioToLLMConfig{Prompts: []string{"Who speaks?", "List the foods."}},
	}
}

// runAddons runs the result builder as TranscribeFile does and returns the
// result and its JSON, decoded generically as a client would read it.
func runAddons(t *testing.T, a *Addons, m mixture, distinct bool, channels [][]int16, p *params.PreRecorded) (*Result, map[string]any) {
	t.Helper()
	br := &recognizer.BatchResult{Utterances: m.utts, DistinctChannels: 1, Language: "en"}
	if distinct {
		br.DistinctChannels = len(channels)
	}
	r := buildResult(br, m.duration, "en")
	a.apply(t.Context(), r, m.utts, addonJob{p: p, channels: channels, distinctChannels: distinct, lang: "en", duration: m.duration})
	b, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	var out map[string]any
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	return r, out
}

// envelopeOf checks that v is an add-on envelope with exactly its five
// fields and returns it.
func envelopeOf(t *testing.T, name string, v any) map[string]any {
	t.Helper()
	env, ok := v.(map[string]any)
	if !ok {
		t.Fatalf("%s: %T is not an envelope", name, v)
	}
	keys := make([]string, 0, len(env))
	for k := range env {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	if want := []string{"error", "exec_time", "is_empty", "results", "success"}; !slices.Equal(keys, want) {
		t.Errorf("%s: envelope keys %v, want %v", name, keys, want)
	}
	if _, ok := env["success"].(bool); !ok {
		t.Errorf("%s: success %v", name, env["success"])
	}
	if et, ok := env["exec_time"].(float64); !ok || et < 0 {
		t.Errorf("%s: exec_time %v", name, env["exec_time"])
	}
	if env["success"] == true && env["error"] != nil {
		t.Errorf("%s: success with error %v", name, env["error"])
	}
	if e, ok := env["error"].(map[string]any); ok {
		if _, ok := e["status_code"].(float64); !ok || e["exception"] == "" || e["message"] == "" {
			t.Errorf("%s: AddonError %v", name, e)
		}
	} else if env["error"] != nil {
		t.Errorf("%s: error %v", name, env["error"])
	}
	return env
}

func errorStatus(env map[string]any) (int, string, string) {
	e, _ := env["error"].(map[string]any)
	if e == nil {
		return 0, "", ""
	}
	code, _ := e["status_code"].(float64)
	exc, _ := e["exception"].(string)
	msg, _ := e["message"].(string)
	return int(code), exc, msg
}

var (
	srtCue = regexp.MustCompile(`(?m)^\d+\n\d\d:\d\d:\d\d,\d{3} --> \d\d:\d\d:\d\d,\d{3}\n\S`)
	vttCue = regexp.MustCompile(`(?m)^\d\d:\d\d:\d\d\.\d{3} --> \d\d:\d\d:\d\d\.\d{3}\n\S`)
)

// TestPreRecordedAddons runs every built-in add-on on real engine output
// (two speakers, five clips) and checks each does what it claims.
func TestPreRecordedAddons(t *testing.T) {
	m := buildMixture(t, 1.0, twoVoices)
	raw := strings.ToLower(joinText(m.utts))
	if !strings.Contains(raw, "flower") || !strings.Contains(raw, "netherlands") {
		t.Fatalf("the engine output changed; the checks below assume it: %s", raw)
	}
	r, out := runAddons(t, builtinAddons(), m, false, [][]int16{m.pcm}, allBuiltins())
	tr := out["transcription"].(map[string]any)
	full := tr["full_transcript"].(string)
	utts := tr["utterances"].([]any)
	if len(utts) != len(m.utts) {
		t.Fatalf("%d utterances, want %d", len(utts), len(m.utts))
	}

	t.Run("custom_spelling", func(t *testing.T) {
		if !strings.Contains(full, "flour") || strings.Contains(strings.ToLower(full), "flower") {
			t.Errorf("flower not respelled flour: %s", full)
		}
	})
	t.Run("custom_vocabulary", func(t *testing.T) {
		if note, _ := r.PostSessionMetadata["custom_vocabulary"].(string); !strings.Contains(note, "not applied") {
			t.Errorf("post_session_metadata custom_vocabulary = %q", note)
		}
	})
	t.Run("punctuation_enhanced", func(t *testing.T) {
		if !strings.Contains(full, ".") || full[0] < 'A' || full[0] > 'Z' {
			t.Errorf("not punctuated: %s", full)
		}
	})
	t.Run("diarization", func(t *testing.T) {
		env := envelopeOf(t, "diarization", out["diarization"])
		if env["success"] != true || len(env["results"].([]any)) != len(utts) {
			t.Fatalf("diarization envelope %v", env)
		}
		hyp := make([]int, len(utts))
		for i, u := range utts {
			sp, ok := u.(map[string]any)["speaker"].(float64)
			if !ok {
				t.Fatalf("utterance %d has no speaker", i)
			}
			hyp[i] = int(sp)
		}
		der := speakerError(m.utts, m.speakers, hyp)
		t.Logf("diarization error %.3f; truth %v, found %v", der, m.speakers, hyp)
		if der > maxSpeakerError || slices.Max(hyp) != 1 {
			t.Errorf("diarization error %.3f > %.3f or %d speakers", der, maxSpeakerError, slices.Max(hyp)+1)
		}
	})
	t.Run("named_entity_recognition", func(t *testing.T) {
		env := envelopeOf(t, "named_entity_recognition", out["named_entity_recognition"])
		var where float64 = -1
		for _, u := range addonstest.Load(t, "ljspeech-LJ001-0003.wav").Utterances {
			for _, w := range u.Words {
				if w.Word == "netherlands" {
					where = w.Start + m.offsets["ljspeech-LJ001-0003.wav"]
				}
			}
		}
		found := false
		for _, e := range env["results"].([]any) {
			e := e.(map[string]any)
			if e["entity_type"] == "LOCATION" && abs(e["start"].(float64)-where) < 0.05 && e["end"].(float64) > e["start"].(float64) {
				found = true
				if e["text"] != "[LOCATION]" {
					t.Errorf("a redacted entity's text is %q in NER results", e["text"])
				}
			}
		}
		if !found {
			t.Errorf("no LOCATION at %.2f s in %v", where, env["results"])
		}
	})
	t.Run("pii_redaction", func(t *testing.T) {
		env := envelopeOf(t, "pii_redaction", out["pii_redaction"])
		code, exc, msg := errorStatus(env)
		if code != 422 || exc != "UnsupportedEntityType" || !strings.Contains(msg, "NOT_A_TYPE") {
			t.Errorf("unsupported type not reported: %d %s %q", code, exc, msg)
		}
		if len(env["results"].([]any)) == 0 {
			t.Errorf("nothing redacted")
		}
		b, _ := json.Marshal(tr)
		if strings.Contains(strings.ToLower(string(b)), "netherlands") {
			t.Errorf("netherlands survives redaction in the transcription")
		}
		for _, k := range []string{"sentences", "summarization", "sentiment_analysis", "named_entity_recognition", "diarization"} {
			if b, _ := json.Marshal(out[k]); strings.Contains(strings.ToLower(string(b)), "netherlands") {
				t.Errorf("netherlands survives redaction in %s", k)
			}
		}
		if !strings.Contains(full, "[LOCATION]") {
			t.Errorf("no marker in %s", full)
		}
	})
	t.Run("sentences", func(t *testing.T) {
		env := envelopeOf(t, "sentences", out["sentences"])
		inner := tr["sentences"].([]any)
		if len(inner) != 1 {
			t.Fatalf("transcription.sentences has %d envelopes", len(inner))
		}
		envelopeOf(t, "transcription.sentences", inner[0])
		ss := env["results"].([]any)
		if len(ss) < 2 {
			t.Errorf("%d sentences: %v", len(ss), ss)
		}
		joined := ""
		for _, s := range ss {
			joined += s.(string) + " "
		}
		if strings.Join(strings.Fields(joined), " ") != strings.Join(strings.Fields(full), " ") {
			t.Errorf("sentences do not cover the transcript:\n%s\n%s", joined, full)
		}
	})
	t.Run("subtitles", func(t *testing.T) {
		subs := tr["subtitles"].([]any)
		if len(subs) != 2 {
			t.Fatalf("%d subtitle files", len(subs))
		}
		srt, vtt := subs[0].(map[string]any), subs[1].(map[string]any)
		if srt["format"] != "srt" || len(srtCue.FindAllString(srt["subtitles"].(string), -1)) < 5 {
			t.Errorf("srt: %v", srt)
		}
		if vtt["format"] != "vtt" || !strings.HasPrefix(vtt["subtitles"].(string), "WEBVTT") || len(vttCue.FindAllString(vtt["subtitles"].(string), -1)) < 5 {
			t.Errorf("vtt: %v", vtt)
		}
	})
	t.Run("sentiment_analysis", func(t *testing.T) {
		env := envelopeOf(t, "sentiment_analysis", out["sentiment_analysis"])
		var list []SentimentResult
		if err := json.Unmarshal([]byte(env["results"].(string)), &list); err != nil {
			t.Fatalf("results is not the JSON list: %v", err)
		}
		if len(list) != len(utts) {
			t.Fatalf("%d results for %d utterances", len(list), len(utts))
		}
		for _, s := range list {
			if !slices.Contains([]string{"positive", "negative", "neutral", "mixed"}, s.Sentiment) || s.Emotion == "" || s.End <= s.Start || s.Text == "" {
				t.Errorf("result %+v", s)
			}
		}
	})
	t.Run("summarization", func(t *testing.T) {
		env := envelopeOf(t, "summarization", out["summarization"])
		s, _ := env["results"].(string)
		if env["success"] != true || s == "" {
			t.Fatalf("summary %v", env)
		}
		for _, l := range strings.Split(s, "\n") {
			if !strings.HasPrefix(l, "- ") {
				t.Errorf("bullet_points line %q", l)
			}
		}
	})
	for _, name := range []string{"translation", "audio_to_llm"} {
		t.Run(name+" without backend", func(t *testing.T) {
			env := envelopeOf(t, name, out[name])
			if code, exc, _ := errorStatus(env); code != 501 || exc != "NotConfigured" || env["success"] != false {
				t.Errorf("%s: %d %s", name, code, exc)
			}
		})
	}
	if _, ok := out["chapterization"]; ok {
		t.Errorf("pre-recorded result has chapterization (SPEC 2.4 has no such option)")
	}
}

func abs(f float64) float64 { return max(f, -f) }

// TestDiarizationByChannel: a recording whose channels differ gets the
// channel as the speaker.
func TestDiarizationByChannel(t *testing.T) {
	golden := addonstest.Load(t, "stereo-two-speaker-librispeech.wav")
	channels := recognizertest.ReadWAV16(t, golden.Clip.Path)
	m := mixture{utts: golden.Utterances, duration: golden.Clip.Duration}
	_, out := runAddons(t, builtinAddons(), m, true, channels, &params.PreRecorded{Diarization: true})
	envelopeOf(t, "diarization", out["diarization"])
	seen := map[float64]bool{}
	for _, u := range out["transcription"].(map[string]any)["utterances"].([]any) {
		u := u.(map[string]any)
		if u["speaker"] != u["channel"] {
			t.Errorf("speaker %v on channel %v", u["speaker"], u["channel"])
		}
		seen[u["channel"].(float64)] = true
	}
	if len(seen) != 2 {
		t.Errorf("channels %v", seen)
	}

	// Speaker counts cannot change one speaker per channel: the result
	// says they were not used.
	three := 3
	r, _ := runAddons(t, builtinAddons(), m, true, channels, &params.PreRecorded{Diarization: true,
		DiarizationConfig: &params.DiarizationConfig{NumberOfSpeakers: &three}})
	psm := r.PostSessionMetadata
	if note, _ := psm["diarization_config"].(string); !strings.Contains(note, "not used") {
		t.Errorf("speaker counts on distinct channels: post_session_metadata %v, want a diarization_config note", psm)
	}
}

// Swapped implementations that fail, to show one add-on's failure never
// reaches the others or the job.
type (
	panicSentiment  struct{}
	failDiarizer    struct{}
	shortPunctuator struct{}
	failSummarizer  struct{}
)

func (panicSentiment) Sentiment([]recognizer.Utterance) []sentiment.Result { panic("lexicon missing") }
func (failDiarizer) Diarize([][]int16, []recognizer.Utterance, bool, diarization.Config) ([]int, error) {
	return nil, diarization.ErrNoAudio
}
func (shortPunctuator) Punctuate(u []recognizer.Utterance) []recognizer.Utterance { return u[:1] }
func (failSummarizer) Summarize(ctx context.Context, _ []recognizer.Utterance, _ string) (string, error) {
	return "", errors.New("summarizer: out of memory")
}

func TestAddonFailureIsolation(t *testing.T) {
	m := buildMixture(t, 1.0, twoVoices[:2])
	a := builtinAddons()
	a.Sentiment, a.Diarization, a.Punctuation, a.Summary = panicSentiment{}, failDiarizer{}, shortPunctuator{}, failSummarizer{}
	p := allBuiltins()
	r, out := runAddons(t, a, m, false, nil, p)
	tests := []struct {
		name string
		code int
	}{
		{"sentiment_analysis", 500},
		{"diarization", 500},
		{"summarization", 500},
		{"named_entity_recognition", 0},
		{"sentences", 0},
	}
	for _, tt := range tests {
		env := envelopeOf(t, tt.name, out[tt.name])
		code, _, msg := errorStatus(env)
		if code != tt.code || (env["success"] == true) != (tt.code == 0) {
			t.Errorf("%s: status %d (%s), want %d", tt.name, code, msg, tt.code)
		}
	}
	if code, _, msg := errorStatus(out["sentiment_analysis"].(map[string]any)); code == 500 && msg != "internal error" {
		t.Errorf("a panic's message leaks: %q", msg)
	}
	if note, _ := r.PostSessionMetadata["punctuation_enhanced"].(string); !strings.Contains(note, "not applied") {
		t.Errorf("punctuation failure not noted: %v", r.PostSessionMetadata)
	}
	tr := out["transcription"].(map[string]any)
	if n := len(tr["utterances"].([]any)); n != len(m.utts) {
		t.Errorf("%d utterances after a failed punctuation, want %d", n, len(m.utts))
	}
	for _, u := range tr["utterances"].([]any) {
		if _, ok := u.(map[string]any)["speaker"]; ok {
			t.Errorf("speaker set although diarization failed")
		}
	}
	if !strings.Contains(tr["full_transcript"].(string), "flour") {
		t.Errorf("spelling lost: %s", tr["full_transcript"])
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
