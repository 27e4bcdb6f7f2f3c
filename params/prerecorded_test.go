package params

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/earshot-dev/earshot/errcode"
)

// english is what an appliance with only PocketSphinx en-us serves.
var english = Capabilities{Languages: []string{"en"}}

// pr returns a pre-recorded body with a good audio_url and the given fields.
func pr(fields string) string {
	if fields == "" {
		return `{"audio_url":"https://media.example.com/a.wav"}`
	}
	return `{"audio_url":"https://media.example.com/a.wav",` + fields + `}`
}

// repeat returns n comma-separated copies of item, as a JSON array.
func repeat(item string, n int) string {
	return "[" + strings.TrimSuffix(strings.Repeat(item+",", n), ",") + "]"
}

// problemsOf returns the problems of a *ValidationError, failing otherwise.
func problemsOf(t *testing.T, err error) []string {
	t.Helper()
	var ve *ValidationError
	if !errors.As(err, &ve) {
		t.Fatalf("error = %v, want *ValidationError", err)
	}
	if errors.Is(err, ErrCannotServe) {
		t.Fatalf("a 400 must not also be a 422: %v", err)
	}
	return ve.Problems
}

// fieldJSON marshals v and returns the compact JSON of one top-level field
// ("" when absent).
func fieldJSON(t *testing.T, v any, path string) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatalf("marshal: %v", err)
	}
	var cur json.RawMessage = b
	for name := range strings.SplitSeq(path, ".") {
		var m map[string]json.RawMessage
		if err := json.Unmarshal(cur, &m); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		var ok bool
		if cur, ok = m[name]; !ok {
			return ""
		}
	}
	var buf bytes.Buffer
	if err := json.Compact(&buf, cur); err != nil {
		t.Fatal(err)
	}
	return buf.String()
}

