package params

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/earshot-dev/earshot/errcode"
)

func TestDecodeLiveDefaults(t *testing.T) {
	for _, body := range []string{``, `{}`, ` { } `} {
		l, err := DecodeLive([]byte(body), english)
		if err != nil {
			t.Fatalf("%q: %v", body, err)
		}
		b, err := json.Marshal(l)
		if err != nil {
			t.Fatal(err)
		}
		// SPEC 2.3 defaults; messages_config is section 6's WebSocket column,
		// callback_config its callback column.
		want := `{"encoding":"wav/pcm","bit_depth":16,"sample_rate":16000,"channels":1,"model":"model-1",` +
			`"endpointing":0.05,"maximum_duration_without_endpointing":5,` +
			`"language_config":{"languages":[],"code_switching":false},` +
			`"pre_processing":{"audio_enhancer":false,"speech_threshold":0.6},` +
			`"realtime_processing":{"custom_vocabulary":false,"custom_spelling":false,"translation":false,"named_entity_recognition":false,"sentiment_analysis":false},` +
			`"post_processing":{"summarization":false,"summarization_config":{"type":"general"},"chapterization":false},` +
			`"messages_config":{"receive_partial_transcripts":false,"receive_final_transcripts":true,"receive_speech_events":true,` +
			`"receive_pre_processing_events":false,"receive_realtime_processing_events":true,"receive_post_processing_events":true,` +
			`"receive_acknowledgments":true,"receive_errors":true,"receive_lifecycle_events":false,"receive_dtmf_events":true,"receive_revised_transcripts":false},` +
			`"callback":false,` +
			`"callback_config":{"method":"POST","receive_partial_transcripts":false,"receive_final_transcripts":true,"receive_speech_events":false,` +
			`"receive_pre_processing_events":false,"receive_realtime_processing_events":true,"receive_post_processing_events":true,` +
			`"receive_acknowledgments":false,"receive_errors":false,"receive_lifecycle_events":true,"receive_dtmf_events":true,"receive_revised_transcripts":false}}`
		if string(b) != want {
			t.Errorf("%q: request_params =\n%s\nwant\n%s", body, b, want)
		}
	}
}

// TestLiveSwitchDefaults pins each switch of SPEC section 6, column by column.
func TestLiveSwitchDefaults(t *testing.T) {
	tests := []struct {
		name               string
		websocket, callbck bool
	}{
		{"receive_partial_transcripts", false, false},
		{"receive_final_transcripts", true, true},
		{"receive_speech_events", true, false},
		// SPEC's column says true; this appliance has no pre-processing
		// events: false, and true is refused (TestLiveRefusals).
		{"receive_pre_processing_events", false, false},
		{"receive_realtime_processing_events", true, true},
		{"receive_post_processing_events", true, true},
		{"receive_acknowledgments", true, false},
		{"receive_errors", true, false},
		{"receive_lifecycle_events", false, true},
	}
	l, err := DecodeLive([]byte(`{}`), english)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := fieldJSON(t, l, "messages_config."+tc.name); got != jsonBool(tc.websocket) {
				t.Errorf("messages_config.%s = %s, want %v", tc.name, got, tc.websocket)
			}
			if got := fieldJSON(t, l, "callback_config."+tc.name); got != jsonBool(tc.callbck) {
				t.Errorf("callback_config.%s = %s, want %v", tc.name, got, tc.callbck)
			}
			// Each switch can be flipped on its own, in both objects.
			body := `{"messages_config":{"` + tc.name + `":` + jsonBool(!tc.websocket) + `},` +
				`"callback_config":{"` + tc.name + `":` + jsonBool(!tc.callbck) + `}}`
			flipped, err := DecodeLive([]byte(body), english)
			if tc.name == "receive_pre_processing_events" {
				if !errors.Is(err, ErrCannotServe) || !strings.Contains(err.Error(), "messages_config.receive_pre_processing_events true") {
					t.Errorf("%s true: %v, want the 422 naming it", tc.name, err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := fieldJSON(t, flipped, "messages_config."+tc.name); got != jsonBool(!tc.websocket) {
				t.Errorf("flipped messages_config.%s = %s", tc.name, got)
			}
			if got := fieldJSON(t, flipped, "callback_config."+tc.name); got != jsonBool(!tc.callbck) {
				t.Errorf("flipped callback_config.%s = %s", tc.name, got)
			}
		})
	}
}

