package e2e

import (
	"encoding/binary"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
)

// transcriptionStandin speaks POST /v1/audio/transcriptions and
// /v1/audio/translations: it checks and records each request and answers
// per mode: "ok", "fail" (500), "garbage" (malformed JSON), "slow" (no
// answer until the client gives up), "french" (as ok, detecting French).
// A request naming a language is answered in it, as a real server does.
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
		switch {
		case fields["language"] != "":
			lang = fields["language"]
		case s.mode.Load() == "french":
			lang = "french"
		case s.detections.Add(1) > 1 && s.mode.Load() == "mixed":
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
