package e2e

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// transcriptionStandin speaks POST /v1/audio/transcriptions and
// /v1/audio/translations: it checks and records each request and answers
// per mode: "ok", "fail" (500), "garbage" (malformed JSON), "slow" (no
// answer until the client gives up).
type transcriptionStandin struct {
	t    *testing.T
	mode atomic.Value
	srv  *http.Server
	mu   sync.Mutex
	reqs []map[string]string // guarded by mu: fields, plus "_path" and "_seconds" of the WAV
	// detections counts requests without a language; in mode "mixed" the
	// first is heard as English and the others as French.
	detections atomic.Int64
	// closed: down (or the test's end) closed the stand-in; a request it
	// was reading then fails on its own closed connection, which is the
	// outage the test made, not a malformed request.
	closed atomic.Bool
}

func (s *transcriptionStandin) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path != "/v1/audio/transcriptions" && r.URL.Path != "/v1/audio/translations" || r.Method != "POST" {
		s.t.Errorf("stand-in: %s %s", r.Method, r.URL.Path)
		http.Error(w, "no", 404)
		return
	}
	if err := r.ParseMultipartForm(32 << 20); err != nil {
		if s.closed.Load() {
			return
		}
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
	if len(wav) < 44 || string(wav[:4]) != "RIFF" || string(wav[8:12]) != "WAVE" || binary.LittleEndian.Uint16(wav[20:]) != 1 ||
		binary.LittleEndian.Uint16(wav[22:]) != 1 || binary.LittleEndian.Uint32(wav[24:]) != 16000 || binary.LittleEndian.Uint16(wav[34:]) != 16 {
		s.t.Errorf("stand-in: file %s is not 16 kHz 16-bit mono PCM WAV", hdr.Filename)
	}
	secs := float64(len(wav)-44) / 32000
	fields["_seconds"] = fmt.Sprint(secs)
	fields["_path"] = r.URL.Path
	s.mu.Lock()
	s.reqs = append(s.reqs, fields)
	s.mu.Unlock()
	switch s.mode.Load() {
	case "fail":
		http.Error(w, `{"error":{"message":"gpu on fire"}}`, 500)
	case "garbage":
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"text": "alpha", "segments": [`)
	case "slow":
		<-r.Context().Done() // the client's timeout (or the stand-in's close) ends it
	default:
		w.Header().Set("Content-Type", "application/json")
		if strings.HasSuffix(r.URL.Path, "/translations") {
			// OpenAI's translation answer: segments, no words.
			fmt.Fprintf(w, `{"task":"translate","language":"english","duration":%.3f,"text":" hello world",
"segments":[{"id":0,"start":0.0,"end":%.3f,"text":" hello world","avg_logprob":-0.2}]}`, secs, secs)
			return
		}
		lang := "english"
		if fields["language"] == "" && s.detections.Add(1) > 1 && s.mode.Load() == "mixed" {
			lang = "french"
		}
		fmt.Fprintf(w, `{"task":"transcribe","language":"%s","duration":%.3f,"text":" alpha beta",
"segments":[{"id":0,"start":0.0,"end":%.3f,"text":" alpha beta","avg_logprob":-0.1}],
"words":[{"word":" alpha","start":0.10,"end":0.40},{"word":" beta","start":0.50,"end":0.90}]}`, lang, secs, secs)
	}
}

func (s *transcriptionStandin) requests() []map[string]string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]map[string]string(nil), s.reqs...)
}

// down closes the stand-in's listener and connections: the port refuses
// connections from then on.
func (s *transcriptionStandin) down() {
	s.closed.Store(true)
	s.srv.Close()
}

func startStandin(t *testing.T) (*transcriptionStandin, string) {
	s := &transcriptionStandin{t: t}
	s.mode.Store("ok")
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s.srv = &http.Server{Handler: s}
	go s.srv.Serve(ln)
	t.Cleanup(s.down)
	return s, "http://" + ln.Addr().String() + "/v1"
}

func engineConfig(url string, fallback bool) string {
	return engineConfigWith(url, fallback, "")
}

// engineConfigWith is engineConfig with extra keys (YAML lines indented
// for the remote engine's entry) for the one engine "gpu".
func engineConfigWith(url string, fallback bool, extra string) string {
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
%s  fallback: %v
`, url, extra, fallback)
}

// TestRemoteEngineCodeSwitching: the stand-in hears the first segment as
// English and the others as French. With code_switching the utterances keep
// those languages; without it the first language is kept (SPEC 2.6) and
// the job is decoded again in it, so no utterance carries text decoded as
// French under an English label.
func TestRemoteEngineCodeSwitching(t *testing.T) {
	sv, url := startStandin(t)
	sv.mode.Store("mixed")
	// capacity 1: segments are sent one at a time, in order.
	d := startDaemon(t, "", engineConfigWith(url, false, "      capacity: 1\n"))
	key := createKey(t, d.DataDir, "acme")
	path, _ := twoSpeakerFile(t)
	for _, cs := range []bool{true, false} {
		t.Run(fmt.Sprintf("code_switching=%v", cs), func(t *testing.T) {
			sv.detections.Store(0)
			before := len(sv.requests())
			job := submit(t, d, key, path, func(u string) map[string]any {
				return map[string]any{"audio_url": u, "language_config": map[string]any{"code_switching": cs}}
			})
			reqs := sv.requests()[before:]
			var detect, fixed []string
			for _, r := range reqs {
				if r["language"] == "" {
					detect = append(detect, r["_seconds"])
				} else {
					fixed = append(fixed, r["language"])
				}
			}
			tr := job["result"].(map[string]any)["transcription"].(map[string]any)
			var langs []string
			for _, u := range tr["utterances"].([]any) {
				langs = append(langs, u.(map[string]any)["language"].(string))
			}
			if len(detect) < 2 || len(langs) != len(detect) || langs[0] != "en" {
				t.Fatalf("%d detection requests, utterance languages %v", len(detect), langs)
			}
			if cs {
				if len(fixed) != 0 || !slices.Contains(langs, "fr") || fmt.Sprint(tr["languages"]) != "[fr en]" {
					t.Errorf("code switching: languages %v (result %v), %d fixed-language requests", langs, tr["languages"], len(fixed))
				}
				return
			}
			if len(fixed) != len(detect) || slices.ContainsFunc(fixed, func(l string) bool { return l != "en" }) {
				t.Errorf("without code switching: re-decoded in %v, want every segment in en", fixed)
			}
			if slices.ContainsFunc(langs, func(l string) bool { return l != "en" }) || fmt.Sprint(tr["languages"]) != "[en]" {
				t.Errorf("without code switching: languages %v (result %v)", langs, tr["languages"])
			}
		})
	}
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
	rec := submit(t, d, key, path, func(u string) map[string]any {
		return map[string]any{"audio_url": u, "language_config": map[string]any{"languages": []string{"en"}}}
	})
	psm, _ := rec["post_session_metadata"].(map[string]any)
	fb, _ := psm["fallback"].(map[string]any)
	if rec["status"] != "done" || psm["engine"] != "sphinx" || fb["from"] != "gpu" || !strings.Contains(fmt.Sprint(fb["reason"]), "unavailable") {
		t.Fatalf("fallback job: %v", rec)
	}
	if !strings.Contains(fmt.Sprint(rec["result"]), "forward") {
		t.Errorf("sphinx transcript missing: %v", rec["result"])
	}
}

// liveFinal is a final transcript's utterance as a live session sends it.
type liveFinal struct {
	Start, End float64
	Text       string
	Language   string
	Words      []struct {
		Word       string
		Start, End float64
	}
}

// liveView sorts a live session's messages for the engine tests.
type liveView struct {
	finals, partials []liveFinal
	speechStarts     []float64 // speech_start times
	finalAfter       []float64 // per final, the time of the last speech_start before it
	errors           []string  // error messages' text
	ended            bool      // end_session came
}

func viewLive(t *testing.T, msgs []liveMsg) liveView {
	t.Helper()
	var v liveView
	for _, m := range msgs {
		switch m.Type {
		case "speech_start":
			var d struct{ Time float64 }
			json.Unmarshal(m.Data, &d)
			v.speechStarts = append(v.speechStarts, d.Time)
		case "transcript":
			var d struct {
				IsFinal   bool      `json:"is_final"`
				Utterance liveFinal `json:"utterance"`
			}
			if err := json.Unmarshal(m.Data, &d); err != nil {
				t.Fatalf("transcript %s: %v", m.raw, err)
			}
			if d.IsFinal {
				v.finals = append(v.finals, d.Utterance)
				last := -1.0
				if n := len(v.speechStarts); n > 0 {
					last = v.speechStarts[n-1]
				}
				v.finalAfter = append(v.finalAfter, last)
			} else {
				v.partials = append(v.partials, d.Utterance)
			}
		case "error":
			var e struct{ Message string }
			json.Unmarshal(m.Error, &e)
			v.errors = append(v.errors, e.Message)
		case "end_session":
			v.ended = true
		}
	}
	return v
}

// metricValue reads one series from GET /metrics; false when absent.
func metricValue(t *testing.T, d *daemonProc, series string) (float64, bool) {
	t.Helper()
	status, body := d.do("GET", "/metrics", "", nil, "", nil)
	if status != 200 {
		t.Fatalf("GET /metrics: %d", status)
	}
	for line := range strings.SplitSeq(string(body), "\n") {
		if rest, ok := strings.CutPrefix(line, series+" "); ok {
			var v float64
			fmt.Sscan(rest, &v)
			return v, true
		}
	}
	return 0, false
}

// TestRemoteEngineLive: a live session routed to the remote engine sends
// the stand-in one request per utterance the endpointer closed (16 kHz
// mono WAV, the session's language), and its finals carry the server's
// words at the session's offsets; with partials asked for, partial
// requests run at the engine's partial_interval at most. /metrics counts
// the requests.
func TestRemoteEngineLive(t *testing.T) {
	sv, url := startStandin(t)
	const partialEvery = 300 * time.Millisecond
	// The requests counted are the live path's: no batch pass after the
	// sessions (it would send their recordings to the engine again).
	d := startDaemon(t, "", engineConfigWith(url, false, "      partial_interval: 300ms\n")+"live:\n  batch_pass: false\n")
	key := createKey(t, d.DataDir, "acme")
	path, _ := clip(t, "ls-test-clean-1089-134686-0000.wav")
	audio := pcmOf(t, path)
	audioSecs := float64(len(audio)) / 32000

	// Finals only, streamed as fast as possible.
	s := d.createLive(key, map[string]any{"language_config": map[string]any{"languages": []string{"en"}},
		"messages_config": map[string]any{"receive_speech_events": true, "receive_lifecycle_events": true}})
	msgs, code := runSession(t, s.URL, audio, 32, 0)
	v := viewLive(t, msgs)
	if code != 1000 || !v.ended || len(v.errors) > 0 {
		t.Fatalf("close %d, end_session %v, errors %q", code, v.ended, v.errors)
	}
	reqs := sv.requests()
	if len(v.finals) < 2 || len(reqs) != len(v.finals) {
		t.Fatalf("%d requests for %d finals (%d speech starts): want one request per utterance, several utterances",
			len(reqs), len(v.finals), len(v.speechStarts))
	}
	prevEnd := 0.0
	for i, f := range reqs {
		if f["_path"] != "/v1/audio/transcriptions" || f["model"] != "whisper-test" || f["language"] != "en" ||
			f["response_format"] != "verbose_json" || f["timestamp_granularities[]"] != "word,segment" || f["prompt"] != "" {
			t.Errorf("request %d fields %v", i, f)
		}
		u := v.finals[i]
		if u.Text != "alpha beta" || u.Language != "en" || len(u.Words) != 2 {
			t.Fatalf("final %d: %+v", i, u)
		}
		// The server's word times (0.10, 0.50 in the utterance's audio,
		// clamped to its length) plus where that audio starts in the
		// session: at most the 300 ms pre-roll before the utterance's
		// speech start, or where the previous utterance was cut.
		var secs float64
		fmt.Sscan(f["_seconds"], &secs)
		off := u.Words[0].Start - min(0.10, secs)
		cutHere := math.Abs(off-prevEnd) < 0.002
		if math.Abs(u.Words[1].Start-min(0.50, secs)-off) > 0.002 || off < -0.001 || off+secs > audioSecs+0.011 ||
			!cutHere && (off < v.finalAfter[i]-0.311 || off > v.finalAfter[i]+0.001) {
			t.Errorf("final %d: words %+v not at the server's times shifted by its audio's start (speech started at %.3f, audio %.3fs)",
				i, u.Words, v.finalAfter[i], secs)
		}
		prevEnd = off + secs
	}
	var job map[string]any
	d.do("GET", "/v2/live/"+s.ID, key, nil, "", &job)
	if psm, _ := job["post_session_metadata"].(map[string]any); job["status"] != "done" || psm["engine"] != "gpu" {
		t.Errorf("job %v %v", job["status"], job["post_session_metadata"])
	}
	seen, finalReqs := len(reqs), len(reqs) // stand-in requests so far; of which finals

	// Partials, streamed in real time: the growing utterance is re-sent
	// at most every partial_interval per utterance.
	short, _ := clip(t, "ls-test-clean-1089-134691-0001.wav")
	audio = pcmOf(t, short)
	s = d.createLive(key, map[string]any{"language_config": map[string]any{"languages": []string{"en"}},
		"messages_config": map[string]any{"receive_partial_transcripts": true}})
	began := time.Now()
	msgs, code = runSession(t, s.URL, audio, 32, 100*time.Millisecond)
	wall := time.Since(began)
	v = viewLive(t, msgs)
	reqs = sv.requests()[seen:]
	partialReqs := len(reqs) - len(v.finals)
	if code != 1000 || len(v.finals) == 0 || len(v.partials) == 0 {
		t.Fatalf("close %d, %d finals, %d partials", code, len(v.finals), len(v.partials))
	}
	if bound := int(wall/partialEvery) + len(v.finals) + 1; partialReqs < 1 || partialReqs > bound {
		t.Errorf("%d partial requests in %v for %d utterances, want 1..%d", partialReqs, wall, len(v.finals), bound)
	}
	// Partial messages come on the recogniser's 250 ms audio cadence.
	if bound := int(float64(len(audio))/32000/0.25) + len(v.finals); len(v.partials) > bound {
		t.Errorf("%d partial messages for %.1fs of audio, want at most %d", len(v.partials), float64(len(audio))/32000, bound)
	}
	for _, p := range v.partials {
		if p.Text != "alpha beta" || len(p.Words) != 2 || p.Words[0].Start < 0.1 || p.Words[1].End > float64(len(audio))/32000+0.001 {
			t.Errorf("partial %+v: want the server's words at session offsets", p)
		}
	}

	seen, finalReqs = seen+len(reqs), finalReqs+len(v.finals)

	// Narrowband (8 kHz, one-pass finals): each utterance is sent once,
	// when it ends, resampled to 16 kHz.
	narrow := filepath.Join(t.TempDir(), "speech.s16")
	if out, err := exec.Command("ffmpeg", "-nostdin", "-v", "error", "-i", path, "-ar", "8000", "-ac", "1", "-f", "s16le", narrow).CombinedOutput(); err != nil {
		t.Fatalf("ffmpeg: %v %s", err, out)
	}
	audio, _ = os.ReadFile(narrow)
	s = d.createLive(key, map[string]any{"language_config": map[string]any{"languages": []string{"en"}}, "sample_rate": 8000})
	msgs, code = runSession(t, s.URL, audio, 16, 0)
	v = viewLive(t, msgs)
	reqs = sv.requests()[seen:]
	if code != 1000 || len(v.finals) == 0 || len(reqs) != len(v.finals) || len(v.errors) > 0 {
		t.Fatalf("8 kHz: close %d, %d requests for %d finals, errors %q", code, len(reqs), len(v.finals), v.errors)
	}
	for i, u := range v.finals {
		if u.Text != "alpha beta" || u.Words[0].Start < 0 || u.Words[1].End > float64(len(audio))/16000+0.011 {
			t.Errorf("8 kHz final %d: %+v", i, u)
		}
	}

	// Metrics: every final request counted as ok, timed, breaker closed.
	finalsTotal := float64(finalReqs + len(v.finals))
	for series, want := range map[string]float64{
		`earshot_remote_requests_total{action="transcribe",engine="gpu",outcome="ok"}`: finalsTotal,
		`earshot_remote_request_seconds_count{action="transcribe",engine="gpu"}`:       finalsTotal,
		`earshot_remote_breaker_state{engine="gpu",state="closed"}`:                    1,
		`earshot_remote_breaker_state{engine="gpu",state="open"}`:                      0,
	} {
		if got, ok := metricValue(t, d, series); !ok || got != want {
			t.Errorf("%s = %v (present %v), want %v", series, got, ok, want)
		}
	}
	if got, _ := metricValue(t, d, `earshot_remote_requests_total{action="partial",engine="gpu",outcome="ok"}`); got < 1 {
		t.Errorf("no partial request counted ok")
	}
}

// TestRemoteEngineLiveFallback: the remote engine fails at the first
// utterance of a live session in English with fallback on: that utterance
// and the rest are transcribed by sphinx, the client gets one error
// message saying so, post_session_metadata names sphinx and the fallback,
// and /metrics shows the open breaker and the fallback.
func TestRemoteEngineLiveFallback(t *testing.T) {
	sv, url := startStandin(t)
	sv.mode.Store("fail")
	cfg := strings.Replace(engineConfig(url, true), "breaker_failures: 100", "breaker_failures: 1\n      breaker_cooldown: 10m", 1)
	d := startDaemon(t, "", cfg)
	key := createKey(t, d.DataDir, "acme")
	path, _ := clip(t, "pocketsphinx-goforward.wav")
	s := d.createLive(key, map[string]any{"language_config": map[string]any{"languages": []string{"en"}},
		"messages_config": map[string]any{"receive_lifecycle_events": true}})
	msgs, code := runSession(t, s.URL, pcmOf(t, path), 32, 0)
	v := viewLive(t, msgs)
	if code != 1000 || !v.ended {
		t.Fatalf("close %d, end_session %v", code, v.ended)
	}
	if len(v.errors) != 1 || !strings.Contains(v.errors[0], "transcription engine gpu unavailable; the session continues on engine sphinx") {
		t.Errorf("error messages %q, want one saying the session moved to sphinx", v.errors)
	}
	text := ""
	for _, f := range v.finals {
		text += " " + f.Text
	}
	if !strings.Contains(text, "forward") || strings.Contains(text, "alpha") {
		t.Errorf("finals %q: want sphinx's transcript", text)
	}
	if n := len(sv.requests()); n != 1 {
		t.Errorf("%d requests reached the stand-in, want 1 (then sphinx only)", n)
	}
	var job map[string]any
	d.do("GET", "/v2/live/"+s.ID, key, nil, "", &job)
	psm, _ := job["post_session_metadata"].(map[string]any)
	fb, _ := psm["fallback"].(map[string]any)
	if job["status"] != "done" || psm["engine"] != "sphinx" || fb["from"] != "gpu" || !strings.Contains(fmt.Sprint(fb["reason"]), "unavailable") {
		t.Errorf("job %v, post_session_metadata %v", job["status"], psm)
	}
	for series, want := range map[string]float64{
		`earshot_remote_breaker_state{engine="gpu",state="open"}`:                               1,
		`earshot_engine_fallbacks_total{engine="gpu",kind="live"}`:                              1,
		`earshot_remote_requests_total{action="transcribe",engine="gpu",outcome="unavailable"}`: 1,
	} {
		if got, ok := metricValue(t, d, series); !ok || got != want {
			t.Errorf("%s = %v (present %v), want %v", series, got, ok, want)
		}
	}
}

// TestRemoteEngineFaults: the server slow (past the engine's timeout),
// failing with 500, answering malformed JSON, or down: a pre-recorded job
// ends in the documented error, a live session gets the documented error
// message per utterance and still ends (end_session, close 1000, job
// done with the losses in post_session_metadata). Nothing stays stuck.
func TestRemoteEngineFaults(t *testing.T) {
	sv, url := startStandin(t)
	d := startDaemon(t, "", strings.Replace(engineConfig(url, false), "timeout: 5s", "timeout: 1s", 1))
	key := createKey(t, d.DataDir, "acme")
	path, _ := clip(t, "pocketsphinx-goforward.wav")
	status, up, body := d.upload(key, path)
	if status != 200 {
		t.Fatalf("upload %d %s", status, body)
	}
	audio := pcmOf(t, path)
	en := map[string]any{"languages": []string{"en"}}
	for _, tc := range []struct {
		mode, code, msg, outcome string
	}{
		{"slow", "503", "transcription engine gpu unavailable", "timeout"},
		{"fail", "503", "transcription engine gpu unavailable", "unavailable"},
		{"garbage", "500", "transcription engine gpu returned a bad response", "bad_response"},
		{"down", "503", "transcription engine gpu unavailable", "unavailable"},
	} {
		t.Run(tc.mode, func(t *testing.T) {
			if tc.mode == "down" {
				sv.down()
			} else {
				sv.mode.Store(tc.mode)
			}
			var created struct{ ID string }
			if status, body := d.postJSON("/v2/pre-recorded", key, map[string]any{"audio_url": up.AudioURL, "language_config": en}, &created); status != 201 {
				t.Fatalf("create: %d %s", status, body)
			}
			rec := d.waitJob(key, created.ID, time.Minute)
			if rec["status"] != "error" || fmt.Sprint(rec["error_code"]) != tc.code || !strings.Contains(fmt.Sprint(rec["post_session_metadata"]), tc.msg) {
				t.Errorf("job: status %v code %v metadata %v", rec["status"], rec["error_code"], rec["post_session_metadata"])
			}

			s := d.createLive(key, map[string]any{"language_config": en, "messages_config": map[string]any{"receive_lifecycle_events": true}})
			msgs, code := runSession(t, s.URL, audio, 32, 0)
			v := viewLive(t, msgs)
			if code != 1000 || !v.ended || len(v.finals) != 0 || len(v.errors) == 0 {
				t.Fatalf("live: close %d, end_session %v, %d finals, errors %q", code, v.ended, len(v.finals), v.errors)
			}
			for _, e := range v.errors {
				if !strings.Contains(e, tc.msg) {
					t.Errorf("live error %q, want %q", e, tc.msg)
				}
			}
			job := d.waitLive(key, s.ID, time.Minute)
			psm, _ := job["post_session_metadata"].(map[string]any)
			lost, _ := psm["engine_errors"].(map[string]any)
			if job["status"] != "done" || lost["count"] != float64(len(v.errors)) || lost["last"] != tc.msg {
				t.Errorf("live job %v, post_session_metadata %v", job["status"], psm)
			}
			series := fmt.Sprintf(`earshot_remote_requests_total{action="transcribe",engine="gpu",outcome=%q}`, tc.outcome)
			if got, _ := metricValue(t, d, series); got < 2 {
				t.Errorf("%s = %v, want the batch and live failures counted", series, got)
			}
		})
	}
}

// TestRemoteEngineTranslate: without a chat backend, translation into en
// of a job transcribed by the remote engine goes to its
// /audio/translations, one request per utterance; the translated
// utterances keep the original times; other targets report 501.
func TestRemoteEngineTranslate(t *testing.T) {
	sv, url := startStandin(t)
	d := startDaemon(t, "", engineConfig(url, false))
	key := createKey(t, d.DataDir, "acme")
	path, _ := clip(t, "ls-test-clean-1089-134686-0000.wav")
	rec := submit(t, d, key, path, func(u string) map[string]any {
		return map[string]any{"audio_url": u, "language_config": map[string]any{"languages": []string{"fr"}},
			"translation": true, "translation_config": map[string]any{"target_languages": []string{"en", "de"}}}
	})
	result := rec["result"].(map[string]any)
	utts := result["transcription"].(map[string]any)["utterances"].([]any)
	env := envelope(t, "translation", result["translation"])
	if env["success"] != true {
		t.Fatalf("translation envelope %v", env)
	}
	results := env["results"].([]any)
	enRes, deRes := results[0].(map[string]any), results[1].(map[string]any)
	tr := enRes["utterances"].([]any)
	if len(tr) != len(utts) || len(utts) == 0 || enRes["error"] != nil || enRes["full_transcript"] == "" {
		t.Fatalf("en: %d translated utterances for %d, %v", len(tr), len(utts), enRes)
	}
	for i := range tr {
		o, x := utts[i].(map[string]any), tr[i].(map[string]any)
		words := x["words"].([]any)
		if x["start"] != o["start"] || x["end"] != o["end"] || x["text"] != "hello world" || x["language"] != "en" || len(words) != 2 {
			t.Fatalf("utterance %d: original %v, translated %v", i, o, x)
		}
		for _, w := range words {
			w := w.(map[string]any)
			if w["start"].(float64) < o["start"].(float64) || w["end"].(float64) > o["end"].(float64) {
				t.Errorf("utterance %d: word %v outside the original span", i, w)
			}
		}
	}
	if e, _ := deRes["error"].(map[string]any); fmt.Sprint(e["status_code"]) != "501" {
		t.Errorf("de: %v, want 501 (needs a chat backend)", deRes)
	}
	var translations int
	for _, f := range sv.requests() {
		if f["_path"] != "/v1/audio/translations" {
			continue
		}
		translations++
		if f["model"] != "whisper-test" || f["language"] != "" || f["response_format"] != "verbose_json" {
			t.Errorf("translation request fields %v", f)
		}
	}
	if translations != len(utts) {
		t.Errorf("%d translation requests for %d utterances", translations, len(utts))
	}
}