func jsonBool(b bool) string {
	if b {
		return "true"
	}
	return "false"
}

func TestDecodeLiveGood(t *testing.T) {
	tests := []struct {
		name  string
		body  string
		field string
		want  string
	}{
		{"ulaw is 8 bits", `{"encoding":"wav/ulaw","sample_rate":8000}`, "bit_depth", `8`},
		{"alaw with its bit depth", `{"encoding":"wav/alaw","bit_depth":8}`, "encoding", `"wav/alaw"`},
		{"pcm 24 bits", `{"bit_depth":24}`, "bit_depth", `24`},
		{"sample rate", `{"sample_rate":44100}`, "sample_rate", `44100`},
		{"sample rate as float", `{"sample_rate":48000.0}`, "sample_rate", `48000`},
		{"channels", `{"channels":8}`, "channels", `8`},
		{"endpointing low bound", `{"endpointing":0.01}`, "endpointing", `0.01`},
		{"endpointing high bound", `{"endpointing":10}`, "endpointing", `10`},
		{"max without endpointing", `{"maximum_duration_without_endpointing":60}`, "maximum_duration_without_endpointing", `60`},
		{"model-1", `{"model":"model-1"}`, "model", `"model-1"`},
		{"languages", `{"language_config":{"languages":["en"],"code_switching":true}}`, "language_config", `{"languages":["en"],"code_switching":true}`},
		{"pre_processing", `{"pre_processing":{"audio_enhancer":true,"speech_threshold":1}}`, "pre_processing", `{"audio_enhancer":true,"speech_threshold":1}`},
		{"realtime_processing", `{"realtime_processing":{"custom_vocabulary":true,"custom_vocabulary_config":{"vocabulary":["Earshot"]},` +
			`"custom_spelling":true,"custom_spelling_config":{"spelling_dictionary":{"Go":["go lang"]}},` +
			`"translation":true,"translation_config":{"target_languages":["fr"]},"named_entity_recognition":true,"sentiment_analysis":true}}`,
			"realtime_processing",
			`{"custom_vocabulary":true,"custom_vocabulary_config":{"vocabulary":[{"value":"Earshot"}]},` +
				`"custom_spelling":true,"custom_spelling_config":{"spelling_dictionary":{"Go":["go lang"]}},` +
				`"translation":true,"translation_config":{"target_languages":["fr"],"model":"base","match_original_utterances":true,"lipsync":true,"context_adaptation":true,"informal":false},` +
				`"named_entity_recognition":true,"sentiment_analysis":true}`},
		{"post_processing", `{"post_processing":{"summarization":true,"summarization_config":{"type":"concise"},"chapterization":true}}`,
			"post_processing", `{"summarization":true,"summarization_config":{"type":"concise"},"chapterization":true}`},
		{"callback", `{"callback":true,"callback_config":{"url":"https://crm.local/live","receive_partial_transcripts":true}}`,
			"callback_config.receive_partial_transcripts", `true`},
		{"callback url", `{"callback":true,"callback_config":{"url":"https://crm.local/live","method":"PUT"}}`,
			"callback_config.url", `"https://crm.local/live"`},
		{"metadata", `{"custom_metadata":{"call_id":"a@b","leg":2}}`, "custom_metadata", `{"call_id":"a@b","leg":2}`},
		{"pii_redaction", `{"pii_redaction":true}`, "pii_redaction_config", `{"entity_types":["GDPR"],"processed_text_type":"MARKER","audio":"silence"}`},
		{"pii_redaction_config", `{"pii_redaction":true,"pii_redaction_config":{"entity_types":["pci"],"processed_text_type":"MASK","audio":"tone"}}`,
			"pii_redaction_config", `{"entity_types":["PCI"],"processed_text_type":"MASK","audio":"tone"}`},
		{"nulls are absent", `{"encoding":null,"messages_config":null,"callback_config":null,"custom_metadata":null}`, "encoding", `"wav/pcm"`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			l, err := DecodeLive([]byte(tc.body), english)
			if err != nil {
				t.Fatalf("DecodeLive: %v", err)
			}
			if got := fieldJSON(t, l, tc.field); got != tc.want {
				t.Errorf("%s = %s, want %s", tc.field, got, tc.want)
			}
			b, _ := json.Marshal(l)
			again, err := DecodeLive(b, english)
			if err != nil {
				t.Fatalf("request_params %s does not decode: %v", b, err)
			}
			if b2, _ := json.Marshal(again); string(b2) != string(b) {
				t.Errorf("round trip changed the value:\n%s\n%s", b, b2)
			}
		})
	}
}

