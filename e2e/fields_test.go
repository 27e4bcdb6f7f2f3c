package e2e

import (
	"fmt"
	"net"
	"net/http"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/earshot-dev/earshot/params"
	"github.com/earshot-dev/earshot/recognizer/recognizertest"
)

// requestFields lists the field paths of t as params decodes them (JSON
// names, nested config objects as "parent.child", array items as their
// array's path, embedded structs flattened): what POST /v2/pre-recorded
// and POST /v2/live accept.
func requestFields(t reflect.Type, prefix string, out *[]string) {
	for t.Kind() == reflect.Pointer || t.Kind() == reflect.Slice {
		t = t.Elem()
	}
	if t.Kind() != reflect.Struct {
		return
	}
	for i := range t.NumField() {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if f.Anonymous && name == "" { // flattened into its parent, as JSON does
			requestFields(f.Type, prefix, out)
			continue
		}
		if name == "" || name == "-" {
			continue
		}
		*out = append(*out, prefix+name)
		requestFields(f.Type, prefix+name+".", out)
	}
}

// fieldRun is what a case's check reads: the finished job and what the
// daemon sent out while running it.
type fieldRun struct {
	job, result, transcription map[string]any
	psm                        map[string]any // post_session_metadata
	chat                       []chatReq      // requests to the LLM backend
	audioURL                   string
}

func (r fieldRun) utterances() []map[string]any {
	var out []map[string]any
	for _, u := range r.transcription["utterances"].([]any) {
		out = append(out, u.(map[string]any))
	}
	return out
}

func (r fieldRun) subtitles(format string) string {
	for _, s := range r.transcription["subtitles"].([]any) {
		if s := s.(map[string]any); s["format"] == format {
			return s["subtitles"].(string)
		}
	}
	return ""
}

// fieldCase shows what some request fields do: a job run with body (plus
// audio_url) and check on its outcome; or, with refuse set, the 422 whose
// message names the field and why; or, with provenBy set, the test (file
// and function) that shows the effect where a short job cannot.
type fieldCase struct {
	name     string
	fields   []string
	audio    string // a clip name, or "two-speakers-short" (turnsFile of shortTurns) / "stereo"; default the "go forward" clip
	body     map[string]any
	refuse   string
	provenBy string
	check    func(t *testing.T, r fieldRun)
}

var cueTime = regexp.MustCompile(`(\d+):(\d+):(\d+)[.,](\d+) --> (\d+):(\d+):(\d+)[.,](\d+)`)

// cue is one caption of an SRT or VTT file.
type cue struct {
	start, end float64
	rows       []string
}

// cues reads the captions of an SRT or VTT file.
func cues(file string) []cue {
	secs := func(m []string) float64 {
		h, _ := strconv.Atoi(m[0])
		mi, _ := strconv.Atoi(m[1])
		s, _ := strconv.Atoi(m[2])
		ms, _ := strconv.Atoi(m[3])
		return float64(h*3600+mi*60+s) + float64(ms)/1000
	}
	var out []cue
	for _, block := range strings.Split(strings.ReplaceAll(file, "\r\n", "\n"), "\n\n") {
		ls := strings.Split(strings.TrimSpace(block), "\n")
		for i, l := range ls {
			if m := cueTime.FindStringSubmatch(l); m != nil {
				out = append(out, cue{secs(m[1:5]), secs(m[5:9]), ls[i+1:]})
				break
			}
		}
	}
	return out
}

// startHookReceiver serves a callbackReceiver on a local port for the
// test's life and returns it with its URL.
func startHookReceiver(t *testing.T) (*callbackReceiver, string) {
	t.Helper()
	hook := &callbackReceiver{hit: make(chan struct{}, 1)}
	hookLn, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	hookSrv := &http.Server{Handler: hook}
	go hookSrv.Serve(hookLn)
	t.Cleanup(func() { hookSrv.Close() })
	return hook, "http://" + hookLn.Addr().String() + "/hook"
}

