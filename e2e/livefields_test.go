package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/earshot-dev/earshot/params"
)

// liveRun is what a live case's check reads: the finished job, the
// messages the WebSocket client got, and the callbacks of the job.
type liveRun struct {
	job, result, transcription map[string]any
	psm                        map[string]any
	msgs                       []liveMsg
	chat                       []chatReq
}

func (r liveRun) utterances() []map[string]any {
	var out []map[string]any
	for _, u := range r.transcription["utterances"].([]any) {
		out = append(out, u.(map[string]any))
	}
	return out
}

// types counts the WebSocket messages by type ("transcript" split into
// "transcript/final" and "transcript/partial").
func (r liveRun) types() map[string]int {
	n := map[string]int{}
	for _, m := range r.msgs {
		typ := m.Type
		if typ == "transcript" {
			var d struct {
				IsFinal bool `json:"is_final"`
			}
			json.Unmarshal(m.Data, &d)
			typ += map[bool]string{true: "/final", false: "/partial"}[d.IsFinal]
		}
		n[typ]++
	}
	return n
}

// liveAudio is a clip (or clips joined by a second of silence) converted
// by ffmpeg to raw audio of the given output options.
type liveAudio struct {
	clips      []string
	ffmpeg     []string // output options; default 16 kHz mono s16le
	bytesPerMs int      // default 32
	noise      bool     // mixed with pink noise (-20 dB)
	oddByte    bool     // one byte more: a trailing partial frame (an error message)
}

// liveCase shows what some live request fields do: a session run with
// body and audio, then check; with compare set, a second session with that
// body on the same audio, whose run check also gets; or, with refuse set,
// the 422 naming the field; or, with provenBy set, the test that shows it.
type liveCase struct {
	name     string
	fields   []string
	body     map[string]any
	audio    liveAudio
	compare  map[string]any
	refuse   string
	provenBy string
	check    func(t *testing.T, r, base liveRun)
}

// TestEveryLiveField walks every field POST /v2/live accepts (SPEC 2.3,
// 2.6, 2.7 and section 6's switches) through the real daemon, with real
// sessions on the WebSocket, and shows each one's effect on the messages
// and the stored result, or its 422. It fails when params accepts a field
// no case covers: a field is never accepted and ignored.
func TestEveryLiveField(t *testing.T) {
	chat := newChatStandIn(t)
	hook, hookURL := startHookReceiver(t)
	// The live pass's own result and requests are what each case shows: no
	// batch pass replaces the result (or sends requests during the next
	// case) after a session (live_record_test.go tests the batch pass).
	d := startDaemon(t, "", fmt.Sprintf("addons:\n  llm:\n    url: %s/v1\n    model: stand-in-model\n    timeout: 10s\n    retries: -1\nlive:\n  batch_pass: false\n", chat.srv.URL))
	key := createKey(t, d.DataDir, "acme")

	cases := liveCases(hookURL, hook)
	var named []caseFields
	for _, c := range cases {
		named = append(named, caseFields{c.name, c.fields})
	}
	covered := map[string]bool{"language_config.code_switching": true} // TestLiveCodeSwitching, below
	checkFieldCoverage(t, reflect.TypeOf(params.Live{}), " on /v2/live", named, covered)

	run := func(t *testing.T, body map[string]any, a liveAudio) liveRun {
		t.Helper()
		audio := a.bytes(t)
		var s liveSession
		status, b := d.postJSON("/v2/live", key, body, &s)
		if status != 201 {
			t.Fatalf("POST /v2/live: %d %s", status, b)
		}
		before := len(chat.requests())
		msgs, code := runSession(t, s.URL, audio, cmpOr(a.bytesPerMs, 32), 0)
		if code != 1000 {
			t.Fatalf("session closed %d", code)
		}
		r := liveRun{msgs: msgs}
		if status, b := d.do("GET", "/v2/live/"+s.ID, key, nil, "", &r.job); status != 200 || r.job["status"] != "done" {
			t.Fatalf("GET /v2/live/%s: %d %.300s", s.ID, status, b)
		}
		r.chat = chat.requests()[before:]
		r.result = r.job["result"].(map[string]any)
		r.transcription = r.result["transcription"].(map[string]any)
		r.psm, _ = r.job["post_session_metadata"].(map[string]any)
		return r
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if c.provenBy != "" {
				checkProvenBy(t, c.provenBy, c.fields)
				return
			}
			body := withEnglish(c.body)
			if c.refuse != "" {
				status, b := d.postJSON("/v2/live", key, body, nil)
				if status != 422 || !strings.Contains(string(b), c.refuse) {
					t.Fatalf("got %d %s; want 422 saying %q", status, b, c.refuse)
				}
				return
			}
			r := run(t, body, c.audio)
			var base liveRun
			if c.compare != nil {
				base = run(t, withEnglish(c.compare), c.audio)
			}
			c.check(t, r, base)
		})
	}
}