func TestLiveCallbackTarget(t *testing.T) {
	l, err := DecodeLive([]byte(`{"callback":true,"callback_config":{"url":"http://crm.local/x","method":"put"}}`), english)
	if err != nil {
		t.Fatal(err)
	}
	if u, m, ok := l.CallbackTarget(); u != "http://crm.local/x" || m != "PUT" || !ok {
		t.Errorf("CallbackTarget = %q %q %v", u, m, ok)
	}
	l, err = DecodeLive([]byte(`{"callback":false,"callback_config":{"url":"http://crm.local/x"}}`), english)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, ok := l.CallbackTarget(); ok {
		t.Error("CallbackTarget ok with callback false")
	}
}

func TestDecodeLiveProblems(t *testing.T) {
	tests := []struct {
		name string
		body string
		want []string
	}{
		{"not JSON", `{"encoding"`, []string{"body is not valid JSON"}},
		{"string body", `"wav/pcm"`, []string{"body must be an object"}},
		{"sample rate", `{"sample_rate":22050}`, []string{"sample_rate must be one of 8000, 16000, 32000, 44100, 48000"}},
		{"sample rate fraction", `{"sample_rate":16000.5}`, []string{"sample_rate must be one of 8000, 16000, 32000, 44100, 48000"}},
		{"sample rate wrong type", `{"sample_rate":"16000"}`, []string{"sample_rate must be a number"}},
		{"sample rate huge", `{"sample_rate":1e999}`, []string{"sample_rate is out of range"}},
		{"bit depth", `{"bit_depth":12}`, []string{"bit_depth must be one of 8, 16, 24, 32"}},
		{"bit depth for ulaw", `{"encoding":"wav/ulaw","bit_depth":16}`, []string{"bit_depth must be 8 for wav/ulaw"}},
		{"encoding", `{"encoding":"mp3"}`, []string{"encoding must be one of wav/pcm, wav/alaw, wav/ulaw"}},
		{"pii_redaction fields", `{"pii_redaction":"yes","pii_redaction_config":{"audio":"bleep","extra":1}}`,
			[]string{"pii_redaction must be a boolean", "pii_redaction_config.audio must be one of silence, tone, off", "pii_redaction_config.extra is not a known field"}},
		{"channels low", `{"channels":0}`, []string{"channels must be from 1 to 8"}},
		{"channels high", `{"channels":9}`, []string{"channels must be from 1 to 8"}},
		{"channels fraction", `{"channels":1.5}`, []string{"channels must be an integer"}},
		{"channels wrong type", `{"channels":true}`, []string{"channels must be an integer"}},
		{"endpointing low", `{"endpointing":0}`, []string{"endpointing must be from 0.01 to 10"}},
		{"endpointing high", `{"endpointing":10.5}`, []string{"endpointing must be from 0.01 to 10"}},
		{"max without endpointing", `{"maximum_duration_without_endpointing":4.9}`, []string{"maximum_duration_without_endpointing must be from 5 to 60"}},
		{"model", `{"model":"model-2"}`, []string{"model must be one of model-1, model-3"}},
		{"speech threshold", `{"pre_processing":{"speech_threshold":1.2,"audio_enhancer":"on","denoise":true}}`,
			[]string{"pre_processing.audio_enhancer must be a boolean", "pre_processing.speech_threshold must be from 0 to 1", "pre_processing.denoise is not a known field"}},
		{"realtime configs required", `{"realtime_processing":{"custom_vocabulary":true,"custom_spelling":true,"translation":true}}`,
			[]string{"realtime_processing.custom_vocabulary_config is required when realtime_processing.custom_vocabulary is true",
				"realtime_processing.custom_spelling_config is required when realtime_processing.custom_spelling is true",
				"realtime_processing.translation_config is required when realtime_processing.translation is true"}},
		{"realtime vocabulary array form", `{"realtime_processing":{"custom_vocabulary":["a"]}}`,
			[]string{"realtime_processing.custom_vocabulary must be a boolean"}},
		{"realtime nested", `{"realtime_processing":{"translation":true,"translation_config":{"target_languages":["xx"]},"custom_vocabulary_config":{"vocabulary":[{"value":"a","intensity":2}]},"summarization":true}}`,
			[]string{`realtime_processing.custom_vocabulary_config.vocabulary[0].intensity must be from 0 to 1`,
				`realtime_processing.translation_config.target_languages[0] must be a known language code, not "xx"`,
				"realtime_processing.summarization is not a known field"}},
		{"post processing", `{"post_processing":{"summarization_config":{"type":"x"},"chapterization":1}}`,
			[]string{"post_processing.summarization_config.type must be one of general, bullet_points, concise", "post_processing.chapterization must be a boolean"}},
		{"messages config", `{"messages_config":{"receive_errors":"yes","receive_everything":true}}`,
			[]string{"messages_config.receive_errors must be a boolean", "messages_config.receive_everything is not a known field"}},
		{"messages config wrong type", `{"messages_config":true}`, []string{"messages_config must be an object"}},
		{"callback without url", `{"callback":true}`, []string{"callback_config.url is required when callback is true"}},
		{"callback config without url", `{"callback":true,"callback_config":{"receive_errors":true}}`, []string{"callback_config.url is required when callback is true"}},
		{"callback url scheme", `{"callback":true,"callback_config":{"url":"ws://crm.local/x"}}`, []string{"callback_config.url must be an http or https URL"}},
		{"callback config switch", `{"callback_config":{"receive_lifecycle_events":0,"method":"PATCH"}}`,
			[]string{"callback_config.method must be one of POST, PUT", "callback_config.receive_lifecycle_events must be a boolean"}},
		{"pre-recorded field on live", `{"audio_url":"https://x/a.wav","diarization":true}`,
			[]string{"audio_url is not a known field", "diarization is not a known field"}},
		{"metadata", `{"custom_metadata":"x"}`, []string{"custom_metadata must be an object"}},
		{"several at once", `{"sample_rate":1,"channels":0,"language_config":{"languages":[1]},"messages_config":{"x":true},"y":null}`,
			[]string{"sample_rate must be one of 8000, 16000, 32000, 44100, 48000", "channels must be from 1 to 8",
				"language_config.languages[0] must be a string", "messages_config.x is not a known field", "y is not a known field"}},
		{"400 before 422", `{"model":"model-3","channels":0}`, []string{"channels must be from 1 to 8"}},
		{"pci sequences", `{"pci":{"mask_dtmf":"no","pause_sequence":"*1x","resume_sequence":"123456789"}}`,
			[]string{"pci.mask_dtmf must be a boolean", "pci.pause_sequence must be DTMF digits only (0-9, *, #, A-D)", "pci.resume_sequence must be 1 to 8 DTMF digits"}},
		{"pci same sequences", `{"pci":{"pause_sequence":"#9","resume_sequence":"#9"}}`, []string{"pci.resume_sequence must differ from pause_sequence"}},
		{"pci empty sequence", `{"pci":{"pause_sequence":"","resume_sequence":"*d"}}`,
			[]string{"pci.pause_sequence must be 1 to 8 DTMF digits", "pci.resume_sequence must be DTMF digits only (0-9, *, #, A-D)"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			l, err := DecodeLive([]byte(tc.body), english)
			if l != nil {
				t.Error("got a value with an error")
			}
			if got := problemsOf(t, err); !slices.Equal(got, tc.want) {
				t.Errorf("problems =\n%q\nwant\n%q", got, tc.want)
			}
		})
	}
}