// caseFields is one field case's name and the request fields it covers.
type caseFields struct {
	name   string
	fields []string
}

// checkFieldCoverage fails the test for a case naming a field the request
// type req does not accept, and for an accepted field no case covers
// (covered lists fields other tests cover); route names the endpoint in
// the message, or is empty.
func checkFieldCoverage(t *testing.T, req reflect.Type, route string, cases []caseFields, covered map[string]bool) {
	t.Helper()
	var accepted []string
	requestFields(req, "", &accepted)
	for _, c := range cases {
		for _, f := range c.fields {
			if !slices.Contains(accepted, f) {
				t.Errorf("case %q names %s, which params does not accept", c.name, f)
			}
			covered[f] = true
		}
	}
	for _, f := range accepted {
		if !covered[f] {
			t.Errorf("params accepts %s%s, and no case shows what it does (add one, or refuse it with 422)", f, route)
		}
	}
}

// TestEveryRequestField walks every field POST /v2/pre-recorded accepts
// (SPEC 2.4, the config objects of 2.6 and 2.7) through the real daemon and
// shows its effect on the result, or its 422. It fails when params accepts
// a field no case covers: a field is never accepted and ignored.
func TestEveryRequestField(t *testing.T) {
	chat := newChatStandIn(t)
	hook, hookURL := startHookReceiver(t)

	d := startDaemon(t, "", fmt.Sprintf("addons:\n  llm:\n    url: %s/v1\n    model: stand-in-model\n    timeout: 10s\n    retries: -1\n", chat.srv.URL))
	key := createKey(t, d.DataDir, "acme")

	cases := fieldCases(hookURL, hook)
	// Every accepted field has a case, and every case names real fields.
	var named []caseFields
	for _, c := range cases {
		named = append(named, caseFields{c.name, c.fields})
	}
	checkFieldCoverage(t, reflect.TypeOf(params.PreRecorded{}), "", named, map[string]bool{})

	files := map[string]string{}
	upload := func(t *testing.T, audio string) string {
		if u, ok := files[audio]; ok {
			return u
		}
		var path string
		switch audio {
		case "two-speakers-short":
			path, _ = turnsFile(t, shortTurns)
		case "stereo":
			path = stereoFile(t)
		case "":
			path, _ = clip(t, "pocketsphinx-goforward.wav")
		default:
			path, _ = clip(t, audio)
		}
		status, up, b := d.upload(key, path)
		if status != 200 {
			t.Fatalf("upload: %d %s", status, b)
		}
		files[audio] = up.AudioURL
		return up.AudioURL
	}

	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if c.provenBy != "" {
				checkProvenBy(t, c.provenBy, c.fields)
				return
			}
			audioURL := upload(t, c.audio)
			body := map[string]any{"audio_url": audioURL}
			for k, v := range c.body {
				body[k] = v
			}
			var created struct{ ID string }
			status, b := d.postJSON("/v2/pre-recorded", key, body, &created)
			if c.refuse != "" {
				if status != 422 || !strings.Contains(string(b), c.refuse) {
					t.Fatalf("got %d %s; want 422 saying %q", status, b, c.refuse)
				}
				return
			}
			if status != 201 {
				t.Fatalf("POST: %d %s", status, b)
			}
			before := len(chat.requests())
			job := d.waitJob(key, created.ID, 2*time.Minute)
			if job["status"] != "done" {
				t.Fatalf("job %v", job)
			}
			r := fieldRun{job: job, audioURL: audioURL, chat: chat.requests()[before:]}
			r.result = job["result"].(map[string]any)
			r.transcription = r.result["transcription"].(map[string]any)
			r.psm, _ = job["post_session_metadata"].(map[string]any)
			c.check(t, r)
		})
	}
}

