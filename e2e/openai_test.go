package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"mime/multipart"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/earshot-dev/earshot/recognizer/recognizertest"
	"github.com/earshot-dev/earshot/recognizer/sphinx/telmodel"
)

// openAIModules is where the official openai npm package is installed
// (make test-deps: bin/e2e-node, like playwright-core;
// $EARSHOT_NODE_MODULES overrides); the test skips without it or node.
func openAIModules(t *testing.T) (node, modules string) {
	t.Helper()
	modules = os.Getenv("EARSHOT_NODE_MODULES")
	if modules == "" {
		modules, _ = filepath.Abs("../bin/e2e-node/node_modules")
	}
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("needs node (make test-deps)")
	}
	if _, err := os.Stat(filepath.Join(modules, "openai", "package.json")); err != nil {
		t.Skipf("needs the openai npm package in %s (make test-deps)", modules)
	}
	return node, modules
}

// oaiClientRun is what testdata/openai_client.cjs printed.
type oaiClientRun struct {
	Models []struct{ ID, Object, OwnedBy string }
	Model  struct{ ID, Object string }
	JSON   struct {
		Text  string
		Usage struct {
			Type    string
			Seconds int
		}
	}
	Text, SRT, VTT string
	Verbose        oaiVerbose
	Events         []struct{ Type, Delta, Text string }
	Translation    struct{ Text string }
	TranslationV   oaiVerbose `json:"translation_verbose"`
	WrongKey       oaiRefusal `json:"wrong_key"`
	BadFormat      oaiRefusal `json:"bad_format"`
	BadModel       oaiRefusal `json:"bad_model"`
}

type oaiVerbose struct {
	Task, Language, Text string
	Duration             float64
	Segments             []struct {
		ID               int
		Start, End       float64
		Text             string
		AvgLogprob       float64 `json:"avg_logprob"`
		CompressionRatio float64 `json:"compression_ratio"`
	}
	Words []struct {
		Word       string
		Start, End float64
	}
}

// oaiRefusal is an APIError of the openai package: its status, its
// class and the error object of the body.
type oaiRefusal struct {
	Status any
	Name   string
	Error  oaiErrorObject
}

type oaiErrorObject struct {
	Message, Type string
	Param, Code   *string
}

