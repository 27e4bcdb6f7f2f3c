package params

import (
	"encoding/json"
	"errors"
	"reflect"
	"testing"
)

// fuzzCaps is a fixed appliance: English only, and uploaded files whose id
// starts with "f" exist.
var fuzzCaps = Capabilities{
	Languages: []string{"en"},
	LocalFile: func(id string) bool { return id != "" && id[0] == 'f' },
}

// checkOutcome fails unless err is nil with a value, or one of the two error
// kinds without one.
func checkOutcome(t *testing.T, isNil bool, err error) {
	t.Helper()
	var ve *ValidationError
	switch {
	case err == nil:
		if isNil {
			t.Fatal("nil value and nil error")
		}
	case errors.As(err, &ve):
		if !isNil || len(ve.Problems) == 0 || errors.Is(err, ErrCannotServe) {
			t.Fatalf("bad 400: value nil %v, %v", isNil, err)
		}
	case errors.Is(err, ErrCannotServe):
		if !isNil {
			t.Fatalf("value with a 422: %v", err)
		}
	default:
		t.Fatalf("error of neither kind: %v", err)
	}
}

func FuzzDecodePreRecorded(f *testing.F) {
	for _, s := range []string{
		``, `{}`, `null`, `[]`, `{"audio_url":5}`, pr(""),
		pr(`"custom_vocabulary":["a",{"value":"b","intensity":0.5,"pronunciations":["bee"],"language":"EN"}]`),
		pr(`"callback":true,"callback_config":{"url":"http://h/x","method":"put"}`),
		pr(`"subtitles":true,"subtitles_config":{"formats":["vtt"],"minimum_duration":1,"maximum_duration":2,"maximum_characters_per_row":42,"maximum_rows_per_caption":2,"style":"compliance"}`),
		pr(`"diarization_config":{"number_of_speakers":2,"min_speakers":1,"max_speakers":3}`),
		pr(`"translation":true,"translation_config":{"target_languages":["fr","wo"],"context":"c"}`),
		pr(`"summarization":true,"custom_spelling":true,"custom_spelling_config":{"spelling_dictionary":{"a":["b"]}}`),
		pr(`"audio_to_llm":true,"audio_to_llm_config":{"prompts":["p"]},"pii_redaction":true,"pii_redaction_config":{"entity_types":["name"]}`),
		pr(`"custom_metadata":{"a":1.50,"b":[null,{"c":"\u003c"}]},"language_config":{"languages":["en"]}`),
		`{"audio_url":"https://h/v2/files/f1","model":"model-3","language_config":{"languages":["en"]}}`,
		`{"audio_url":"ftp://h/a"}`, pr(`"x":{"y":1}`),
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		r, err := DecodePreRecorded(body, fuzzCaps)
		checkOutcome(t, r == nil, err)
		if err != nil {
			return
		}
		b, err := json.Marshal(r)
		if err != nil {
			t.Fatalf("marshal: %v", err)
		}
		again, err := DecodePreRecorded(b, fuzzCaps)
		if err != nil {
			t.Fatalf("request_params %s: %v", b, err)
		}
		if !reflect.DeepEqual(r, again) {
			t.Fatalf("round trip changed the value:\n%#v\n%#v", r, again)
		}
	})
}

func FuzzDecodeLive(f *testing.F) {
	for _, s := range []string{
		``, `{}`, `null`, `"x"`, `{"sample_rate":22050}`,
		`{"encoding":"wav/ulaw","sample_rate":8000,"channels":2,"endpointing":0.3,"maximum_duration_without_endpointing":30}`,
		`{"language_config":{"languages":["en"],"code_switching":true},"pre_processing":{"audio_enhancer":true,"speech_threshold":0.2}}`,
		`{"realtime_processing":{"translation":true,"translation_config":{"target_languages":["de"]},"custom_vocabulary":true,"custom_vocabulary_config":{"vocabulary":["x"]}}}`,
		`{"post_processing":{"summarization":true,"summarization_config":{"type":"concise"}},"messages_config":{"receive_partial_transcripts":true}}`,
		`{"callback":true,"callback_config":{"url":"https://h/cb","receive_errors":true},"custom_metadata":{"k":[1,2]}}`,
		`{"model":"model-3"}`, `{"bit_depth":8.0,"channels":1e0}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		l, err := DecodeLive(body, fuzzCaps)
		checkOutcome(t, l == nil, err)
		if err != nil {
			return
		}
		b, err := json.Marshal(l)
		if err != nil {
			t.Fatalf("marshal: %v", err)
		}
		again, err := DecodeLive(b, fuzzCaps)
		if err != nil {
			t.Fatalf("request_params %s: %v", b, err)
		}
		if !reflect.DeepEqual(l, again) {
			t.Fatalf("round trip changed the value:\n%#v\n%#v", l, again)
		}
	})
}
