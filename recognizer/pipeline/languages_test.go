package pipeline

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/earshot-dev/earshot/params"
	"github.com/earshot-dev/earshot/recognizer"
	"github.com/earshot-dev/earshot/recognizer/addons/llm"
	"github.com/earshot-dev/earshot/transcript"
)

// spoken is an utterance of words one 300 ms apart, in lang.
func spoken(lang string, start float64, text string) recognizer.Utterance {
	u := recognizer.Utterance{Start: start, Text: text, Language: lang, Confidence: 0.9}
	for i, w := range strings.Fields(text) {
		s := start + 0.3*float64(i)
		u.Words = append(u.Words, recognizer.Word{Word: w, Start: s, End: s + 0.25, Confidence: 0.9})
	}
	u.End = u.Words[len(u.Words)-1].End
	return u
}

// identityTranslator answers every utterance as it is, in the target.
type identityTranslator struct{}

func (identityTranslator) Translate(_ context.Context, utts []recognizer.Utterance, target string, _ llm.TranslationOptions) ([]recognizer.Utterance, error) {
	out := make([]recognizer.Utterance, len(utts))
	for i, u := range utts {
		u.Language = target
		out[i] = u
	}
	return out, nil
}

// englishOnly are the add-ons whose built-ins read English only.
var englishOnly = []string{"named_entity_recognition", "pii_redaction", "sentiment_analysis", "sentences", "summarization"}

// TestAddonLanguagesPreRecorded runs the built-ins on a transcript the
// English rules would misread (a French one naming a person, a place and
// a card number) and on the same words said to be English: on French each
// English-only add-on fails 422 UnsupportedLanguage naming fr and
// punctuation is not applied, while those that read any language still
// run; on English every add-on succeeds; on a code-switched transcript
// the add-ons fail naming only the language they do not read.
func TestAddonLanguagesPreRecorded(t *testing.T) {
	texts := []string{
		"bonjour je suis john smith et j'habite à paris",
		"mon numéro de carte est quatre un un un un un un un un un un un un un un un",
		"c'est vraiment terrible et je suis très en colère",
	}
	transcript := func(langs ...string) []recognizer.Utterance {
		var utts []recognizer.Utterance
		for i, text := range texts {
			utts = append(utts, spoken(langs[i%len(langs)], 4*float64(i), text))
		}
		return utts
	}
	p := &params.PreRecorded{
		NamedEntityRecognition: true, PIIRedaction: true, PIIRedactionConfig: &params.PIIRedactionConfig{EntityTypes: []string{"GDPR"}},
		SentimentAnalysis: true, Sentences: true, Summarization: true, PunctuationEnhanced: true,
		CustomSpelling: true, CustomSpellingConfig: &params.SpellingConfig{SpellingDictionary: map[string][]string{"Paris": {}}},
		Subtitles: true, SubtitlesConfig: &params.SubtitlesConfig{Formats: []string{"srt"}},
	}
	run := func(t *testing.T, lang string, utts []recognizer.Utterance) (map[string]any, *Result) {
		t.Helper()
		r := buildResult(&recognizer.BatchResult{Utterances: utts, DistinctChannels: 1, Language: lang}, 12, lang)
		builtinAddons().apply(t.Context(), r, utts, addonJob{p: p, lang: lang, duration: 12})
		b, err := json.Marshal(r)
		if err != nil {
			t.Fatal(err)
		}
		var out map[string]any
		if err := json.Unmarshal(b, &out); err != nil {
			t.Fatal(err)
		}
		return out, r
	}
	for _, tc := range []struct {
		name, lang string
		utts       []recognizer.Utterance
		heard      string // the languages named, "" when every add-on runs
	}{
		{"french", "fr", transcript("fr"), "fr"},
		{"english", "en", transcript("en"), ""},
		{"code-switched", "en", transcript("en", "fr", "de"), "fr, de"},
		{"no language on the utterances", "fr", transcript(""), "fr"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, r := run(t, tc.lang, tc.utts)
			for _, name := range englishOnly {
				env := envelopeOf(t, name, out[name])
				code, exc, msg := errorStatus(env)
				if tc.heard == "" {
					if env["success"] != true {
						t.Errorf("%s on English: %v", name, env)
					}
					continue
				}
				if env["success"] != false || code != 422 || exc != "UnsupportedLanguage" || env["results"] != nil ||
					msg != name+" reads only en on this appliance; the transcript's language "+map[bool]string{true: "are", false: "is"}[strings.Contains(tc.heard, ",")]+" "+tc.heard {
					t.Errorf("%s on %s: %v", name, tc.heard, env)
				}
			}
			psm := r.PostSessionMetadata
			full := r.Transcription.FullTranscript
			if tc.heard != "" {
				if note, _ := psm["punctuation_enhanced"].(string); !strings.HasPrefix(note, "not applied: punctuation_enhanced reads only en") {
					t.Errorf("punctuation_enhanced note %v", psm)
				}
				if !strings.Contains(full, "quatre un un un") || strings.Contains(full, "[") {
					t.Errorf("the transcript was changed by an add-on that cannot read it: %s", full)
				}
			} else if psm["punctuation_enhanced"] != nil || !strings.Contains(full, "Mon numéro") {
				t.Errorf("English: punctuation not applied: %v %s", psm, full)
			}
			// Those that read any language run whatever it is.
			if !strings.Contains(full, "Paris") || len(r.Transcription.Subtitles) != 1 {
				t.Errorf("custom_spelling or subtitles did not run: %s, %d subtitle files", full, len(r.Transcription.Subtitles))
			}
		})
	}
}