// TestOpenAIClient drives the /v1 door with the official openai npm
// package (baseURL pointed at the daemon, nothing else changed): the
// model list, a transcription in every response format and streamed,
// translations into English through the LLM backend (the chat stand-in
// speaking the real protocol), and refusals in OpenAI's error shape; the
// /v1 transcript of a LibriSpeech clip has the WER of the same clip's
// /v2/pre-recorded job. Each /v1 request is a pre-recorded job of the
// caller's account; refused ones store nothing.
func TestOpenAIClient(t *testing.T) {
	node, modules := openAIModules(t)
	chat := newChatStandIn(t)
	d := startDaemon(t, "", telephoneModel(t)+fmt.Sprintf("limits:\n  max_upload_bytes: 400000\naddons:\n  llm:\n    url: %s/v1\n    model: stand-in-model\n    timeout: 10s\n    retries: -1\n", chat.srv.URL))
	key := createKey(t, d.DataDir, "acme")
	long, ref := clip(t, "ls-test-clean-1089-134686-0000.wav")
	short, shortRef := clip(t, "pocketsphinx-goforward.wav")

	v2 := submit(t, d, key, long, func(url string) map[string]any {
		return map[string]any{"audio_url": url, "language_config": map[string]any{"languages": []string{"en"}}}
	})
	v2Text := transcriptionOf(v2)["full_transcript"].(string)

	ctx, cancel := context.WithTimeout(t.Context(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, "testdata/openai_client.cjs", d.Base, key, long, short)
	cmd.Env = append(os.Environ(), "NODE_PATH="+modules)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("openai client: %v\n%s", err, stderr.String())
	}
	var run oaiClientRun
	if err := json.Unmarshal(out, &run); err != nil {
		t.Fatalf("openai client printed %.500s: %v", out, err)
	}

	t.Run("models", func(t *testing.T) {
		ids := map[string]bool{}
		for _, m := range run.Models {
			ids[m.ID] = m.Object == "model"
		}
		for _, want := range []string{"whisper-1", "gpt-4o-transcribe", "gpt-4o-mini-transcribe", "model-1"} {
			if !ids[want] {
				t.Errorf("models.list has no %s: %+v", want, run.Models)
			}
		}
		if run.Model.ID != "whisper-1" || run.Model.Object != "model" {
			t.Errorf("models.retrieve: %+v", run.Model)
		}
	})

	t.Run("json: the WER of /v2", func(t *testing.T) {
		w1, w2 := recognizertest.WER(ref, run.JSON.Text), recognizertest.WER(ref, v2Text)
		t.Logf("WER /v1 %.3f %q, /v2 %.3f %q", w1, run.JSON.Text, w2, v2Text)
		if w1 != w2 || run.JSON.Text != v2Text {
			t.Errorf("/v1 WER %.3f (%q) != /v2 WER %.3f (%q)", w1, run.JSON.Text, w2, v2Text)
		}
		if w1 > werLibriSpeech {
			t.Errorf("WER %.3f > %.2f", w1, werLibriSpeech)
		}
		if run.JSON.Usage.Type != "duration" || run.JSON.Usage.Seconds != 11 {
			t.Errorf("usage %+v, want duration 11 s (10.44 s rounded up)", run.JSON.Usage)
		}
	})

	text := strings.TrimSuffix(run.Text, "\n")
	t.Run("text", func(t *testing.T) {
		if text == "" || text == run.Text || recognizertest.WER(shortRef, text) > 0.25 {
			t.Errorf("text %q (reference %q)", run.Text, shortRef)
		}
	})

	t.Run("srt and vtt", func(t *testing.T) {
		checkSubtitleFile(t, "srt", run.SRT, text)
		checkSubtitleFile(t, "vtt", run.VTT, text)
	})

	t.Run("verbose_json", func(t *testing.T) {
		v := run.Verbose
		if v.Task != "transcribe" || v.Language != "english" || math.Abs(v.Duration-2.79) > 0.02 || v.Text == "" {
			t.Errorf("verbose_json: %+v", v)
		}
		checkSegments(t, v)
		if len(v.Words) == 0 {
			t.Fatalf("verbose_json without words: %+v", v)
		}
		var words []string
		for i, w := range v.Words {
			words = append(words, w.Word)
			if w.Start > w.End || w.End > v.Duration+0.01 || i > 0 && w.Start < v.Words[i-1].Start {
				t.Errorf("word %d: %+v", i, w)
			}
		}
		if strings.Join(words, " ") != v.Text {
			t.Errorf("words %q, text %q", words, v.Text)
		}
	})

	t.Run("stream", func(t *testing.T) {
		n := len(run.Events)
		if n < 2 || run.Events[n-1].Type != "transcript.text.done" {
			t.Fatalf("events: %+v", run.Events)
		}
		var deltas string
		for _, e := range run.Events[:n-1] {
			if e.Type != "transcript.text.delta" || e.Delta == "" {
				t.Errorf("event %+v", e)
			}
			deltas += e.Delta
		}
		if done := run.Events[n-1].Text; done != text || deltas != done {
			t.Errorf("deltas %q, done %q, text format %q", deltas, done, text)
		}
	})

	t.Run("translations into English", func(t *testing.T) {
		if want := "(English) " + text; run.Translation.Text != want {
			t.Errorf("translation %q, want %q (the stand-in tags the language it was asked for)", run.Translation.Text, want)
		}
		v := run.TranslationV
		if v.Task != "translate" || v.Language != "english" || v.Text != run.Translation.Text {
			t.Errorf("translation verbose_json: %+v", v)
		}
		checkSegments(t, v)
		var english int
		for _, r := range chat.requests() {
			if strings.Contains(r.System, "speech transcript into English") {
				english++
			}
		}
		if english != 2 {
			t.Errorf("the LLM backend was asked for %d English translations, want 2", english)
		}
	})

	t.Run("refusals", func(t *testing.T) {
		checkRefusal(t, "wrong key", run.WrongKey, 401, "AuthenticationError", "", "invalid_api_key")
		checkRefusal(t, "response_format xml", run.BadFormat, 400, "BadRequestError", "response_format", "invalid_value")
		checkRefusal(t, "unknown model", run.BadModel, 400, "BadRequestError", "model", "model_not_found")
	})

	// One job per answered call, each the caller's, nothing of the refused.
	var list struct {
		Items []struct {
			Status         string
			CustomMetadata map[string]any `json:"custom_metadata"`
		}
	}
	if st, b := d.do("GET", "/v2/pre-recorded?limit=100", key, nil, "", &list); st != 200 {
		t.Fatalf("list: %d %s", st, b)
	}
	byEndpoint := map[string]int{}
	for _, j := range list.Items {
		if j.Status != "done" {
			t.Errorf("job %+v", j)
		}
		if e, ok := j.CustomMetadata["openai"].(string); ok {
			byEndpoint[e]++
		}
	}
	if byEndpoint["/v1/audio/transcriptions"] != 6 || byEndpoint["/v1/audio/translations"] != 2 || len(list.Items) != 9 {
		t.Errorf("jobs by endpoint %v of %d, want 6 transcriptions, 2 translations and the /v2 job", byEndpoint, len(list.Items))
	}

	// A telephone-band recording goes to the telephone model, as a /v2
	// job's would; its job is named by earshot-job-id.
	t.Run("telephone band", func(t *testing.T) {
		call := filepath.Join(t.TempDir(), "call.wav")
		if _, err := telmodel.Render(t.Context(), long, call, telmodel.MuLaw); err != nil {
			t.Fatal(err)
		}
		audio, err := os.ReadFile(call)
		if err != nil {
			t.Fatal(err)
		}
		st, h, b := postOpenAI(t, d, "/v1/audio/transcriptions", key, audio, map[string]string{"model": "whisper-1"})
		var res struct{ Text string }
		if json.Unmarshal(b, &res) != nil || st != 200 {
			t.Fatalf("%d %s", st, b)
		}
		job := d.waitJob(key, h.Get("earshot-job-id"), 10*time.Second)
		psm, _ := job["post_session_metadata"].(map[string]any)
		band, _ := psm["audio_band"].(map[string]any)
		if psm["acoustic_model"] != "en-us-telephone" || band["band"] != "telephone" || res.Text != transcriptionOf(job)["full_transcript"] {
			t.Errorf("post_session_metadata %v, text %q", psm, res.Text)
		}
		t.Logf("telephone band: WER %.3f %q", recognizertest.WER(ref, res.Text), res.Text)
	})
}

