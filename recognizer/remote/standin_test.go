package remote

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/earshot-dev/earshot/recognizer"
	"github.com/earshot-dev/earshot/recognizer/openai"
	"github.com/earshot-dev/earshot/recognizer/recognizertest"
)

// received is one request as the stand-in server parsed it.
type received struct {
	Path     string
	Auth     string
	Fields   map[string][]string // every non-file multipart field
	FileName string
	FileType string
	PCM      []int16 // the WAV's samples; the WAV must be 16 kHz 16-bit mono
}

func (r *received) seconds() float64 { return float64(len(r.PCM)) / recognizer.SampleRate }

// standin speaks the OpenAI audio API: it parses the multipart request
// exactly as a server would (failing the test on anything malformed) and
// lets the test answer it.
type standin struct {
	t       testing.TB
	respond func(w http.ResponseWriter, r *http.Request, rec *received)

	mu       sync.Mutex
	reqs     []*received // guarded by mu
	inflight int         // guarded by mu
	peak     int         // guarded by mu; most requests in flight at once
}

func (s *standin) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	rec, err := parseRequest(r)
	if err != nil {
		s.t.Errorf("stand-in: %v", err)
		http.Error(w, `{"error":{"message":"bad request"}}`, http.StatusBadRequest)
		return
	}
	s.mu.Lock()
	s.reqs = append(s.reqs, rec)
	s.inflight++
	s.peak = max(s.peak, s.inflight)
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		s.inflight--
		s.mu.Unlock()
	}()
	s.respond(w, r, rec)
}

// requests returns what was received so far.
func (s *standin) requests() []*received {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]*received(nil), s.reqs...)
}

func (s *standin) count() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.reqs)
}

// parseRequest checks the request shape and decodes it.
func parseRequest(r *http.Request) (*received, error) {
	if r.Method != http.MethodPost {
		return nil, fmt.Errorf("method %s", r.Method)
	}
	if !strings.HasSuffix(r.URL.Path, "/audio/transcriptions") && !strings.HasSuffix(r.URL.Path, "/audio/translations") {
		return nil, fmt.Errorf("path %s", r.URL.Path)
	}
	if err := r.ParseMultipartForm(64 << 20); err != nil {
		return nil, fmt.Errorf("multipart: %w", err)
	}
	rec := &received{Path: r.URL.Path, Auth: r.Header.Get("Authorization"), Fields: r.MultipartForm.Value}
	files := r.MultipartForm.File["file"]
	if len(files) != 1 || len(r.MultipartForm.File) != 1 {
		return nil, fmt.Errorf("want exactly one file part, got %v", r.MultipartForm.File)
	}
	rec.FileName = files[0].Filename
	rec.FileType = files[0].Header.Get("Content-Type")
	f, err := files[0].Open()
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(f)
	if err != nil {
		return nil, err
	}
	channels, err := recognizertest.DecodeWAV16(bytes.NewReader(data))
	if err != nil {
		return nil, fmt.Errorf("file: %w", err)
	}
	if len(channels) != 1 {
		return nil, fmt.Errorf("file: %d channels, want mono", len(channels))
	}
	if want := wavHeaderSize + 2*len(channels[0]); len(data) != want {
		return nil, fmt.Errorf("file: %d bytes, want %d (canonical header + samples)", len(data), want)
	}
	rec.PCM = channels[0]
	return rec, nil
}

// transcript is a reference text with the time span its words occupy.
type transcript struct {
	words      []string
	start, end float64 // seconds
}

// reply is the verbose_json the stand-in sends, in the OpenAI shape:
// top-level words (with a leading space, as Whisper tokens have), one
// segment with avg_logprob and no word probabilities unless probs is set.
func reply(lang string, tr transcript, duration, avgLogprob float64, probs []float64) map[string]any {
	var words []map[string]any
	n := len(tr.words)
	step := (tr.end - tr.start) / float64(max(n, 1))
	for i, w := range tr.words {
		m := map[string]any{"word": " " + w, "start": round3(tr.start + step*float64(i)), "end": round3(tr.start + step*float64(i+1))}
		if probs != nil {
			m["probability"] = probs[i]
		}
		words = append(words, m)
	}
	text := " " + strings.Join(tr.words, " ")
	return map[string]any{
		"task":     "transcribe",
		"language": lang,
		"duration": duration,
		"text":     text,
		"segments": []map[string]any{{
			"id": 0, "seek": 0, "start": tr.start, "end": tr.end, "text": text, "tokens": []int{50364, 50414},
			"temperature": 0.0, "avg_logprob": avgLogprob, "compression_ratio": 1.2, "no_speech_prob": 0.01,
		}},
		"words": words,
	}
}