func TestDecodeLiveCannotServe(t *testing.T) {
	tests := []struct {
		name string
		body string
		caps Capabilities
		want string
	}{
		{"model-3", `{"model":"model-3","language_config":{"languages":["en"]}}`, english,
			"model-3 is not available for live (use model-1)"},
		{"language not installed", `{"language_config":{"languages":["de"]}}`, english,
			"language_config.languages de is not served by this appliance (installed: en)"},
		{"listing the installed", `{"language_config":{"languages":["ja"]}}`, Capabilities{Languages: []string{"en", "fr"}},
			"language_config.languages ja is not served by this appliance (installed: en, fr)"},
		{"enhanced translation", `{"realtime_processing":{"translation":true,"translation_config":{"target_languages":["fr"],"model":"enhanced"}}}`, english,
			`realtime_processing.translation_config.model "enhanced": this appliance translates with one model (its configured backend), served as "base"`},
		{"pre-processing events", `{"messages_config":{"receive_pre_processing_events":false},"callback_config":{"receive_pre_processing_events":true}}`, english,
			"callback_config.receive_pre_processing_events true: this appliance's pre-processing (pre_processing.audio_enhancer, speech_threshold) sends no messages of its own; " +
				"speech detection is reported by receive_speech_events (leave the switch out or set it false)"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			l, err := DecodeLive([]byte(tc.body), tc.caps)
			if l != nil || !errors.Is(err, ErrCannotServe) {
				t.Fatalf("got %v, %v; want ErrCannotServe", l, err)
			}
			if errcode.Message(err) != tc.want { // the client message
				t.Errorf("error =\n%s\nwant\n%s", err, tc.want)
			}
		})
	}
}