// checkSubtitleFile checks a subtitle file of response_format srt or vtt:
// its header and cue timing lines, and the transcript's words.
func checkSubtitleFile(t *testing.T, format, file, text string) {
	t.Helper()
	head := map[string]string{"srt": "1\n00:00:", "vtt": "WEBVTT\n"}[format]
	if !strings.HasPrefix(file, head) || !strings.Contains(file, " --> ") {
		t.Errorf("%s: %q", format, file)
	}
	for _, w := range strings.Fields(text) {
		if !strings.Contains(strings.ToLower(file), w) {
			t.Errorf("%s lacks %q: %q", format, w, file)
		}
	}
}

func checkSegments(t *testing.T, v oaiVerbose) {
	t.Helper()
	if len(v.Segments) == 0 {
		t.Fatalf("%s verbose_json without segments: %+v", v.Task, v)
	}
	for i, s := range v.Segments {
		if s.ID != i || s.Start > s.End || s.End > v.Duration+0.01 || s.Text == "" || s.AvgLogprob > 0 || s.CompressionRatio <= 0 {
			t.Errorf("%s segment %d: %+v", v.Task, i, s)
		}
	}
}

// checkRefusal checks an error the openai package raised: the status, its
// error class, and OpenAI's error object.
func checkRefusal(t *testing.T, what string, r oaiRefusal, status int, class, param, code string) {
	t.Helper()
	e := r.Error
	if fmt.Sprint(r.Status) != fmt.Sprint(status) || r.Name != class || e.Message == "" || e.Type != "invalid_request_error" ||
		(param == "") != (e.Param == nil) || e.Param != nil && *e.Param != param || e.Code == nil || *e.Code != code {
		t.Errorf("%s: %+v (error %+v), want %d %s param %q code %q", what, r, e, status, class, param, code)
	}
}