// stereoFile has a different clip on each channel.
func stereoFile(t *testing.T) string {
	t.Helper()
	a, _ := clip(t, "pocketsphinx-goforward.wav")
	b, _ := clip(t, "ljspeech-LJ001-0002.wav")
	l, r := recognizertest.ReadWAV16(t, a)[0], recognizertest.ReadWAV16(t, b)[0]
	n := max(len(l), len(r))
	pcm := make([]int16, 2*n)
	for i := range n {
		if i < len(l) {
			pcm[2*i] = l[i]
		}
		if i < len(r) {
			pcm[2*i+1] = r[i]
		}
	}
	path := t.TempDir() + "/stereo.wav"
	writeWAV16(t, path, 2, pcm)
	return path
}

func speakers(r fieldRun) map[float64]bool {
	seen := map[float64]bool{}
	for _, u := range r.utterances() {
		if s, ok := u["speaker"].(float64); ok {
			seen[s] = true
		}
	}
	return seen
}

func fieldCases(hookURL string, hook *callbackReceiver) []fieldCase {
	envelopeOK := func(t *testing.T, r fieldRun, name string) map[string]any {
		t.Helper()
		env, _ := r.result[name].(map[string]any)
		if env == nil || env["success"] != true {
			t.Fatalf("%s: %v", name, r.result[name])
		}
		return env
	}
	note := func(t *testing.T, r fieldRun, key, want string) {
		t.Helper()
		if s, _ := r.psm[key].(string); !strings.Contains(s, want) {
			t.Errorf("post_session_metadata.%s = %q, want it to say %q (all: %v)", key, s, want, r.psm)
		}
	}
	chatWith := func(t *testing.T, r fieldRun, part string, want bool) {
		t.Helper()
		found := slices.ContainsFunc(r.chat, func(c chatReq) bool { return strings.Contains(c.System+"\n"+c.User, part) })
		if found != want {
			t.Errorf("LLM requests containing %q: %v, want %v (%+v)", part, found, want, r.chat)
		}
	}
	spell := map[string]any{"custom_spelling": true, "custom_spelling_config": map[string]any{"spelling_dictionary": map[string]any{"FORWARD": []string{"forward"}}}}
	merge := func(ms ...map[string]any) map[string]any {
		out := map[string]any{}
		for _, m := range ms {
			for k, v := range m {
				out[k] = v
			}
		}
		return out
	}
	longClip := "ljspeech-LJ001-0001.wav"
	return []fieldCase{
		{name: "audio_url is what is transcribed", fields: []string{"audio_url"}, check: func(t *testing.T, r fieldRun) {
			if f := r.job["file"].(map[string]any); f["audio_duration"].(float64) < 2 || !strings.Contains(r.transcription["full_transcript"].(string), "forward") {
				t.Errorf("file %v, transcript %q", f, r.transcription["full_transcript"])
			}
		}},
		{name: "audio_url of another scheme is refused", fields: []string{"audio_url"}, body: map[string]any{"audio_url": "ftp://files.local/a.wav"}, refuse: `audio_url scheme \"ftp\" is not supported`},
		{name: "model-3 runs with one of its languages", fields: []string{"model"}, body: map[string]any{"model": "model-3", "language_config": map[string]any{"languages": []string{"en"}}},
			check: func(t *testing.T, r fieldRun) {
				if r.job["request_params"].(map[string]any)["model"] != "model-3" || r.psm["engine"] != "sphinx" {
					t.Errorf("request_params %v, engine %v", r.job["request_params"], r.psm["engine"])
				}
			}},
		{name: "model-3 without one language is refused", fields: []string{"model"}, body: map[string]any{"model": "model-3"}, refuse: "model-3 needs language_config.languages"},
		{name: "custom_vocabulary reaches the engine", fields: []string{"custom_vocabulary", "custom_vocabulary_config", "custom_vocabulary_config.vocabulary", "custom_vocabulary_config.vocabulary.value"},
			body: map[string]any{"custom_vocabulary": true, "custom_vocabulary_config": map[string]any{"vocabulary": []any{"turnips", "mutton"}}},
			check: func(t *testing.T, r fieldRun) {
				note(t, r, "custom_vocabulary", "dictionary and language model (2 items)")
			}},
		{name: "a vocabulary item in another language is left out", fields: []string{"custom_vocabulary_config.vocabulary.language"},
			body:  map[string]any{"custom_vocabulary": true, "custom_vocabulary_config": map[string]any{"vocabulary": []any{"turnips", map[string]any{"value": "mouton", "language": "fr"}}}},
			check: func(t *testing.T, r fieldRun) { note(t, r, "custom_vocabulary", "(1 items)") }},
		{name: "a pronunciation is read", fields: []string{"custom_vocabulary_config.vocabulary.pronunciations"},
			body:  map[string]any{"custom_vocabulary": true, "custom_vocabulary_config": map[string]any{"vocabulary": []any{"turnips", map[string]any{"value": "zorblax", "pronunciations": []string{"QQ XX"}}}}},
			check: func(t *testing.T, r fieldRun) { note(t, r, "custom_vocabulary", "left out") }},
		{name: "intensity decides recognition of a listed word", fields: []string{"custom_vocabulary_config.vocabulary.intensity", "custom_vocabulary_config.default_intensity"},
			provenBy: "e2e/vocabulary_test.go:TestVocabularyIntensity"},
		{name: "callback_url receives the result", fields: []string{"callback_url"}, body: map[string]any{"callback_url": hookURL},
			check: func(t *testing.T, r fieldRun) {
				hits := hook.wait(t, 1, time.Minute)
				if !strings.Contains(string(hits[len(hits)-1].body), r.job["id"].(string)) || hits[len(hits)-1].method != "POST" {
					t.Errorf("callback %s %s", hits[len(hits)-1].method, hits[len(hits)-1].body)
				}
			}},
		{name: "callback_config sends with its method", fields: []string{"callback", "callback_config", "callback_config.url", "callback_config.method"},
			body: map[string]any{"callback": true, "callback_config": map[string]any{"url": hookURL, "method": "PUT"}},
			check: func(t *testing.T, r fieldRun) {
				hits := hook.wait(t, 2, time.Minute)
				if !strings.Contains(string(hits[len(hits)-1].body), r.job["id"].(string)) || hits[len(hits)-1].method != "PUT" {
					t.Errorf("callback %s %s", hits[len(hits)-1].method, hits[len(hits)-1].body)
				}
			}},
		{name: "subtitles in the asked formats", fields: []string{"subtitles", "subtitles_config", "subtitles_config.formats"},
			body: map[string]any{"subtitles": true, "subtitles_config": map[string]any{"formats": []string{"vtt"}}},
			check: func(t *testing.T, r fieldRun) {
				if subs := r.transcription["subtitles"].([]any); len(subs) != 1 || !strings.HasPrefix(r.subtitles("vtt"), "WEBVTT") {
					t.Errorf("subtitles %v", subs)
				}
			}},
		{name: "captions last at most maximum_duration", fields: []string{"subtitles_config.maximum_duration"}, audio: longClip,
			body: map[string]any{"subtitles": true, "subtitles_config": map[string]any{"maximum_duration": 1}},
			check: func(t *testing.T, r fieldRun) {
				cs := cues(r.subtitles("srt"))
				for _, c := range cs {
					if c.end-c.start > 1.001 {
						t.Errorf("cue %+v lasts over 1 s", c)
					}
				}
				if len(cs) < 3 {
					t.Errorf("cues %+v", cs)
				}
			}},
		{name: "captions stay at least minimum_duration", fields: []string{"subtitles_config.minimum_duration"}, audio: longClip,
			body: map[string]any{"subtitles": true, "subtitles_config": map[string]any{"minimum_duration": 2.5, "maximum_duration": 3}},
			check: func(t *testing.T, r fieldRun) {
				srt := r.subtitles("srt")
				cs := cues(srt)
				if len(cs) < 2 {
					t.Fatalf("cues %q", srt)
				}
				// A caption shorter than the minimum is held until the
				// next one starts.
				for i, c := range cs[:len(cs)-1] {
					if c.end-c.start < 2.499 && cs[i+1].start-c.end > 0.001 {
						t.Errorf("cue %+v is shorter than 2.5 s and the next starts at %.3f", c, cs[i+1].start)
					}
				}
			}},
		{name: "rows hold at most maximum_characters_per_row, captions maximum_rows_per_caption", audio: longClip,
			fields: []string{"subtitles_config.maximum_characters_per_row", "subtitles_config.maximum_rows_per_caption"},
			body:   map[string]any{"subtitles": true, "subtitles_config": map[string]any{"maximum_characters_per_row": 12, "maximum_rows_per_caption": 1}},
			check: func(t *testing.T, r fieldRun) {
				for _, c := range cues(r.subtitles("srt")) {
					if ls := c.rows; len(ls) != 1 || utf8.RuneCountInString(ls[0]) > 12 && strings.Contains(ls[0], " ") {
						t.Errorf("cue rows %q, want one row of at most 12 characters (or one longer word)", ls)
					}
				}
			}},
		{name: "rows under 10 characters are refused", fields: []string{"subtitles_config.maximum_characters_per_row"},
			body: map[string]any{"subtitles": true, "subtitles_config": map[string]any{"maximum_characters_per_row": 9}}, refuse: "subtitles_config.maximum_characters_per_row 9 is below 10"},
		{name: "captions under half a second are refused", fields: []string{"subtitles_config.maximum_duration"},
			body: map[string]any{"subtitles": true, "subtitles_config": map[string]any{"maximum_duration": 0.4}}, refuse: "subtitles_config.maximum_duration 0.4 is below 0.5 s"},
		{name: "style compliance caps rows at 42 characters", fields: []string{"subtitles_config.style"}, audio: longClip,
			body: map[string]any{"subtitles": true, "subtitles_config": map[string]any{"style": "compliance", "maximum_characters_per_row": 100, "maximum_rows_per_caption": 1}},
			check: func(t *testing.T, r fieldRun) {
				for _, c := range cues(r.subtitles("srt")) {
					for _, l := range c.rows {
						if utf8.RuneCountInString(l) > 42 {
							t.Errorf("compliance row %q over 42 characters", l)
						}
					}
				}
			}},
		// TestAddons/pre-recorded asks diarization on the two-speaker file and
		// holds it to exactly two speakers, its envelope to success and its
		// labels to a diarization error of at most maxE2EDiarizationError: the
		// same check as this case made on the same file, and more.
		{name: "diarization labels two voices", fields: []string{"diarization"}, provenBy: "e2e/addons_test.go:TestAddons"},
		{name: "number_of_speakers and max_speakers bound the voices", audio: "two-speakers-short",
			fields: []string{"diarization_config", "diarization_config.number_of_speakers", "diarization_config.max_speakers"},
			body:   map[string]any{"diarization": true, "diarization_config": map[string]any{"number_of_speakers": 1, "max_speakers": 1}},
			check: func(t *testing.T, r fieldRun) {
				if n := len(speakers(r)); n != 1 {
					t.Errorf("%d speakers, want 1", n)
				}
			}},
		{name: "min_speakers raises the voices", audio: "two-speakers-short", fields: []string{"diarization_config.min_speakers"},
			body: map[string]any{"diarization": true, "diarization_config": map[string]any{"min_speakers": 3}},
			check: func(t *testing.T, r fieldRun) {
				if n := len(speakers(r)); n < 3 {
					t.Errorf("%d speakers, want at least 3", n)
				}
			}},
		{name: "speaker counts on distinct channels are reported unused", audio: "stereo", fields: []string{"diarization_config.number_of_speakers"},
			body: map[string]any{"diarization": true, "diarization_config": map[string]any{"number_of_speakers": 3}},
			check: func(t *testing.T, r fieldRun) {
				note(t, r, "diarization_config", "speaker counts not used")
				if n := len(speakers(r)); n != 2 {
					t.Errorf("%d speakers, want one per channel", n)
				}
			}},
		{name: "translation into each target language, with context and register", fields: []string{"translation", "translation_config", "translation_config.target_languages",
			"translation_config.context", "translation_config.informal", "translation_config.context_adaptation"},
			body: map[string]any{"translation": true, "translation_config": map[string]any{"target_languages": []string{"fr", "de"}, "context": "robot commands", "informal": true}},
			check: func(t *testing.T, r fieldRun) {
				env := envelopeOK(t, r, "translation")
				if res := env["results"].([]any); len(res) != 2 {
					t.Errorf("translation results %v", res)
				}
				chatWith(t, r, "into French", true)
				chatWith(t, r, "into German", true)
				chatWith(t, r, "Context of the recording: robot commands", true)
				chatWith(t, r, "informal register", true)
			}},
		{name: "context_adaptation false translates without the context", fields: []string{"translation_config.context_adaptation", "translation_config.context"},
			body: map[string]any{"translation": true, "translation_config": map[string]any{"target_languages": []string{"fr"}, "context": "robot commands", "context_adaptation": false}},
			check: func(t *testing.T, r fieldRun) {
				envelopeOK(t, r, "translation")
				chatWith(t, r, "into French", true)
				chatWith(t, r, "robot commands", false)
				chatWith(t, r, "informal register", false)
			}},
		{name: "match_original_utterances decides a mismatched reply", fields: []string{"translation_config.match_original_utterances"},
			provenBy: "recognizer/addons/llm/llm_test.go:TestTranslate"},
		{name: "translation model enhanced is refused", fields: []string{"translation_config.model"},
			body: map[string]any{"translation": true, "translation_config": map[string]any{"target_languages": []string{"fr"}, "model": "enhanced"}}, refuse: "translation_config.model"},
		{name: "translation without lipsync is refused", fields: []string{"translation_config.lipsync"},
			body: map[string]any{"translation": true, "translation_config": map[string]any{"target_languages": []string{"fr"}, "lipsync": false}}, refuse: "translation_config.lipsync false"},
		{name: "summarization of the asked type", fields: []string{"summarization", "summarization_config", "summarization_config.type"},
			body: map[string]any{"summarization": true, "summarization_config": map[string]any{"type": "bullet_points"}},
			check: func(t *testing.T, r fieldRun) {
				env := envelopeOK(t, r, "summarization")
				chatWith(t, r, "list of its key points", true)
				if s, _ := env["results"].(string); !strings.HasPrefix(s, "- ") {
					t.Errorf("bullet summary %q", s)
				}
			}},
		{name: "named_entity_recognition", fields: []string{"named_entity_recognition"}, body: merge(spell, map[string]any{"named_entity_recognition": true,
			"custom_spelling_config": map[string]any{"spelling_dictionary": map[string]any{"London": []string{"forward"}}}}),
			check: func(t *testing.T, r fieldRun) {
				env := envelopeOK(t, r, "named_entity_recognition")
				if !strings.Contains(fmt.Sprint(env["results"]), "London") {
					t.Errorf("entities %v", env["results"])
				}
			}},
		{name: "custom_spelling respells", fields: []string{"custom_spelling", "custom_spelling_config", "custom_spelling_config.spelling_dictionary"}, body: spell,
			check: func(t *testing.T, r fieldRun) {
				if s := r.transcription["full_transcript"].(string); !strings.Contains(s, "FORWARD") {
					t.Errorf("transcript %q", s)
				}
			}},
		{name: "sentiment_analysis", fields: []string{"sentiment_analysis"}, body: map[string]any{"sentiment_analysis": true},
			check: func(t *testing.T, r fieldRun) {
				if s, _ := envelopeOK(t, r, "sentiment_analysis")["results"].(string); !strings.Contains(s, `"sentiment"`) {
					t.Errorf("sentiment %q", s)
				}
			}},
		{name: "audio_to_llm answers each prompt with the asked model", fields: []string{"audio_to_llm", "audio_to_llm_config", "audio_to_llm_config.prompts", "audio_to_llm_config.model"},
			body: map[string]any{"audio_to_llm": true, "audio_to_llm_config": map[string]any{"prompts": []string{"What is the command?"}, "model": "asked-model"}},
			check: func(t *testing.T, r fieldRun) {
				env := envelopeOK(t, r, "audio_to_llm")
				if !strings.Contains(fmt.Sprint(env["results"]), "answer to What is the command?") ||
					!slices.ContainsFunc(r.chat, func(c chatReq) bool { return c.Model == "asked-model" }) {
					t.Errorf("audio_to_llm %v, requests %+v", env["results"], r.chat)
				}
			}},
		{name: "pii_redaction masks the asked types", fields: []string{"pii_redaction", "pii_redaction_config", "pii_redaction_config.entity_types", "pii_redaction_config.processed_text_type"},
			body: merge(spell, map[string]any{"pii_redaction": true, "pii_redaction_config": map[string]any{"entity_types": []string{"LOCATION"}, "processed_text_type": "MASK"},
				"custom_spelling_config": map[string]any{"spelling_dictionary": map[string]any{"London": []string{"forward"}}}}),
			check: func(t *testing.T, r fieldRun) {
				envelopeOK(t, r, "pii_redaction")
				if s := r.transcription["full_transcript"].(string); strings.Contains(s, "London") || !strings.Contains(s, "******") {
					t.Errorf("transcript %q, want the place masked", s)
				}
			}},
		{name: "pii_redaction_config.audio blanks the redacted words in the stored audio", fields: []string{"pii_redaction_config.audio"},
			provenBy: "e2e/pii_audio_test.go:TestPIIAudioRedactionPreRecorded"},
		{name: "custom_metadata is attached to the job", fields: []string{"custom_metadata"}, body: map[string]any{"custom_metadata": map[string]any{"ticket": "T-7"}},
			check: func(t *testing.T, r fieldRun) {
				if fmt.Sprint(r.job["custom_metadata"]) != "map[ticket:T-7]" {
					t.Errorf("custom_metadata %v", r.job["custom_metadata"])
				}
			}},
		{name: "sentences", fields: []string{"sentences"}, body: map[string]any{"sentences": true},
			check: func(t *testing.T, r fieldRun) {
				if res, _ := envelopeOK(t, r, "sentences")["results"].([]any); len(res) == 0 {
					t.Errorf("sentences %v", res)
				}
			}},
		{name: "punctuation_enhanced", fields: []string{"punctuation_enhanced"}, body: map[string]any{"punctuation_enhanced": true},
			check: func(t *testing.T, r fieldRun) {
				if s := r.transcription["full_transcript"].(string); !strings.HasPrefix(s, "Go") || !strings.HasSuffix(s, ".") {
					t.Errorf("transcript %q, want a capital and a full stop", s)
				}
			}},
		{name: "language_config.languages sets the language", fields: []string{"language_config", "language_config.languages"},
			body: map[string]any{"language_config": map[string]any{"languages": []string{"en"}}},
			check: func(t *testing.T, r fieldRun) {
				if fmt.Sprint(r.transcription["languages"]) != "[en]" {
					t.Errorf("languages %v", r.transcription["languages"])
				}
			}},
		{name: "a language no engine serves is refused", fields: []string{"language_config.languages"},
			body: map[string]any{"language_config": map[string]any{"languages": []string{"de"}}}, refuse: "language_config.languages de is not served"},
		{name: "code_switching keeps or follows the detected language", fields: []string{"language_config.code_switching"},
			provenBy: "e2e/engines_test.go:TestRemoteEngineCodeSwitching"},
	}
}