// withEnglish is body with language_config {languages: [en]} unless it
// has a language_config.
func withEnglish(body map[string]any) map[string]any {
	out := map[string]any{"language_config": map[string]any{"languages": []string{"en"}}}
	for k, v := range body {
		out[k] = v
	}
	return out
}

func cmpOr(a, b int) int {
	if a != 0 {
		return a
	}
	return b
}

// bytes converts the clips to the case's raw format.
func (a liveAudio) bytes(t *testing.T) []byte {
	t.Helper()
	clips := a.clips
	if len(clips) == 0 {
		clips = []string{"pocketsphinx-goforward.wav"}
	}
	var args []string
	var filter []string
	for i, c := range clips {
		path, _ := clip(t, c)
		args = append(args, "-i", path)
		filter = append(filter, fmt.Sprintf("[%d:a]aresample=16000,apad=pad_dur=1[a%d]", i, i))
	}
	var join strings.Builder
	for i := range clips {
		fmt.Fprintf(&join, "[a%d]", i)
	}
	graph := strings.Join(filter, ";") + ";" + join.String() + fmt.Sprintf("concat=n=%d:v=0:a=1[out]", len(clips))
	if a.noise {
		args = append(args, "-f", "lavfi", "-i", "anoisesrc=color=pink:amplitude=0.1:sample_rate=16000:seed=7")
		graph += fmt.Sprintf(";[out][%d:a]amix=inputs=2:duration=first:normalize=0[mix]", len(clips))
	}
	outLabel := "[out]"
	if a.noise {
		outLabel = "[mix]"
	}
	format := a.ffmpeg
	if format == nil {
		format = []string{"-ar", "16000", "-ac", "1", "-f", "s16le"}
	}
	out := filepath.Join(t.TempDir(), "audio.raw")
	cmd := append([]string{"-nostdin", "-v", "error"}, args...)
	cmd = append(cmd, "-filter_complex", graph, "-map", outLabel)
	cmd = append(cmd, format...)
	cmd = append(cmd, out)
	if b, err := exec.Command("ffmpeg", cmd...).CombinedOutput(); err != nil {
		t.Fatalf("ffmpeg %v: %v %s", cmd, err, b)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if a.oddByte {
		b = append(b, 0)
	}
	return b
}

func liveCases(hookURL string, hook *callbackReceiver) []liveCase {
	duration := func(t *testing.T, r liveRun, want float64) {
		t.Helper()
		f := r.job["file"].(map[string]any)
		if got := f["audio_duration"].(float64); got < want-0.05 || got > want+0.05 {
			t.Errorf("file.audio_duration %v, want %v (the audio read in the format asked for)", got, want)
		}
	}
	heard := func(t *testing.T, r liveRun, word string) {
		t.Helper()
		if s, _ := r.transcription["full_transcript"].(string); !strings.Contains(s, word) {
			t.Errorf("transcript %q lacks %q", s, word)
		}
	}
	envelopeOK := func(t *testing.T, r liveRun, name string) map[string]any {
		t.Helper()
		env, _ := r.result[name].(map[string]any)
		if env == nil || env["success"] != true {
			t.Fatalf("result.%s: %v", name, r.result[name])
		}
		return env
	}
	note := func(t *testing.T, r liveRun, key, want string) {
		t.Helper()
		if s, _ := r.psm[key].(string); !strings.Contains(s, want) {
			t.Errorf("post_session_metadata.%s = %q, want it to say %q", key, s, want)
		}
	}
	chatWith := func(t *testing.T, r liveRun, part string, want bool) {
		t.Helper()
		found := slices.ContainsFunc(r.chat, func(c chatReq) bool { return strings.Contains(c.System+"\n"+c.User, part) })
		if found != want {
			t.Errorf("LLM requests containing %q: %v, want %v", part, found, want)
		}
	}
	// messagesOf collects the data of every WebSocket message of a type.
	messagesOf := func(r liveRun, typ string) []map[string]any {
		var out []map[string]any
		for _, m := range r.msgs {
			if m.Type == typ {
				var d map[string]any
				json.Unmarshal(m.Data, &d)
				out = append(out, d)
			}
		}
		return out
	}
	const goforward = 2.786 // seconds, plus the second of silence liveAudio pads
	twice := liveAudio{clips: []string{"pocketsphinx-goforward.wav", "pocketsphinx-goforward.wav"}}
	long := liveAudio{clips: []string{"ljspeech-LJ001-0001.wav"}}
	spell := map[string]any{"custom_spelling": true, "custom_spelling_config": map[string]any{"spelling_dictionary": map[string]any{"FORWARD": []string{"forward"}}}}
	return []liveCase{
		{name: "defaults: 16-bit 16 kHz mono PCM, model-1, a real transcription_time", fields: []string{"model", "encoding", "bit_depth", "sample_rate", "channels"},
			body: map[string]any{"model": "model-1", "encoding": "wav/pcm", "bit_depth": 16, "sample_rate": 16000, "channels": 1},
			check: func(t *testing.T, r, _ liveRun) {
				duration(t, r, goforward+1)
				heard(t, r, "forward")
				md := r.result["metadata"].(map[string]any)
				if tt, _ := md["transcription_time"].(float64); tt <= 0 || tt > 60 {
					t.Errorf("transcription_time %v, want the seconds spent recognising", md["transcription_time"])
				}
			}},
		{name: "model-3 is refused", fields: []string{"model"}, body: map[string]any{"model": "model-3"}, refuse: "model-3 is not available for live"},
		{name: "wav/ulaw at 8 kHz", fields: []string{"encoding", "sample_rate"}, body: map[string]any{"encoding": "wav/ulaw", "sample_rate": 8000},
			audio: liveAudio{ffmpeg: []string{"-ar", "8000", "-ac", "1", "-f", "mulaw"}, bytesPerMs: 8},
			check: func(t *testing.T, r, _ liveRun) { duration(t, r, goforward+1); heard(t, r, "forward") }},
		{name: "wav/alaw at 8 kHz", fields: []string{"encoding"}, body: map[string]any{"encoding": "wav/alaw", "sample_rate": 8000},
			audio: liveAudio{ffmpeg: []string{"-ar", "8000", "-ac", "1", "-f", "alaw"}, bytesPerMs: 8},
			check: func(t *testing.T, r, _ liveRun) { duration(t, r, goforward+1); heard(t, r, "forward") }},
		{name: "32-bit PCM", fields: []string{"bit_depth"}, body: map[string]any{"bit_depth": 32},
			audio: liveAudio{ffmpeg: []string{"-ar", "16000", "-ac", "1", "-f", "s32le"}, bytesPerMs: 64},
			check: func(t *testing.T, r, _ liveRun) { duration(t, r, goforward+1); heard(t, r, "forward") }},
		{name: "48 kHz", fields: []string{"sample_rate"}, body: map[string]any{"sample_rate": 48000},
			audio: liveAudio{ffmpeg: []string{"-ar", "48000", "-ac", "1", "-f", "s16le"}, bytesPerMs: 96},
			check: func(t *testing.T, r, _ liveRun) { duration(t, r, goforward+1); heard(t, r, "forward") }},
		{name: "two channels are transcribed apart", fields: []string{"channels"}, body: map[string]any{"channels": 2},
			audio: liveAudio{ffmpeg: []string{"-ar", "16000", "-ac", "2", "-f", "s16le"}, bytesPerMs: 64},
			check: func(t *testing.T, r, _ liveRun) {
				duration(t, r, goforward+1)
				chans := map[float64]bool{}
				for _, u := range r.utterances() {
					chans[u["channel"].(float64)] = true
				}
				if !chans[0] || !chans[1] {
					t.Errorf("utterances on channels %v, want 0 and 1", chans)
				}
			}},
		{name: "endpointing decides where an utterance ends", fields: []string{"endpointing", "maximum_duration_without_endpointing"},
			body: map[string]any{"endpointing": 0.3, "maximum_duration_without_endpointing": 10}, audio: twice,
			compare: map[string]any{"endpointing": 3, "maximum_duration_without_endpointing": 10},
			check: func(t *testing.T, r, base liveRun) {
				if n, m := len(r.utterances()), len(base.utterances()); n < 2 || m != 1 {
					t.Errorf("%d utterances with 0.3 s endpointing, %d with 3 s; want 2 or more, and 1 across the second of silence", n, m)
				}
			}},
		{name: "maximum_duration_without_endpointing cuts long speech", fields: []string{"maximum_duration_without_endpointing"},
			body: map[string]any{"endpointing": 10, "maximum_duration_without_endpointing": 5}, audio: long,
			compare: map[string]any{"endpointing": 10, "maximum_duration_without_endpointing": 20},
			check: func(t *testing.T, r, base liveRun) {
				for _, u := range r.utterances() {
					if d := u["end"].(float64) - u["start"].(float64); d > 5.05 {
						t.Errorf("utterance of %.2f s with a 5 s maximum", d)
					}
				}
				if n, m := len(r.utterances()), len(base.utterances()); n < 2 || m != 1 {
					t.Errorf("%d utterances with a 5 s maximum, %d with 20 s; want 2 or more, and 1", n, m)
				}
			}},
		{name: "languages sets the language", fields: []string{"language_config", "language_config.languages"},
			body: map[string]any{"language_config": map[string]any{"languages": []string{"en"}}},
			check: func(t *testing.T, r, _ liveRun) {
				if fmt.Sprint(r.transcription["languages"]) != "[en]" || r.utterances()[0]["language"] != "en" {
					t.Errorf("languages %v", r.transcription["languages"])
				}
			}},
		{name: "a language not installed is refused", fields: []string{"language_config.languages"},
			body: map[string]any{"language_config": map[string]any{"languages": []string{"de"}}}, refuse: "de is not served by this appliance"},
		{name: "audio_enhancer changes what the recogniser hears", fields: []string{"pre_processing", "pre_processing.audio_enhancer"},
			body: map[string]any{"pre_processing": map[string]any{"audio_enhancer": true}}, audio: liveAudio{noise: true},
			compare: map[string]any{"pre_processing": map[string]any{"audio_enhancer": false}},
			check: func(t *testing.T, r, base liveRun) {
				a, _ := json.Marshal(r.utterances())
				b, _ := json.Marshal(base.utterances())
				if string(a) == string(b) {
					t.Errorf("the same utterances with and without the enhancer: %s", a)
				}
			}},
		{name: "speech_threshold decides what is speech", fields: []string{"pre_processing.speech_threshold"},
			body: map[string]any{"pre_processing": map[string]any{"speech_threshold": 0}}, audio: liveAudio{noise: true},
			compare: map[string]any{"pre_processing": map[string]any{"speech_threshold": 1}},
			check: func(t *testing.T, r, base liveRun) {
				n, m := len(messagesOf(r, "speech_start")), len(messagesOf(base, "speech_start"))
				if n == m && fmt.Sprint(messagesOf(r, "speech_start")) == fmt.Sprint(messagesOf(base, "speech_start")) {
					t.Errorf("the same speech starts at threshold 0 and 1: %v", messagesOf(r, "speech_start"))
				}
			}},
		{name: "custom_vocabulary reaches the engine", fields: []string{"realtime_processing", "realtime_processing.custom_vocabulary", "realtime_processing.custom_vocabulary_config",
			"realtime_processing.custom_vocabulary_config.vocabulary", "realtime_processing.custom_vocabulary_config.vocabulary.value"},
			body:  map[string]any{"realtime_processing": map[string]any{"custom_vocabulary": true, "custom_vocabulary_config": map[string]any{"vocabulary": []any{"turnips", "mutton"}}}},
			check: func(t *testing.T, r, _ liveRun) { note(t, r, "custom_vocabulary", "(2 items)") }},
		{name: "a vocabulary item in another language is left out", fields: []string{"realtime_processing.custom_vocabulary_config.vocabulary.language"},
			body:  map[string]any{"realtime_processing": map[string]any{"custom_vocabulary": true, "custom_vocabulary_config": map[string]any{"vocabulary": []any{"turnips", map[string]any{"value": "mouton", "language": "fr"}}}}},
			check: func(t *testing.T, r, _ liveRun) { note(t, r, "custom_vocabulary", "(1 items)") }},
		{name: "a pronunciation is read", fields: []string{"realtime_processing.custom_vocabulary_config.vocabulary.pronunciations"},
			body:  map[string]any{"realtime_processing": map[string]any{"custom_vocabulary": true, "custom_vocabulary_config": map[string]any{"vocabulary": []any{"turnips", map[string]any{"value": "zorblax", "pronunciations": []string{"QQ XX"}}}}}},
			check: func(t *testing.T, r, _ liveRun) { note(t, r, "custom_vocabulary", "left out") }},
		{name: "intensity decides recognition of a listed word (the same engine wrapper as pre-recorded)",
			fields:   []string{"realtime_processing.custom_vocabulary_config.vocabulary.intensity", "realtime_processing.custom_vocabulary_config.default_intensity"},
			provenBy: "e2e/vocabulary_test.go:TestVocabularyIntensity"},
		{name: "custom_spelling respells finals", fields: []string{"realtime_processing.custom_spelling", "realtime_processing.custom_spelling_config", "realtime_processing.custom_spelling_config.spelling_dictionary"},
			body:  map[string]any{"realtime_processing": spell},
			check: func(t *testing.T, r, _ liveRun) { heard(t, r, "FORWARD") }},
		{name: "translation into each target, with context and register, in messages and the result", fields: []string{"realtime_processing.translation", "realtime_processing.translation_config",
			"realtime_processing.translation_config.target_languages", "realtime_processing.translation_config.context", "realtime_processing.translation_config.informal",
			"realtime_processing.translation_config.context_adaptation"},
			body: map[string]any{"realtime_processing": map[string]any{"translation": true, "translation_config": map[string]any{"target_languages": []string{"fr", "de"}, "context": "robot commands", "informal": true}}},
			check: func(t *testing.T, r, _ liveRun) {
				env := envelopeOK(t, r, "translation")
				res := env["results"].([]any)
				if len(res) != 2 || len(messagesOf(r, "translation")) != 2*len(r.utterances()) {
					t.Fatalf("translation results %v, %d messages for %d utterances", res, len(messagesOf(r, "translation")), len(r.utterances()))
				}
				for i, target := range []string{"fr", "de"} {
					tr := res[i].(map[string]any)
					if fmt.Sprint(tr["languages"]) != "["+target+"]" || len(tr["utterances"].([]any)) != len(r.utterances()) || tr["error"] != nil {
						t.Errorf("translation result %d: %v", i, tr)
					}
				}
				chatWith(t, r, "into French", true)
				chatWith(t, r, "into German", true)
				chatWith(t, r, "Context of the recording: robot commands", true)
				chatWith(t, r, "informal register", true)
			}},
		{name: "context_adaptation false translates without the context", fields: []string{"realtime_processing.translation_config.context_adaptation", "realtime_processing.translation_config.context"},
			body: map[string]any{"realtime_processing": map[string]any{"translation": true, "translation_config": map[string]any{"target_languages": []string{"fr"}, "context": "robot commands", "context_adaptation": false}}},
			check: func(t *testing.T, r, _ liveRun) {
				envelopeOK(t, r, "translation")
				chatWith(t, r, "into French", true)
				chatWith(t, r, "robot commands", false)
			}},
		{name: "match_original_utterances decides a mismatched reply", fields: []string{"realtime_processing.translation_config.match_original_utterances"},
			provenBy: "recognizer/addons/llm/llm_test.go:TestTranslate"},
		{name: "translation model enhanced is refused", fields: []string{"realtime_processing.translation_config.model"},
			body:   map[string]any{"realtime_processing": map[string]any{"translation": true, "translation_config": map[string]any{"target_languages": []string{"fr"}, "model": "enhanced"}}},
			refuse: "realtime_processing.translation_config.model"},
		{name: "translation without lipsync is refused", fields: []string{"realtime_processing.translation_config.lipsync"},
			body:   map[string]any{"realtime_processing": map[string]any{"translation": true, "translation_config": map[string]any{"target_languages": []string{"fr"}, "lipsync": false}}},
			refuse: "realtime_processing.translation_config.lipsync false"},
		{name: "named entities in messages and the result", fields: []string{"realtime_processing.named_entity_recognition"},
			body: map[string]any{"realtime_processing": map[string]any{"named_entity_recognition": true, "custom_spelling": true,
				"custom_spelling_config": map[string]any{"spelling_dictionary": map[string]any{"London": []string{"forward"}}}}},
			check: func(t *testing.T, r, _ liveRun) {
				env := envelopeOK(t, r, "named_entity_recognition")
				var sent []any
				for _, m := range messagesOf(r, "named_entity_recognition") {
					sent = append(sent, m["results"].([]any)...)
				}
				if !strings.Contains(fmt.Sprint(env["results"]), "London") || fmt.Sprint(env["results"]) != fmt.Sprint(sent) {
					t.Errorf("result entities %v, messages' %v", env["results"], sent)
				}
			}},
		{name: "sentiment in messages and the result", fields: []string{"realtime_processing.sentiment_analysis"},
			body: map[string]any{"realtime_processing": map[string]any{"sentiment_analysis": true}},
			check: func(t *testing.T, r, _ liveRun) {
				s, _ := envelopeOK(t, r, "sentiment_analysis")["results"].(string)
				var list []any
				if err := json.Unmarshal([]byte(s), &list); err != nil || len(list) != len(messagesOf(r, "sentiment_analysis")) || len(list) == 0 {
					t.Errorf("sentiment results %q for %d messages", s, len(messagesOf(r, "sentiment_analysis")))
				}
			}},
		{name: "summarization of the asked type and chapters", fields: []string{"post_processing", "post_processing.summarization", "post_processing.summarization_config",
			"post_processing.summarization_config.type", "post_processing.chapterization"},
			body: map[string]any{"post_processing": map[string]any{"summarization": true, "summarization_config": map[string]any{"type": "bullet_points"}, "chapterization": true}},
			check: func(t *testing.T, r, _ liveRun) {
				if s, _ := envelopeOK(t, r, "summarization")["results"].(string); !strings.HasPrefix(s, "- ") {
					t.Errorf("bullet summary %q", s)
				}
				chatWith(t, r, "list of its key points", true)
				envelopeOK(t, r, "chapterization")
				if len(messagesOf(r, "post_summarization")) != 1 || len(messagesOf(r, "post_chapterization")) != 1 {
					t.Errorf("post-processing messages %v", r.types())
				}
			}},
		{name: "messages_config switches select the WebSocket's messages", fields: []string{"messages_config", "messages_config.receive_partial_transcripts",
			"messages_config.receive_final_transcripts", "messages_config.receive_speech_events", "messages_config.receive_realtime_processing_events",
			"messages_config.receive_post_processing_events", "messages_config.receive_acknowledgments", "messages_config.receive_errors", "messages_config.receive_lifecycle_events"},
			body: map[string]any{"realtime_processing": map[string]any{"sentiment_analysis": true}, "messages_config": map[string]any{
				"receive_partial_transcripts": true, "receive_final_transcripts": false, "receive_speech_events": false, "receive_realtime_processing_events": false,
				"receive_post_processing_events": false, "receive_acknowledgments": false, "receive_errors": false, "receive_lifecycle_events": true}},
			compare: map[string]any{"realtime_processing": map[string]any{"sentiment_analysis": true}},
			audio:   liveAudio{oddByte: true},
			check: func(t *testing.T, r, base liveRun) {
				flipped, defaults := r.types(), base.types()
				for typ, on := range map[string]bool{"transcript/partial": true, "transcript/final": false, "speech_start": false, "sentiment_analysis": false,
					"post_final_transcript": false, "audio_chunk": false, "error": false, "end_session": true} {
					if (flipped[typ] > 0) != on || (defaults[typ] > 0) == on {
						t.Errorf("%s: %d with the switch %v, %d with its default", typ, flipped[typ], on, defaults[typ])
					}
				}
			}},
		{name: "receive_pre_processing_events true is refused (no pre-processing events exist here)", fields: []string{"messages_config.receive_pre_processing_events"},
			body: map[string]any{"messages_config": map[string]any{"receive_pre_processing_events": true}}, refuse: "messages_config.receive_pre_processing_events true"},
		{name: "callback_config.receive_pre_processing_events true is refused", fields: []string{"callback_config.receive_pre_processing_events"},
			body: map[string]any{"callback_config": map[string]any{"receive_pre_processing_events": true}}, refuse: "callback_config.receive_pre_processing_events true"},
		{name: "callback_config sends the switched messages with its method", fields: []string{"callback", "callback_config", "callback_config.url", "callback_config.method",
			"callback_config.receive_partial_transcripts", "callback_config.receive_final_transcripts", "callback_config.receive_speech_events",
			"callback_config.receive_realtime_processing_events", "callback_config.receive_post_processing_events", "callback_config.receive_acknowledgments",
			"callback_config.receive_errors", "callback_config.receive_lifecycle_events"},
			body: map[string]any{"realtime_processing": map[string]any{"sentiment_analysis": true}, "callback": true, "callback_config": map[string]any{
				"url": hookURL, "method": "PUT", "receive_partial_transcripts": true, "receive_final_transcripts": false, "receive_speech_events": true,
				"receive_realtime_processing_events": false, "receive_post_processing_events": false, "receive_acknowledgments": true, "receive_errors": true,
				"receive_lifecycle_events": false}},
			compare: map[string]any{"realtime_processing": map[string]any{"sentiment_analysis": true}, "callback": true, "callback_config": map[string]any{"url": hookURL}},
			audio:   liveAudio{oddByte: true},
			check: func(t *testing.T, r, base liveRun) {
				// The default run's end_session comes last: every delivery
				// of both runs was queued before it.
				events := func(id string) (map[string]int, map[string]bool) {
					n, methods := map[string]int{}, map[string]bool{}
					for _, h := range hook.snapshot() {
						var b struct {
							ID, Event string
							Payload   struct {
								Data struct {
									IsFinal *bool `json:"is_final"`
								} `json:"data"`
							} `json:"payload"`
						}
						json.Unmarshal(h.body, &b)
						if b.ID != id {
							continue
						}
						if f := b.Payload.Data.IsFinal; f != nil {
							b.Event += map[bool]string{true: "/final", false: "/partial"}[*f]
						}
						n[b.Event]++
						methods[h.method] = true
					}
					return n, methods
				}
				switches := map[string]bool{"live.transcript/partial": true, "live.transcript/final": false, "live.speech_start": true, "live.sentiment_analysis": false,
					"live.post_final_transcript": false, "live.audio_chunk": true, "live.error": true, "live.start_session": false}
				// Deliveries have no order: wait until every message a
				// switch turns on has arrived from the run that has it on
				// (the default run's end_session too), then check that no
				// run got a message its switch turns off.
				arrived := func() bool {
					flipped, _ := events(r.job["id"].(string))
					defaults, _ := events(base.job["id"].(string))
					if defaults["live.end_session"] == 0 {
						return false
					}
					for ev, on := range switches {
						if on && flipped[ev] == 0 || !on && defaults[ev] == 0 {
							return false
						}
					}
					return true
				}
				deadline := time.Now().Add(2 * time.Minute)
				for !arrived() && time.Now().Before(deadline) {
					select {
					case <-hook.hit:
					case <-time.After(time.Until(deadline)):
					}
				}
				flipped, methods := events(r.job["id"].(string))
				defaults, _ := events(base.job["id"].(string))
				if !methods["PUT"] || len(methods) != 1 {
					t.Errorf("callback methods %v, want PUT", methods)
				}
				for ev, on := range switches {
					if (flipped[ev] > 0) != on || (defaults[ev] > 0) == on {
						t.Errorf("%s: %d with the switch %v, %d with its default", ev, flipped[ev], on, defaults[ev])
					}
				}
			}},
		{name: "custom_metadata is attached to the job", fields: []string{"custom_metadata"}, body: map[string]any{"custom_metadata": map[string]any{"ticket": "T-9"}},
			check: func(t *testing.T, r, _ liveRun) {
				if fmt.Sprint(r.job["custom_metadata"]) != "map[ticket:T-9]" {
					t.Errorf("custom_metadata %v", r.job["custom_metadata"])
				}
			}},
		{name: "revised_transcript messages replace each decoder segment's finals, by their switches (off by default: nothing decoded again)",
			fields:   []string{"messages_config.receive_revised_transcripts", "callback_config.receive_revised_transcripts"},
			provenBy: "daemon/live/revise_test.go:TestRevisedTranscripts"},
		{name: "dtmf messages on a call, masked (pci.mask_dtmf) or not, by its switches", fields: []string{"messages_config.receive_dtmf_events", "callback_config.receive_dtmf_events", "pci.mask_dtmf"},
			provenBy: "e2e/sipdtmf_test.go:TestSIPDTMFInfo"},
		{name: "pci.pause_sequence and resume_sequence pause a call by its keys", fields: []string{"pci.pause_sequence", "pci.resume_sequence"},
			provenBy: "e2e/sipdtmf_test.go:TestSIPPauseByDTMF"},
		{name: "pci.inband_dtmf: keys sent as tones in a call's audio are dtmf messages, the tones silenced in the recording (or kept, off)", fields: []string{"pci.inband_dtmf"},
			provenBy: "e2e/sipinband_test.go:TestSIPInbandDTMFBaresip"},
		{name: "pii_redaction masks the asked types in every message and the result",
			fields: []string{"pii_redaction", "pii_redaction_config", "pii_redaction_config.entity_types", "pii_redaction_config.processed_text_type"},
			body: map[string]any{"pii_redaction": true, "pii_redaction_config": map[string]any{"entity_types": []string{"LOCATION"}, "processed_text_type": "MASK"},
				"messages_config":     map[string]any{"receive_partial_transcripts": true},
				"realtime_processing": map[string]any{"custom_spelling": true, "custom_spelling_config": map[string]any{"spelling_dictionary": map[string]any{"London": []string{"forward"}}}}},
			compare: map[string]any{"messages_config": map[string]any{"receive_partial_transcripts": true},
				"realtime_processing": map[string]any{"custom_spelling": true, "custom_spelling_config": map[string]any{"spelling_dictionary": map[string]any{"London": []string{"forward"}}}}},
			check: func(t *testing.T, r, base liveRun) {
				res, _ := json.Marshal(r.result) // request_params hold the spelling dictionary
				if i := strings.Index(string(res), "London"); i >= 0 {
					t.Errorf("the record holds London: ...%s...", res[max(0, i-200):min(len(res), i+50)])
				}
				masked := false
				for _, m := range r.msgs {
					if strings.Contains(string(m.raw), "London") {
						t.Errorf("a %s message holds London: %s", m.Type, m.raw)
					}
					masked = masked || m.Type == "transcript" && strings.Contains(string(m.raw), `"******"`)
				}
				if b, _ := json.Marshal(base.result); !masked || !strings.Contains(string(b), "London") {
					t.Errorf("no transcript masks the place (%v), or the same audio without pii_redaction has none", masked)
				}
			}},
		{name: "pii_redaction_config.audio blanks the recording", fields: []string{"pii_redaction_config.audio"},
			provenBy: "e2e/pii_audio_test.go:TestPIIAudioRedactionLive"},
		{name: "pci.start_paused records and recognises silence until a resume (none comes)", fields: []string{"pci", "pci.start_paused"},
			body: map[string]any{"pci": map[string]any{"start_paused": true}}, compare: map[string]any{},
			check: func(t *testing.T, r, base liveRun) {
				spans, _ := r.psm["paused_intervals"].([]any)
				if len(spans) != 1 || fmt.Sprint(spans[0]) != fmt.Sprintf("map[end:%v start:0]", r.job["file"].(map[string]any)["audio_duration"]) {
					t.Errorf("paused_intervals %v, want the whole session", r.psm["paused_intervals"])
				}
				if n := r.types()["transcript/final"]; n != 0 || len(r.utterances()) != 0 {
					t.Errorf("%d finals and %d utterances of a session paused throughout", n, len(r.utterances()))
				}
				if base.types()["transcript/final"] == 0 || base.psm["paused_intervals"] != nil {
					t.Errorf("the same audio unpaused: %v, paused_intervals %v", base.types(), base.psm["paused_intervals"])
				}
			}},
	}
}

// snapshot is every callback received so far.
func (c *callbackReceiver) snapshot() []callbackHit {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]callbackHit(nil), c.got...)
}