// TestOpenAIBadInput sends the /v1 door what it must refuse, over plain
// HTTP with the key as OpenAI's clients send it (Authorization: Bearer):
// a file over the upload limit, an empty file, a file that is not audio,
// an unknown response_format, a wrong key. Each answer is OpenAI's error
// shape naming the field, documented in api/openapi.json, and none leaves
// a job or a stored file behind. A translation without an LLM backend is
// the translation add-on's 501. Then a daemon with openai.keep_jobs
// false answers a transcription and keeps neither its job nor its audio.
func TestOpenAIBadInput(t *testing.T) {
	raw, err := os.ReadFile(openAPIFile)
	if err != nil {
		t.Fatal(err)
	}
	doc := loadAPIDoc(t, raw)
	d := startDaemon(t, "", "limits:\n  max_upload_bytes: 400000\n")
	key := createKey(t, d.DataDir, "acme")
	short, _ := clip(t, "pocketsphinx-goforward.wav")
	audio, err := os.ReadFile(short)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name, key, format string
		file              []byte
		status            int
		param, code       string
	}{
		{"over the upload limit", key, "", bytes.Repeat(audio, 5), 413, "file", "file_too_large"},
		{"empty file", key, "", nil, 400, "file", "invalid_file_format"},
		{"not audio", key, "", []byte("this is a text file, not a recording\n"), 400, "file", "invalid_file_format"},
		{"unknown response_format", key, "srv", audio, 400, "response_format", "invalid_value"},
		{"wrong key", "sk-wrong", "", audio, 401, "", "invalid_api_key"},
	} {
		t.Run(c.name, func(t *testing.T) {
			st, h, b := postOpenAI(t, d, "/v1/audio/transcriptions", c.key, c.file, map[string]string{"model": "whisper-1", "response_format": c.format})
			doc.check(t, "POST /v1/audio/transcriptions", st, h.Get("Content-Type"), b)
			var e struct{ Error oaiErrorObject }
			if err := json.Unmarshal(b, &e); err != nil || st != c.status || e.Error.Message == "" ||
				(c.param == "") != (e.Error.Param == nil) || e.Error.Param != nil && *e.Error.Param != c.param ||
				e.Error.Code == nil || *e.Error.Code != c.code {
				t.Errorf("%d %s, want %d param %q code %q", st, b, c.status, c.param, c.code)
			}
		})
	}
	if n := storedJobs(t, d, key); n != 0 {
		t.Errorf("%d jobs after refused requests", n)
	}
	if files := blobFiles(t, d.DataDir); len(files) != 0 {
		t.Errorf("refused requests left files: %v", files)
	}

	t.Run("translation without a backend", func(t *testing.T) {
		st, h, b := postOpenAI(t, d, "/v1/audio/translations", key, audio, map[string]string{"model": "whisper-1"})
		doc.check(t, "POST /v1/audio/translations", st, h.Get("Content-Type"), b)
		var e struct{ Error oaiErrorObject }
		if json.Unmarshal(b, &e) != nil || st != 501 || e.Error.Type != "server_error" || !strings.Contains(e.Error.Message, "addons.llm") {
			t.Errorf("%d %s, want 501 naming addons.llm", st, b)
		}
	})

	t.Run("keep_jobs false", func(t *testing.T) {
		d := startDaemon(t, "", "openai:\n  keep_jobs: false\n")
		key := createKey(t, d.DataDir, "acme")
		for _, format := range []string{"json", "verbose_json"} {
			st, h, b := postOpenAI(t, d, "/v1/audio/transcriptions", key, audio, map[string]string{"model": "whisper-1", "response_format": format, "timestamp_granularities[]": "word"})
			doc.check(t, "POST /v1/audio/transcriptions", st, h.Get("Content-Type"), b)
			if h.Get("earshot-job-id") != "" {
				t.Errorf("earshot-job-id %q of a job not kept", h.Get("earshot-job-id"))
			}
			var res struct{ Text string }
			if json.Unmarshal(b, &res) != nil || st != 200 || !strings.Contains(res.Text, "forward") {
				t.Fatalf("%s: %d %s", format, st, b)
			}
		}
		for _, c := range []struct {
			route, path string
			want        int
		}{{"GET /v1/models", "/v1/models", 200}, {"GET /v1/models/{model}", "/v1/models/whisper-1", 200}, {"GET /v1/models/{model}", "/v1/models/nope", 404}} {
			if got, _ := doc.call(t, d, c.route, c.path, key, nil, ""); got != c.want {
				t.Errorf("%s: %d, want %d", c.path, got, c.want)
			}
		}
		if n := storedJobs(t, d, key); n != 0 {
			t.Errorf("openai.keep_jobs false kept %d jobs", n)
		}
		if files := blobFiles(t, d.DataDir); len(files) != 0 {
			t.Errorf("openai.keep_jobs false kept files: %v", files)
		}
	})
}

// postOpenAI posts a /v1/audio multipart body (file and fields) with the
// key as a bearer token.
func postOpenAI(t *testing.T, d *daemonProc, path, key string, file []byte, fields map[string]string) (int, http.Header, []byte) {
	t.Helper()
	var buf bytes.Buffer
	mw := multipart.NewWriter(&buf)
	fw, _ := mw.CreateFormFile("file", "clip.wav")
	fw.Write(file)
	for k, v := range fields {
		if v != "" {
			mw.WriteField(k, v)
		}
	}
	mw.Close()
	req, err := http.NewRequestWithContext(t.Context(), "POST", d.Base+path, &buf)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+key)
	req.Header.Set("Content-Type", mw.FormDataContentType())
	c := http.Client{Timeout: 2 * time.Minute}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var b bytes.Buffer
	b.ReadFrom(resp.Body)
	return resp.StatusCode, resp.Header, b.Bytes()
}

// storedJobs counts the account's pre-recorded jobs.
func storedJobs(t *testing.T, d *daemonProc, key string) int {
	t.Helper()
	var list struct{ Items []json.RawMessage }
	if st, b := d.do("GET", "/v2/pre-recorded?limit=100", key, nil, "", &list); st != 200 {
		t.Fatalf("list: %d %s", st, b)
	}
	return len(list.Items)
}