func round3(v float64) float64 { return math.Round(v*1000) / 1000 }

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(v)
}

// clip loads one mono file of the shared speech set and its transcript.
func clip(t testing.TB, file string) ([]int16, []string) {
	t.Helper()
	for _, c := range recognizertest.Manifest(t) {
		if c.File == file {
			ch := recognizertest.ReadWAV16(t, c.Path)
			return ch[0], strings.Fields(c.Transcript)
		}
	}
	t.Fatalf("%s not in manifest", file)
	return nil, nil
}

// testConfig is a valid configuration for url.
func testConfig(url string) Config {
	return Config{Endpoint: openai.Endpoint{URL: url, Model: "Systran/faster-whisper-small"}, Capacity: 2}
}

// newHTTPEngine starts the stand-in on a loopback port and an engine
// talking to it; cleanup closes both and checks for leaked goroutines.
func newHTTPEngine(t *testing.T, cfg Config, respond func(http.ResponseWriter, *http.Request, *received)) (*Engine, *standin) {
	t.Helper()
	noLeaks(t)
	si := &standin{t: t, respond: respond}
	srv := httptest.NewServer(si)
	t.Cleanup(srv.Close)
	if cfg.URL == "" {
		cfg.URL = srv.URL + "/v1"
	}
	e, err := New(cfg, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	return e, si
}

// newPipeEngine is newHTTPEngine over in-memory connections, for tests in
// a testing/synctest bubble (where the stand-in's clock is fake too). Call
// it inside the bubble.
func newPipeEngine(t *testing.T, cfg Config, respond func(http.ResponseWriter, *http.Request, *received)) (*Engine, *standin) {
	t.Helper()
	si := &standin{t: t, respond: respond}
	l := &pipeListener{conns: make(chan net.Conn), done: make(chan struct{})}
	srv := &http.Server{Handler: si}
	served := make(chan struct{})
	go func() {
		defer close(served)
		srv.Serve(l)
	}()
	if cfg.URL == "" {
		cfg.URL = "http://standin.invalid/v1"
	}
	e, err := New(cfg, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	e.client = openai.NewClient(e.cfg.Endpoint, openai.Options{MaxIdleConns: cfg.Capacity, MaxResponseBytes: maxResponseBytes,
		Transport: &http.Transport{DialContext: l.dial, MaxIdleConnsPerHost: cfg.Capacity}})
	t.Cleanup(func() {
		e.Close()
		srv.Close()
		<-served
	})
	return e, si
}

// pipeListener hands out the server ends of net.Pipe connections.
type pipeListener struct {
	conns chan net.Conn
	done  chan struct{}
	once  sync.Once
}

func (l *pipeListener) Accept() (net.Conn, error) {
	select {
	case c := <-l.conns:
		return c, nil
	case <-l.done:
		return nil, net.ErrClosed
	}
}

func (l *pipeListener) Close() error {
	l.once.Do(func() { close(l.done) })
	return nil
}

func (l *pipeListener) Addr() net.Addr { return pipeAddr{} }

func (l *pipeListener) dial(ctx context.Context, _, _ string) (net.Conn, error) {
	client, server := net.Pipe()
	select {
	case l.conns <- server:
		return client, nil
	case <-l.done:
		return nil, &net.OpError{Op: "dial", Net: "pipe", Err: net.ErrClosed}
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

type pipeAddr struct{}

func (pipeAddr) Network() string { return "pipe" }
func (pipeAddr) String() string  { return "pipe" }

// wait advances the fake clock of a synctest bubble by d.
func wait(d time.Duration) {
	t := time.NewTimer(d)
	<-t.C
}

// noLeaks fails the test if, once its cleanups have run, goroutines of
// this package or HTTP client connections are still alive after 5 s.
func noLeaks(t *testing.T) {
	t.Helper()
	t.Cleanup(func() {
		deadline := time.Now().Add(5 * time.Second)
		tick := time.NewTicker(10 * time.Millisecond)
		defer tick.Stop()
		for ; ; <-tick.C {
			leaked := leakedGoroutines()
			if len(leaked) == 0 {
				return
			}
			if time.Now().After(deadline) {
				t.Errorf("leaked goroutines:\n%s", strings.Join(leaked, "\n\n"))
				return
			}
		}
	})
}

func leakedGoroutines() []string {
	buf := make([]byte, 1<<20)
	buf = buf[:runtime.Stack(buf, true)]
	var out []string
	for g := range strings.SplitSeq(string(buf), "\n\n") {
		if strings.Contains(g, "remote.(*Stream)") || strings.Contains(g, "remote.(*Engine)") ||
			strings.Contains(g, "net/http.(*persistConn)") {
			out = append(out, g)
		}
	}
	return out
}

func (s *standin) maxInflight() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.peak
}
