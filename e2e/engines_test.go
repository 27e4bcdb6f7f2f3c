package e2e

import (
	"encoding/binary"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// transcriptionStandin speaks POST /v1/audio/transcriptions: it checks and
// records each request and answers per mode ("ok", "fail", "garbage").
type transcriptionStandin struct {
	t    *testing.T
	mode atomic.Value
	mu   sync.Mutex
	reqs []map[string]string // guarded by mu: fields, plus "_seconds" of the WAV
}

func (s *transcriptionStandin) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path != "/v1/audio/transcriptions" || r.Method != "POST" {
		s.t.Errorf("stand-in: %s %s", r.Method, r.URL.Path)
		http.Error(w, "no", 404)
		return
	}
	if err := r.ParseMultipartForm(32 << 20); err != nil {
		s.t.Errorf("stand-in: multipart: %v", err)
		http.Error(w, "bad", 400)
		return
	}
	fields := map[string]string{}
	for k, v := range r.MultipartForm.Value {
		fields[k] = strings.Join(v, ",")
	}
	f, hdr, err := r.FormFile("file")
	if err != nil {
		s.t.Errorf("stand-in: no file: %v", err)
		return
	}
	wav, _ := io.ReadAll(f)
	if len(wav) < 44 || string(wav[:4]) != "RIFF" || string(wav[8:12]) != "WAVE" ||
		binary.LittleEndian.Uint16(wav[22:]) != 1 || binary.LittleEndian.Uint32(wav[24:]) != 16000 || binary.LittleEndian.Uint16(wav[34:]) != 16 {
		s.t.Errorf("stand-in: file %s is not 16 kHz 16-bit mono WAV", hdr.Filename)
	}
	secs := float64(len(wav)-44) / 32000
	fields["_seconds"] = fmt.Sprint(secs)
	s.mu.Lock()
	s.reqs = append(s.reqs, fields)
	s.mu.Unlock()
	switch s.mode.Load() {
	case "fail":
		http.Error(w, `{"error":{"message":"gpu on fire"}}`, 500)
	case "garbage":
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"text": "alpha", "segments": [`)
	default:
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"task":"transcribe","language":"english","duration":%.3f,"text":" alpha beta",
"segments":[{"id":0,"start":0.0,"end":%.3f,"text":" alpha beta","avg_logprob":-0.1}],
"words":[{"word":" alpha","start":0.10,"end":0.40},{"word":" beta","start":0.50,"end":0.90}]}`, secs, secs)
	}
}

func (s *transcriptionStandin) requests() []map[string]string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]map[string]string(nil), s.reqs...)
}

func startStandin(t *testing.T) (*transcriptionStandin, string) {
	s := &transcriptionStandin{t: t}
	s.mode.Store("ok")
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: s}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	return s, "http://" + ln.Addr().String() + "/v1"
}

func engineConfig(url string, fallback bool) string {
	return fmt.Sprintf(`engines:
  remote:
    - name: gpu
      url: %s
      model: whisper-test
      api_key: sekret
      languages: [en, fr]
      timeout: 5s
      retries: -1
      breaker_failures: 100
  fallback: %v
`, url, fallback)
}