// TestDecodeLiveOptions: a door's options are checked as a POST /v2/live
// body is, except the languages (CheckLanguages, against the engines) and
// the format, which the door sets with SetFormat under the body's rules.
func TestDecodeLiveOptions(t *testing.T) {
	l, err := DecodeLiveOptions(map[string]any{"language_config": map[string]any{"languages": []any{"de"}}, "endpointing": 0.3})
	if err != nil || l.Silence != secondsOf(0.3) || l.Encoding != EncodingPCM || l.SampleRate != DefaultSampleRate {
		t.Fatalf("options: %+v, %v", l, err)
	}
	if none, err := DecodeLiveOptions(nil); err != nil || none.Model != Model1 || none.Channels != DefaultChannels {
		t.Errorf("no options: %+v, %v; want every default", none, err)
	}
	if err := l.CheckLanguages(english); !errors.Is(err, ErrCannotServe) {
		t.Errorf("languages de on an English appliance: %v, want ErrCannotServe", err)
	}
	// A SIP route's live options may ask for PII redaction.
	if pii, err := DecodeLiveOptions(map[string]any{"pii_redaction": true, "pii_redaction_config": map[string]any{"audio": "tone"}}); err != nil ||
		!pii.PIIRedaction || pii.PIIRedactionConfig.AudioMode() != AudioTone || pii.PIIRedactionConfig.EntityTypes[0] != PresetGDPR {
		t.Errorf("pii_redaction options: %+v, %v", pii, err)
	}
	if _, err := DecodeLiveOptions(map[string]any{"pii_redaction": true, "language_config": map[string]any{"languages": []string{"de"}}}); err != nil {
		t.Errorf("pii_redaction with de: %v (languages are checked when the session opens)", err)
	}
	if _, err := DecodeLiveOptions(map[string]any{"endpointing": 99}); !strings.Contains(fmt.Sprint(err), "endpointing") {
		t.Errorf("endpointing 99: %v, want a problem naming it", err)
	}
	if err := l.SetFormat(EncodingULaw, 8, 8000, 2); err != nil || l.Encoding != EncodingULaw || l.BitDepth != 8 || l.SampleRate != 8000 || l.Channels != 2 {
		t.Errorf("G.711 stereo: %+v, %v", l, err)
	}
	for _, bad := range []struct {
		enc                string
		depth, rate, chans int
		want               string
	}{
		{"wav/opus", 16, 16000, 1, "encoding"},
		{EncodingALaw, 16, 8000, 1, "bit_depth"},
		{EncodingPCM, 16, 11025, 1, "sample_rate"},
		{EncodingPCM, 16, 16000, MaxChannels + 1, "channels"},
	} {
		var ve *ValidationError
		if err := l.SetFormat(bad.enc, bad.depth, bad.rate, bad.chans); !errors.As(err, &ve) || !strings.Contains(strings.Join(ve.Problems, ";"), bad.want) {
			t.Errorf("SetFormat(%s, %d, %d, %d) = %v, want a problem naming %s", bad.enc, bad.depth, bad.rate, bad.chans, err, bad.want)
		}
	}
}