func TestDecodePreRecordedDefaults(t *testing.T) {
	r, err := DecodePreRecorded([]byte(pr("")), english)
	if err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"audio_url":"https://media.example.com/a.wav","model":"model-1","callback":false,"subtitles":false,` +
		`"diarization":false,"translation":false,"summarization":false,"named_entity_recognition":false,` +
		`"custom_spelling":false,"sentiment_analysis":false,"audio_to_llm":false,"pii_redaction":false,` +
		`"sentences":false,"punctuation_enhanced":false,"language_config":{"languages":[],"code_switching":false}}`
	if string(b) != want {
		t.Errorf("request_params =\n%s\nwant\n%s", b, want)
	}
	if got := r.Language(); got != "" {
		t.Errorf("Language() = %q, want detection", got)
	}
	if _, _, ok := r.CallbackTarget(); ok {
		t.Error("CallbackTarget ok without any callback")
	}
}

func TestDecodePreRecordedGood(t *testing.T) {
	tests := []struct {
		name   string
		body   string
		caps   Capabilities
		field  string // dotted path in the marshalled request_params
		want   string // its compact JSON
		checks func(t *testing.T, r *PreRecorded)
	}{
		{name: "model-3 with one of its languages", body: pr(`"model":"model-3","language_config":{"languages":["fr"]}`),
			caps: Capabilities{Languages: []string{"en", "fr"}}, field: "model", want: `"model-3"`},
		{name: "explicit model-1", body: pr(`"model":"model-1"`), field: "model", want: `"model-1"`},
		{name: "null is absent", body: pr(`"model":null,"callback_url":null,"subtitles_config":null,"custom_metadata":null,"language_config":null`),
			field: "model", want: `"model-1"`},
		{name: "vocabulary array form", body: pr(`"custom_vocabulary":["Earshot",{"value":"SIP","intensity":0.5,"pronunciations":["sip"],"language":"en"}]`),
			field: "custom_vocabulary_config",
			want:  `{"vocabulary":[{"value":"Earshot"},{"value":"SIP","intensity":0.5,"pronunciations":["sip"],"language":"en"}]}`,
			checks: func(t *testing.T, r *PreRecorded) {
				if r.CustomVocabulary == nil || !*r.CustomVocabulary {
					t.Error("custom_vocabulary not true for the array form")
				}
			}},
		{name: "vocabulary config", body: pr(`"custom_vocabulary":true,"custom_vocabulary_config":{"vocabulary":["a"],"default_intensity":0.3}`),
			field: "custom_vocabulary_config", want: `{"vocabulary":[{"value":"a"}],"default_intensity":0.3}`},
		{name: "vocabulary false without config", body: pr(`"custom_vocabulary":false`), field: "custom_vocabulary", want: `false`},
		{name: "callback config put", body: pr(`"callback":true,"callback_config":{"url":"http://crm.local/hook","method":"put"}`),
			field: "callback_config", want: `{"url":"http://crm.local/hook","method":"PUT"}`,
			checks: func(t *testing.T, r *PreRecorded) {
				u, m, ok := r.CallbackTarget()
				if u != "http://crm.local/hook" || m != "PUT" || !ok {
					t.Errorf("CallbackTarget = %q %q %v", u, m, ok)
				}
			}},
		{name: "callback config default method", body: pr(`"callback":true,"callback_config":{"url":"https://crm.local/hook"}`),
			field: "callback_config", want: `{"url":"https://crm.local/hook","method":"POST"}`},
		{name: "deprecated callback_url", body: pr(`"callback_url":"https://old.local/cb"`), field: "callback_url", want: `"https://old.local/cb"`,
			checks: func(t *testing.T, r *PreRecorded) {
				u, m, ok := r.CallbackTarget()
				if u != "https://old.local/cb" || m != "POST" || !ok {
					t.Errorf("CallbackTarget = %q %q %v", u, m, ok)
				}
			}},
		{name: "callback false ignores config", body: pr(`"callback":false,"callback_config":{"url":"https://a.local/x"}`),
			checks: func(t *testing.T, r *PreRecorded) {
				if _, _, ok := r.CallbackTarget(); ok {
					t.Error("CallbackTarget ok with callback false")
				}
			}},
		{name: "subtitles default config", body: pr(`"subtitles":true`), field: "subtitles_config", want: `{"formats":["srt"],"style":"default"}`},
		{name: "subtitles full config", body: pr(`"subtitles":true,"subtitles_config":{"formats":["vtt","srt","vtt"],"minimum_duration":1,` +
			`"maximum_duration":7,"maximum_characters_per_row":42,"maximum_rows_per_caption":2,"style":"compliance"}`),
			field: "subtitles_config",
			want:  `{"formats":["vtt","srt"],"minimum_duration":1,"maximum_duration":7,"maximum_characters_per_row":42,"maximum_rows_per_caption":2,"style":"compliance"}`},
		{name: "subtitles empty formats", body: pr(`"subtitles_config":{"formats":[]}`), field: "subtitles_config", want: `{"formats":["srt"],"style":"default"}`},
		{name: "diarization config", body: pr(`"diarization":true,"diarization_config":{"number_of_speakers":2,"min_speakers":1,"max_speakers":3.0}`),
			field: "diarization_config", want: `{"number_of_speakers":2,"min_speakers":1,"max_speakers":3}`},
		{name: "translation defaults", body: pr(`"translation":true,"translation_config":{"target_languages":["FR","wo","fr"]}`),
			field: "translation_config",
			want:  `{"target_languages":["fr","wo"],"model":"base","match_original_utterances":true,"lipsync":true,"context_adaptation":true,"informal":false}`},
		{name: "translation full", body: pr(`"translation":true,"translation_config":{"target_languages":["de"],"model":"base",` +
			`"match_original_utterances":false,"lipsync":true,"context_adaptation":false,"context":"a call","informal":true}`),
			field: "translation_config",
			want:  `{"target_languages":["de"],"model":"base","match_original_utterances":false,"lipsync":true,"context_adaptation":false,"context":"a call","informal":true}`},
		{name: "summarization default config", body: pr(`"summarization":true`), field: "summarization_config", want: `{"type":"general"}`},
		{name: "summarization type", body: pr(`"summarization":true,"summarization_config":{"type":"bullet_points"}`), field: "summarization_config", want: `{"type":"bullet_points"}`},
		{name: "spelling", body: pr(`"custom_spelling":true,"custom_spelling_config":{"spelling_dictionary":{"SQL":["sequel","S Q L"]}}`),
			field: "custom_spelling_config", want: `{"spelling_dictionary":{"SQL":["sequel","S Q L"]}}`},
		{name: "audio to llm", body: pr(`"audio_to_llm":true,"audio_to_llm_config":{"prompts":["List the action items"],"model":"local"}`),
			field: "audio_to_llm_config", want: `{"prompts":["List the action items"],"model":"local"}`},
		{name: "pii default config", body: pr(`"pii_redaction":true`), field: "pii_redaction_config", want: `{"entity_types":["GDPR"],"processed_text_type":"MARKER","audio":"silence"}`},
		{name: "pii types kept", body: pr(`"pii_redaction":true,"pii_redaction_config":{"entity_types":["name","EMAIL_ADDRESS","NOT_A_TYPE","NAME"],"processed_text_type":"MASK","audio":"tone"}`),
			field: "pii_redaction_config", want: `{"entity_types":["NAME","EMAIL_ADDRESS","NOT_A_TYPE"],"processed_text_type":"MASK","audio":"tone"}`},
		{name: "metadata kept exactly", body: pr(`"custom_metadata":{"ticket":1.50,"n":12345678901234567890,"who":{"agent":["ann",true,null]}}`),
			field: "custom_metadata", want: `{"n":12345678901234567890,"ticket":1.50,"who":{"agent":["ann",true,null]}}`},
		{name: "empty metadata is none", body: pr(`"custom_metadata":{}`), field: "custom_metadata", want: ``},
		{name: "language normalised", body: pr(`"language_config":{"languages":["EN","en"],"code_switching":true}`),
			field: "language_config", want: `{"languages":["en"],"code_switching":true}`,
			checks: func(t *testing.T, r *PreRecorded) {
				if r.Language() != "en" {
					t.Errorf("Language() = %q", r.Language())
				}
			}},
		{name: "detect among several", body: pr(`"language_config":{"languages":["fr","de"]}`), caps: Capabilities{Languages: []string{"fr", "de"}},
			checks: func(t *testing.T, r *PreRecorded) {
				if r.Language() != "" {
					t.Errorf("Language() = %q, want detection", r.Language())
				}
			}},
		{name: "nil languages serve all", body: pr(`"language_config":{"languages":["ja"]}`), caps: Capabilities{LocalFile: func(string) bool { return true }},
			field: "language_config.languages", want: `["ja"]`},
		{name: "service-hosted file", body: `{"audio_url":"http://10.0.0.5:8080/v2/files/abc-123"}`,
			caps: Capabilities{Languages: []string{"en"}, LocalFile: func(id string) bool { return id == "abc-123" }}, field: "audio_url", want: `"http://10.0.0.5:8080/v2/files/abc-123"`},
		{name: "booleans", body: pr(`"named_entity_recognition":true,"sentiment_analysis":true,"sentences":true,"punctuation_enhanced":true,"diarization":true`),
			checks: func(t *testing.T, r *PreRecorded) {
				if !r.NamedEntityRecognition || !r.SentimentAnalysis || !r.Sentences || !r.PunctuationEnhanced || !r.Diarization {
					t.Errorf("booleans not set: %+v", r)
				}
			}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			caps := tc.caps
			if caps.Languages == nil && caps.LocalFile == nil {
				caps = english
			}
			r, err := DecodePreRecorded([]byte(tc.body), caps)
			if err != nil {
				t.Fatalf("DecodePreRecorded: %v", err)
			}
			if tc.field != "" || tc.want != "" {
				if got := fieldJSON(t, r, tc.field); got != tc.want {
					t.Errorf("%s = %s, want %s", tc.field, got, tc.want)
				}
			}
			if tc.checks != nil {
				tc.checks(t, r)
			}
			roundTrip(t, r, caps)
		})
	}
}

// roundTrip checks that r marshalled as request_params decodes to r again.
func roundTrip(t *testing.T, r *PreRecorded, caps Capabilities) {
	t.Helper()
	b, err := json.Marshal(r)
	if err != nil {
		t.Fatalf("marshal: %v", err)
	}
	again, err := DecodePreRecorded(b, caps)
	if err != nil {
		t.Fatalf("request_params %s does not decode: %v", b, err)
	}
	b2, _ := json.Marshal(again)
	if !bytes.Equal(b, b2) {
		t.Fatalf("round trip changed the value:\n%s\n%s", b, b2)
	}
}

func TestDecodePreRecordedProblems(t *testing.T) {
	bigMeta := `{"k":"` + strings.Repeat("x", MaxMetadataBytes) + `"}`
	manyKeys := "{" + func() string {
		var s []string
		for i := range MaxMetadataKeys + 1 {
			s = append(s, fmt.Sprintf(`"k%d":1`, i))
		}
		return strings.Join(s, ",")
	}() + "}"
	tests := []struct {
		name string
		body string
		want []string
	}{
		{"not JSON", `{"audio_url":`, []string{"body is not valid JSON"}},
		{"trailing garbage", pr("") + "x", []string{"body is not valid JSON"}},
		{"array body", `[]`, []string{"body must be an object"}},
		{"null body", `null`, []string{"body must be an object"}},
		{"empty body is an empty object", "  ", []string{"audio_url is required"}},
		{"missing audio_url", `{}`, []string{"audio_url is required"}},
		{"null audio_url", `{"audio_url":null}`, []string{"audio_url is required"}},
		{"empty audio_url", `{"audio_url":""}`, []string{"audio_url is required"}},
		{"audio_url wrong type", `{"audio_url":5}`, []string{"audio_url must be a string"}},
		{"audio_url not a URL", `{"audio_url":"a.wav"}`, []string{"audio_url must be an absolute URL"}},
		{"audio_url without host", `{"audio_url":"https:///a.wav"}`, []string{"audio_url must be an absolute URL"}},
		{"audio_url unparsable", `{"audio_url":"http://[::1"}`, []string{"audio_url must be an absolute URL"}},
		{"model", pr(`"model":"model-2"`), []string{"model must be one of model-1, model-3"}},
		{"model wrong type", pr(`"model":3`), []string{"model must be a string"}},
		{"unknown fields sorted", pr(`"zeta":1,"Audio_URL":"x","language":"en"`),
			[]string{"Audio_URL is not a known field", "language is not a known field", "zeta is not a known field"}},
		{"odd unknown key quoted", pr(`"a b":1`), []string{`"a b" is not a known field`}},
		{"custom_vocabulary wrong type", pr(`"custom_vocabulary":"yes"`), []string{"custom_vocabulary must be a boolean or an array"}},
		{"custom_vocabulary empty array", pr(`"custom_vocabulary":[]`), []string{"custom_vocabulary must have at least 1 item"}},
		{"custom_vocabulary true without config", pr(`"custom_vocabulary":true`), []string{"custom_vocabulary_config is required when custom_vocabulary is true"}},
		{"custom_vocabulary array and config", pr(`"custom_vocabulary":["a"],"custom_vocabulary_config":{"vocabulary":["b"]}`),
			[]string{"custom_vocabulary must be a boolean when custom_vocabulary_config is given"}},
		{"custom_vocabulary array items", pr(`"custom_vocabulary":["ok",5,{"value":""},"  "]`),
			[]string{"custom_vocabulary[1] must be a string or an object", "custom_vocabulary[2].value must not be empty", "custom_vocabulary[3] must not be empty"}},
		{"vocabulary required", pr(`"custom_vocabulary_config":{}`), []string{"custom_vocabulary_config.vocabulary is required"}},
		{"vocabulary wrong type", pr(`"custom_vocabulary_config":{"vocabulary":"a"}`), []string{"custom_vocabulary_config.vocabulary must be an array"}},
		{"vocabulary too long", pr(`"custom_vocabulary_config":{"vocabulary":` + repeat(`"w"`, MaxVocabularyItems+1) + `}`),
			[]string{"custom_vocabulary_config.vocabulary must have at most 1000 items"}},
		{"vocabulary item problems", pr(`"custom_vocabulary_config":{"vocabulary":["a","b",{"value":"c","intensity":1.5}],"default_intensity":-0.1}`),
			[]string{"custom_vocabulary_config.vocabulary[2].intensity must be from 0 to 1", "custom_vocabulary_config.default_intensity must be from 0 to 1"}},
		{"vocabulary item fields", pr(`"custom_vocabulary_config":{"vocabulary":[{"weight":2,"language":"xx","pronunciations":"p","intensity":"1"}]}`),
			[]string{"custom_vocabulary_config.vocabulary[0].value is required",
				"custom_vocabulary_config.vocabulary[0].intensity must be a number",
				"custom_vocabulary_config.vocabulary[0].pronunciations must be an array",
				`custom_vocabulary_config.vocabulary[0].language must be a known language code, not "xx"`,
				"custom_vocabulary_config.vocabulary[0].weight is not a known field"}},
		{"vocabulary config unknown", pr(`"custom_vocabulary_config":{"vocabulary":["a"],"boost":1}`), []string{"custom_vocabulary_config.boost is not a known field"}},
		{"callback_url scheme", pr(`"callback_url":"ftp://x.local/y"`), []string{"callback_url must be an http or https URL"}},
		{"callback_url type", pr(`"callback_url":true`), []string{"callback_url must be a string"}},
		{"callback wrong type", pr(`"callback":"true"`), []string{"callback must be a boolean"}},
		{"callback without config", pr(`"callback":true`), []string{"callback_config.url is required when callback is true"}},
		{"callback with empty config", pr(`"callback":true,"callback_config":{}`), []string{"callback_config.url is required when callback is true"}},
		{"callback config not object", pr(`"callback":true,"callback_config":"http://x"`), []string{"callback_config must be an object"}},
		{"callback config fields", pr(`"callback":true,"callback_config":{"url":"crm/hook","method":"GET","retries":3}`),
			[]string{"callback_config.url must be an absolute URL", "callback_config.method must be one of POST, PUT", "callback_config.retries is not a known field"}},
		{"subtitles wrong type", pr(`"subtitles":1`), []string{"subtitles must be a boolean"}},
		{"subtitles formats", pr(`"subtitles_config":{"formats":["srt","pdf"]}`), []string{"subtitles_config.formats[1] must be one of srt, vtt"}},
		{"subtitles durations", pr(`"subtitles_config":{"minimum_duration":0,"maximum_duration":31}`),
			[]string{"subtitles_config.minimum_duration must be more than 0 and at most 30", "subtitles_config.maximum_duration must be more than 0 and at most 30"}},
		{"subtitles min over max", pr(`"subtitles_config":{"minimum_duration":5,"maximum_duration":2}`),
			[]string{"subtitles_config.minimum_duration must not be more than maximum_duration"}},
		{"subtitles rows and chars", pr(`"subtitles_config":{"maximum_characters_per_row":0,"maximum_rows_per_caption":2.5,"style":"fancy","font":"x"}`),
			[]string{"subtitles_config.maximum_characters_per_row must be from 1 to 200", "subtitles_config.maximum_rows_per_caption must be an integer",
				"subtitles_config.style must be one of default, compliance", "subtitles_config.font is not a known field"}},
		{"subtitles rows range", pr(`"subtitles_config":{"maximum_rows_per_caption":6}`), []string{"subtitles_config.maximum_rows_per_caption must be from 1 to 5"}},
		{"diarization min over max", pr(`"diarization_config":{"min_speakers":3,"max_speakers":2}`),
			[]string{"diarization_config.min_speakers must not be more than max_speakers"}},
		{"diarization fields", pr(`"diarization_config":{"number_of_speakers":"2","min_speakers":0,"speakers":2}`),
			[]string{"diarization_config.number_of_speakers must be an integer", "diarization_config.min_speakers must be from 1 to 100", "diarization_config.speakers is not a known field"}},
		{"diarization number outside bounds", pr(`"diarization_config":{"number_of_speakers":5,"max_speakers":3}`),
			[]string{"diarization_config.number_of_speakers must be from min_speakers to max_speakers"}},
		{"translation without config", pr(`"translation":true`), []string{"translation_config is required when translation is true"}},
		{"translation targets required", pr(`"translation":true,"translation_config":{}`), []string{"translation_config.target_languages is required"}},
		{"translation targets empty", pr(`"translation_config":{"target_languages":[]}`), []string{"translation_config.target_languages must have at least 1 item"}},
		{"translation targets", pr(`"translation_config":{"target_languages":["fr","xx",7]}`),
			[]string{`translation_config.target_languages[1] must be a known language code, not "xx"`, "translation_config.target_languages[2] must be a string"}},
		{"translation too many targets", pr(`"translation_config":{"target_languages":` + repeat(`"fr"`, MaxTargetLanguages+1) + `}`),
			[]string{"translation_config.target_languages must have at most 20 items"}},
		{"translation fields", pr(`"translation_config":{"target_languages":["fr"],"model":"turbo","lipsync":"no","context":7,"formal":true}`),
			[]string{"translation_config.model must be one of base, enhanced", "translation_config.lipsync must be a boolean",
				"translation_config.context must be a string", "translation_config.formal is not a known field"}},
		{"summarization type", pr(`"summarization":true,"summarization_config":{"type":"long"}`),
			[]string{"summarization_config.type must be one of general, bullet_points, concise"}},
		{"summarization config type", pr(`"summarization_config":[]`), []string{"summarization_config must be an object"}},
		{"spelling without config", pr(`"custom_spelling":true`), []string{"custom_spelling_config is required when custom_spelling is true"}},
		{"spelling dictionary required", pr(`"custom_spelling_config":{}`), []string{"custom_spelling_config.spelling_dictionary is required"}},
		{"spelling dictionary values", pr(`"custom_spelling_config":{"spelling_dictionary":{"SQL":"sequel","Go":[1],"":["x"]}}`),
			[]string{`custom_spelling_config.spelling_dictionary."" must not be empty`, "custom_spelling_config.spelling_dictionary.Go[0] must be a string",
				"custom_spelling_config.spelling_dictionary.SQL must be an array"}},
		{"audio_to_llm without config", pr(`"audio_to_llm":true`), []string{"audio_to_llm_config is required when audio_to_llm is true"}},
		{"audio_to_llm no prompts", pr(`"audio_to_llm":true,"audio_to_llm_config":{"prompts":[]}`),
			[]string{"audio_to_llm_config.prompts must have at least 1 item when audio_to_llm is true"}},
		{"audio_to_llm prompts", pr(`"audio_to_llm":true,"audio_to_llm_config":{"prompts":["",3]}`),
			[]string{"audio_to_llm_config.prompts[0] must not be empty", "audio_to_llm_config.prompts[1] must be a string"}},
		{"audio_to_llm too many prompts", pr(`"audio_to_llm_config":{"prompts":` + repeat(`"p"`, MaxPrompts+1) + `}`),
			[]string{"audio_to_llm_config.prompts must have at most 10 items"}},
		{"pii fields", pr(`"pii_redaction":true,"pii_redaction_config":{"entity_types":"NAME","processed_text_type":"BLUR","audio":"bleep"}`),
			[]string{"pii_redaction_config.entity_types must be an array", "pii_redaction_config.processed_text_type must be one of MARKER, MASK",
				"pii_redaction_config.audio must be one of silence, tone, off"}},
		{"metadata wrong type", pr(`"custom_metadata":["a"]`), []string{"custom_metadata must be an object"}},
		{"metadata too many keys", pr(`"custom_metadata":` + manyKeys), []string{"custom_metadata must have at most 64 keys"}},
		{"metadata too big", pr(`"custom_metadata":` + bigMeta), []string{"custom_metadata must be at most 16384 bytes"}},
		{"languages", pr(`"language_config":{"languages":["en","xx"]}`), []string{`language_config.languages[1] must be a known language code, not "xx"`}},
		{"languages wrong type", pr(`"language_config":{"languages":"en","code_switching":1,"detect":true}`),
			[]string{"language_config.languages must be an array", "language_config.code_switching must be a boolean", "language_config.detect is not a known field"}},
		{"language_config wrong type", pr(`"language_config":"en"`), []string{"language_config must be an object"}},
		{"booleans wrong type", pr(`"sentences":"yes","punctuation_enhanced":0,"named_entity_recognition":[],"sentiment_analysis":{},"diarization":"1","pii_redaction":"x"`),
			[]string{"diarization must be a boolean", "named_entity_recognition must be a boolean", "sentiment_analysis must be a boolean",
				"pii_redaction must be a boolean", "sentences must be a boolean", "punctuation_enhanced must be a boolean"}},
		{"several at once", `{"audio_url":"x","model":"m","diarization_config":{"min_speakers":0,"x":1},"language_config":{"languages":["zz"]},"extra":1}`,
			[]string{"audio_url must be an absolute URL", "model must be one of model-1, model-3", "diarization_config.min_speakers must be from 1 to 100",
				"diarization_config.x is not a known field", `language_config.languages[0] must be a known language code, not "zz"`, "extra is not a known field"}},
		{"400 before 422", `{"audio_url":"ftp://x/a.wav","model":"model-3","sentences":1}`, []string{"sentences must be a boolean"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r, err := DecodePreRecorded([]byte(tc.body), english)
			if r != nil {
				t.Errorf("got a value with an error")
			}
			if got := problemsOf(t, err); !slices.Equal(got, tc.want) {
				t.Errorf("problems =\n%q\nwant\n%q", got, tc.want)
			}
		})
	}
}

func TestProblemsAreCapped(t *testing.T) {
	var fields []string
	for i := range 100 {
		fields = append(fields, fmt.Sprintf(`"f%03d":1`, i))
	}
	_, err := DecodePreRecorded([]byte(pr(strings.Join(fields, ","))), english)
	got := problemsOf(t, err)
	if len(got) != maxProblems+1 || got[0] != "f000 is not a known field" || got[maxProblems] != "body has 36 more problems" {
		t.Errorf("got %d problems, first %q, last %q", len(got), got[0], got[len(got)-1])
	}
}

func TestDecodePreRecordedCannotServe(t *testing.T) {
	noSuchFile := Capabilities{Languages: []string{"en"}, LocalFile: func(string) bool { return false }}
	tests := []struct {
		name string
		body string
		caps Capabilities
		want string
	}{
		{"ftp audio_url", `{"audio_url":"ftp://files.local/a.wav"}`, english,
			`audio_url scheme "ftp" is not supported (use http, https or a file from /v2/upload)`},
		{"file audio_url", `{"audio_url":"file:///tmp/a.wav"}`, english,
			`audio_url scheme "file" is not supported (use http, https or a file from /v2/upload)`},
		{"unknown uploaded file", `{"audio_url":"https://box.local/v2/files/f00d"}`, noSuchFile,
			`audio_url names no uploaded file (id "f00d")`},
		{"model-3 without language", pr(`"model":"model-3"`), Capabilities{},
			"model-3 needs language_config.languages to hold exactly one of en, fr, de, es, it"},
		{"model-3 with two languages", pr(`"model":"model-3","language_config":{"languages":["en","fr"]}`), Capabilities{},
			"model-3 needs language_config.languages to hold exactly one of en, fr, de, es, it"},
		{"model-3 with another language", pr(`"model":"model-3","language_config":{"languages":["ja"]}`), Capabilities{},
			"model-3 needs language_config.languages to hold exactly one of en, fr, de, es, it"},
		{"language not installed", pr(`"language_config":{"languages":["fr"]}`), english,
			"language_config.languages fr is not served by this appliance (installed: en)"},
		{"languages not installed", pr(`"language_config":{"languages":["fr","en","de"]}`), english,
			"language_config.languages fr, de are not served by this appliance (installed: en)"},
		{"no language installed", pr(`"language_config":{"languages":["en"]}`), Capabilities{Languages: []string{}},
			"language_config.languages en is not served by this appliance (installed: none)"},
		{"subtitle rows under 10 characters", pr(`"subtitles":true,"subtitles_config":{"maximum_characters_per_row":9}`), english,
			"subtitles_config.maximum_characters_per_row 9 is below 10, the narrowest row this appliance lays out"},
		{"captions under half a second", pr(`"subtitles":true,"subtitles_config":{"maximum_duration":0.4}`), english,
			"subtitles_config.maximum_duration 0.4 is below 0.5 s, the shortest caption this appliance builds"},
		{"enhanced translation", pr(`"translation":true,"translation_config":{"target_languages":["fr"],"model":"enhanced"}`), english,
			`translation_config.model "enhanced": this appliance translates with one model (its configured backend), served as "base"`},
		{"translation without lipsync", pr(`"translation":true,"translation_config":{"target_languages":["fr"],"lipsync":false}`), english,
			"translation_config.lipsync false: translated utterances always keep the original utterances' timing on this appliance"},
		{"model-3 language not installed", pr(`"model":"model-3","language_config":{"languages":["de"]}`), english,
			"language_config.languages de is not served by this appliance (installed: en)"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r, err := DecodePreRecorded([]byte(tc.body), tc.caps)
			if r != nil || !errors.Is(err, ErrCannotServe) {
				t.Fatalf("got %v, %v; want ErrCannotServe", r, err)
			}
			var ve *ValidationError
			if errors.As(err, &ve) {
				t.Fatalf("422 is also a 400: %v", err)
			}
			if errcode.Message(err) != tc.want { // the client message
				t.Errorf("error =\n%s\nwant\n%s", err, tc.want)
			}
		})
	}
}

func TestFileID(t *testing.T) {
	tests := []struct {
		url, id string
		ok      bool
	}{
		{"http://x/v2/files/abc", "abc", true},
		{"https://box.local:8443/v2/files/0b7c9c1e-1?x=1", "0b7c9c1e-1", true},
		{"https://x/v2/files/", "", false},
		{"https://x/v2/files/a/b", "", false},
		{"https://x/v2/file/abc", "", false},
		{"ftp://x/v2/files/abc", "", false},
		{"/v2/files/abc", "", false},
	}
	for _, tc := range tests {
		t.Run(tc.url, func(t *testing.T) {
			id, ok := FileID(tc.url)
			if id != tc.id || ok != tc.ok {
				t.Errorf("FileID = %q, %v; want %q, %v", id, ok, tc.id, tc.ok)
			}
		})
	}
}

func TestAdaptationContext(t *testing.T) {
	for _, tc := range []struct {
		body, want string
	}{
		{`{"target_languages":["fr"],"context":"a call"}`, "a call"},
		{`{"target_languages":["fr"],"context":"a call","context_adaptation":false}`, ""},
	} {
		r, err := DecodePreRecorded([]byte(pr(`"translation":true,"translation_config":`+tc.body)), english)
		if err != nil {
			t.Fatal(err)
		}
		if got := r.TranslationConfig.AdaptationContext(); got != tc.want {
			t.Errorf("%s: context %q, want %q", tc.body, got, tc.want)
		}
	}
}
