package pipeline

import (
	"context"
	"encoding/json"
	"errors"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/earshot-dev/earshot/params"
	"github.com/earshot-dev/earshot/recognizer"
	"github.com/earshot-dev/earshot/recognizer/addons/addonstest"
	"github.com/earshot-dev/earshot/recognizer/addons/diarization"
	"github.com/earshot-dev/earshot/recognizer/addons/sentiment"
	"github.com/earshot-dev/earshot/recognizer/recognizertest"
)

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