// TestPCIJSON: pci.mask_dtmf is true unless asked false, in a request and
// in stored request_params (those stored before it existed too), and
// request_params lists it only when false.
func TestPCIJSON(t *testing.T) {
	for body, inClear := range map[string]bool{`{}`: false, `{"pci":{}}`: false, `{"pci":{"mask_dtmf":true}}`: false, `{"pci":{"mask_dtmf":false}}`: true} {
		l, err := DecodeLive([]byte(body), english)
		if err != nil {
			t.Fatal(err)
		}
		if l.PCI.DTMFInClear != inClear {
			t.Errorf("%s: DTMFInClear %v", body, l.PCI.DTMFInClear)
		}
		b, _ := json.Marshal(l)
		var back Live
		if err := json.Unmarshal(b, &back); err != nil || back.PCI != l.PCI {
			t.Errorf("%s: stored %s, read back %+v (%v)", body, b, back.PCI, err)
		}
		if strings.Contains(string(b), "mask_dtmf") != inClear {
			t.Errorf("%s: request_params %s", body, b)
		}
		if stored, err := StoredLive(b); err != nil || stored.PCI != l.PCI || stored.MessagesConfig.ReceiveDTMFEvents != l.MessagesConfig.ReceiveDTMFEvents {
			t.Errorf("%s: StoredLive of %s: %+v, %v", body, b, stored, err)
		}
	}
	var old Live
	if err := json.Unmarshal([]byte(`{"pci":{"start_paused":true}}`), &old); err != nil || old.PCI.DTMFInClear || !old.PCI.StartPaused {
		t.Errorf("params stored before mask_dtmf: %+v, %v", old.PCI, err)
	}
	l, err := DecodeLive([]byte(`{"pci":{"pause_sequence":"*1","resume_sequence":"#ABCD012","mask_dtmf":false}}`), english)
	if err != nil || l.PCI.PauseSequence != "*1" || l.PCI.ResumeSequence != "#ABCD012" {
		t.Errorf("sequences %+v, %v", l, err)
	}
	b, _ := json.Marshal(l)
	if stored, err := StoredLive(b); err != nil || stored.PCI != l.PCI {
		t.Errorf("StoredLive of %s: %+v, %v", b, stored, err)
	}
}

// TestInbandDTMF: pci.inband_dtmf is on by default for a door's calls (a
// SIP route's options), off for POST /v2/live, either way when asked; it
// needs telephone audio (422 otherwise), and request_params keeps it.
func TestInbandDTMF(t *testing.T) {
	for body, want := range map[string]bool{`{}`: false, `{"pci":{}}`: false, `{"pci":{"inband_dtmf":true}}`: true,
		`{"encoding":"wav/ulaw","bit_depth":8,"sample_rate":8000,"pci":{"inband_dtmf":true}}`: true} {
		l, err := DecodeLive([]byte(body), english)
		if err != nil || l.PCI.InbandDTMF != want {
			t.Errorf("POST /v2/live %s: inband_dtmf %v, %v", body, l != nil && l.PCI.InbandDTMF, err)
			continue
		}
		b, _ := json.Marshal(l)
		var back Live
		if err := json.Unmarshal(b, &back); err != nil || back.PCI != l.PCI || strings.Contains(string(b), "inband_dtmf") != want {
			t.Errorf("%s: stored %s, read back %+v (%v)", body, b, back.PCI, err)
		}
	}
	for opts, want := range map[string]bool{`{}`: true, `{"pci":{"start_paused":true}}`: true, `{"pci":{"inband_dtmf":false}}`: false} {
		var m map[string]any
		if err := json.Unmarshal([]byte(opts), &m); err != nil {
			t.Fatal(err)
		}
		l, err := DecodeLiveOptions(m)
		if err != nil || l.PCI.InbandDTMF != want {
			t.Errorf("route options %s: inband_dtmf %v, %v", opts, l != nil && l.PCI.InbandDTMF, err)
		}
	}
	// Stored params read back as written: a session that did not ask
	// stays off, a call's default stays on.
	for body, want := range map[string]bool{`{"pci":{"start_paused":true}}`: false, `{}`: false, `{"pci":{"inband_dtmf":true}}`: true} {
		if l, err := StoredLive([]byte(body)); err != nil || l.PCI.InbandDTMF != want {
			t.Errorf("stored %s: inband_dtmf %v, %v", body, l != nil && l.PCI.InbandDTMF, err)
		}
	}
	call, _ := DecodeLiveOptions(nil)
	b, _ := json.Marshal(call)
	if l, err := StoredLive(b); err != nil || !l.PCI.InbandDTMF {
		t.Errorf("a call's stored params %s: %+v, %v", b, l, err)
	}
	for _, body := range []string{`{"sample_rate":44100,"pci":{"inband_dtmf":true}}`, `{"bit_depth":24,"pci":{"inband_dtmf":true}}`, `{"encoding":"wav/ulaw","bit_depth":8,"sample_rate":16000,"pci":{"inband_dtmf":true}}`} {
		if _, err := DecodeLive([]byte(body), english); !errors.Is(err, ErrCannotServe) {
			t.Errorf("%s: %v, want a 422", body, err)
		}
	}
}