// TestAddonLanguagesTranslatedSentences checks the sentences of a
// translation result are split only in a language the splitter reads.
func TestAddonLanguagesTranslatedSentences(t *testing.T) {
	a := builtinAddons()
	a.Translation = identityTranslator{}
	utts := []recognizer.Utterance{spoken("en", 0, "so i went home and then i slept")}
	p := &params.PreRecorded{Translation: true, Sentences: true,
		TranslationConfig: &params.TranslationConfig{TargetLanguages: []string{"en", "fr"}}}
	r := buildResult(&recognizer.BatchResult{Utterances: utts, DistinctChannels: 1, Language: "en"}, 3, "en")
	a.apply(t.Context(), r, utts, addonJob{p: p, lang: "en", duration: 3})
	results, _ := r.Translation.Results.([]transcript.TranslationResult)
	if !r.Translation.Success || len(results) != 2 {
		t.Fatalf("translation %+v", r.Translation)
	}
	if s := results[0].Sentences[0]; !s.Success {
		t.Errorf("sentences of the English translation: %+v", s)
	}
	if s := results[1].Sentences[0]; s.Success || s.Error == nil || s.Error.Exception != "UnsupportedLanguage" || !strings.HasSuffix(s.Error.Message, "is fr") {
		t.Errorf("sentences of the French translation: %+v %+v", s, s.Error)
	}
}

// TestAddonLanguagesLive checks the realtime and post-processing
// envelopes of a live session: each utterance's entities and sentiment,
// the summary and chapters of its finals fail on French and succeed on
// English.
func TestAddonLanguagesLive(t *testing.T) {
	a := builtinAddons()
	for _, lang := range []string{"fr", "en"} {
		utts := []recognizer.Utterance{spoken(lang, 0, "bonjour je suis john smith et c'est vraiment terrible")}
		for name, env := range map[string]*transcript.Envelope{
			"named_entity_recognition": a.EntitiesEnvelope(utts),
			"sentiment_analysis":       a.SentimentEnvelope(utts),
			"summarization":            a.SummaryEnvelope(t.Context(), utts, "general"),
			"chapterization":           a.ChaptersEnvelope(t.Context(), utts),
		} {
			failed := !env.Success && env.Error != nil && env.Error.StatusCode == 422 && strings.HasPrefix(env.Error.Message, name+" reads only en")
			if lang == "fr" && !failed || lang == "en" && !env.Success {
				t.Errorf("%s on %s: %+v %+v", name, lang, env, env.Error)
			}
		}
	}
	var kept LiveKept
	kept.KeepEntities(a.EntitiesEnvelope([]recognizer.Utterance{spoken("en", 0, "john smith")}))
	kept.KeepEntities(a.EntitiesEnvelope([]recognizer.Utterance{spoken("fr", 2, "jean dupont")}))
	var res Result
	kept.Fill(&res, true, false, nil, nil)
	if e := res.NamedEntityRecognition; e.Success || e.Error == nil || e.Error.Exception != "UnsupportedLanguage" {
		t.Errorf("a session with a French utterance: %+v", e)
	}
}

// TestAddonLanguagesDeclared checks what the add-ons declare: the
// built-ins English, summarization the model's (undeclared) with a
// backend, and the capabilities params refuses requests by.
func TestAddonLanguagesDeclared(t *testing.T) {
	for _, name := range append(englishOnly, "punctuation_enhanced", "chapterization") {
		if got := builtinAddons().Reads[name]; len(got) != 1 || got[0] != "en" {
			t.Errorf("%s reads %v, want [en]", name, got)
		}
	}
	for _, name := range []string{"diarization", "custom_spelling", "subtitles", "translation", "audio_to_llm"} {
		if got, ok := builtinAddons().Reads[name]; ok {
			t.Errorf("%s declares %v, want any language", name, got)
		}
	}
	b := backendAddons(t, "http://127.0.0.1:9", nil)
	if _, ok := b.Reads["summarization"]; ok {
		t.Errorf("with a backend, summarization reads %v, want the model's languages", b.Reads["summarization"])
	}
	if _, ok := b.Reads["chapterization"]; !ok {
		t.Error("with a backend, chapterization (always extractive) lost its languages")
	}
	tr := &Transcriber{Engines: &Engines{}, Addons: b}
	if caps := tr.Capabilities(); len(caps.AddonLanguages["named_entity_recognition"]) != 1 {
		t.Errorf("capabilities %+v", caps)
	}
}