func TestRemoteEngineBatch(t *testing.T) {
	sv, url := startStandin(t)
	d := startDaemon(t, "", engineConfig(url, false))
	key := createKey(t, d.DataDir, "acme")
	path, _ := clip(t, "ls-test-clean-1089-134686-0000.wav")
	status, up, body := d.upload(key, path)
	if status != 200 {
		t.Fatalf("upload %d %s", status, body)
	}
	run := func(req map[string]any) map[string]any {
		t.Helper()
		req["audio_url"] = up.AudioURL
		var created struct{ ID string }
		if status, body := d.postJSON("/v2/pre-recorded", key, req, &created); status != 201 {
			t.Fatalf("create: %d %s", status, body)
		}
		return d.waitJob(key, created.ID, time.Minute)
	}

	// GET /v2/engines lists both engines.
	var engines struct {
		Engines   []map[string]any `json:"engines"`
		Languages []string         `json:"languages"`
	}
	if status, body := d.do("GET", "/v2/engines", key, nil, "", &engines); status != 200 || len(engines.Engines) != 2 ||
		strings.Join(engines.Languages, " ") != "en fr" {
		t.Fatalf("GET /v2/engines: %d %s", status, body)
	}
	// Unserved language: 422 naming what is installed.
	if status, body := d.postJSON("/v2/pre-recorded", key, map[string]any{"audio_url": up.AudioURL,
		"language_config": map[string]any{"languages": []string{"de"}}}, nil); status != 422 || !strings.Contains(string(body), "installed") {
		t.Fatalf("de: %d %s", status, body)
	}

	// French, with a vocabulary: the server's words at the segments' offsets.
	rec := run(map[string]any{"language_config": map[string]any{"languages": []string{"fr"}},
		"custom_vocabulary": true, "custom_vocabulary_config": map[string]any{"vocabulary": []string{"Ravenna"}}})
	if rec["status"] != "done" {
		t.Fatalf("job: %v", rec)
	}
	reqs := sv.requests()
	if len(reqs) == 0 {
		t.Fatal("no request reached the stand-in")
	}
	for _, f := range reqs {
		if f["model"] != "whisper-test" || f["language"] != "fr" || f["response_format"] != "verbose_json" ||
			!strings.Contains(f["prompt"], "Ravenna") || !strings.Contains(f["timestamp_granularities[]"], "word") {
			t.Errorf("request fields %v", f)
		}
	}
	res := rec["result"].(map[string]any)["transcription"].(map[string]any)
	utts := res["utterances"].([]any)
	if len(utts) != len(reqs) {
		t.Fatalf("%d utterances for %d requests", len(utts), len(reqs))
	}
	prev := -1.0
	for _, u := range utts {
		u := u.(map[string]any)
		start := u["start"].(float64)
		words := u["words"].([]any)
		if u["text"] != "alpha beta" || len(words) != 2 || u["language"] != "fr" || start <= prev {
			t.Fatalf("utterance %v", u)
		}
		w0, w1 := words[0].(map[string]any), words[1].(map[string]any)
		// Word times are the server's plus the segment's start in the file.
		if off := w0["start"].(float64) - 0.10; math.Abs(w1["start"].(float64)-0.50-off) > 0.002 || off < 0 || math.Abs(start-off-0.10) > 0.002 {
			t.Fatalf("words not shifted by the segment offset: %v", u)
		}
		prev = start
	}
	psm := rec["post_session_metadata"].(map[string]any)
	if psm["engine"] != "gpu" {
		t.Errorf("post_session_metadata %v", psm)
	}

	// Server failing, malformed, down: documented job errors, never stuck.
	for _, tc := range []struct{ mode, code, msg string }{
		{"fail", "503", "transcription engine gpu unavailable"},
		{"garbage", "500", "transcription engine gpu returned a bad response"},
	} {
		sv.mode.Store(tc.mode)
		rec := run(map[string]any{"language_config": map[string]any{"languages": []string{"en"}}})
		if rec["status"] != "error" || fmt.Sprint(rec["error_code"]) != tc.code || !strings.Contains(fmt.Sprint(rec["post_session_metadata"]), tc.msg) {
			t.Errorf("%s: %v", tc.mode, rec)
		}
	}
}

func TestRemoteEngineFallback(t *testing.T) {
	sv, url := startStandin(t)
	sv.mode.Store("fail")
	d := startDaemon(t, "", engineConfig(url, true))
	key := createKey(t, d.DataDir, "acme")
	path, _ := clip(t, "pocketsphinx-goforward.wav")
	status, up, body := d.upload(key, path)
	if status != 200 {
		t.Fatalf("upload %d %s", status, body)
	}
	var created struct{ ID string }
	if status, body := d.postJSON("/v2/pre-recorded", key, map[string]any{"audio_url": up.AudioURL,
		"language_config": map[string]any{"languages": []string{"en"}}}, &created); status != 201 {
		t.Fatalf("create: %d %s", status, body)
	}
	rec := d.waitJob(key, created.ID, time.Minute)
	psm, _ := rec["post_session_metadata"].(map[string]any)
	fb, _ := psm["fallback"].(map[string]any)
	if rec["status"] != "done" || psm["engine"] != "sphinx" || fb["from"] != "gpu" || !strings.Contains(fmt.Sprint(fb["reason"]), "unavailable") {
		t.Fatalf("fallback job: %v", rec)
	}
	if !strings.Contains(fmt.Sprint(rec["result"]), "forward") {
		t.Errorf("sphinx transcript missing: %v", rec["result"])
	}
}
