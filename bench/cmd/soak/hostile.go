package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"mime/multipart"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"
)

// hostile is the bad-day mix of issue 13, run by another account beside the
// normal traffic: vocabularies that once crashed the daemon, connections
// that trickle one header byte every 5 s, uploads with 900 KiB filenames,
// live sessions that never connect, and audio_urls that serve 10 bytes/s.
// Its requests are expected to be refused or bounded; what they get is
// counted (outcomes), never as errors of the normal traffic.
type hostile struct {
	c        *client // the hostile account's client
	wav      []byte
	slowURL  string // an audio_url served at 10 bytes/s
	slowConn int    // trickling connections held open

	mu       sync.Mutex
	outcomes map[string]map[string]int // guarded by mu: action → outcome → count
}

func (h *hostile) note(action, outcome string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.outcomes[action] == nil {
		h.outcomes[action] = map[string]int{}
	}
	h.outcomes[action][outcome]++
}

// status does one request of the hostile account and notes its status.
func (h *hostile) status(action, method, path string, body []byte, ctype string) (int, []byte) {
	req, _ := http.NewRequest(method, h.c.base+path, bytes.NewReader(body))
	req.Header.Set("x-service-key", h.c.key)
	if ctype != "" {
		req.Header.Set("Content-Type", ctype)
	}
	resp, err := h.c.hc.Do(req)
	if err != nil {
		h.note(action, "transport error")
		return 0, nil
	}
	defer resp.Body.Close()
	var buf bytes.Buffer
	buf.ReadFrom(resp.Body)
	h.note(action, fmt.Sprint(resp.StatusCode))
	return resp.StatusCode, buf.Bytes()
}

var crashVocabularies = func() [][]any {
	items := func(n int, pron string) []any {
		out := make([]any, n)
		for i := range out {
			out[i] = map[string]any{"value": fmt.Sprintf("word%c%c%c", 'a'+i%26, 'a'+i/26%26, 'a'+i/676%26), "pronunciations": []string{pron}}
		}
		return out
	}
	return [][]any{{"Kah", "Kaa", "Cah", "Caa", "Khaa", "Kha", "Qah"}, items(5, "K AA"), items(10, "G OW"), items(1000, "K AA")}
}()

// repeat runs f every d in a goroutine of wg until ctx ends.
func repeat(ctx context.Context, wg *sync.WaitGroup, d time.Duration, f func()) {
	wg.Go(func() {
		t := time.NewTicker(d)
		defer t.Stop()
		for {
			f()
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
		}
	})
}

// run starts every hostile actor until ctx ends.
func (h *hostile) run(ctx context.Context, wg *sync.WaitGroup) {
	every := func(d time.Duration, f func()) { repeat(ctx, wg, d, f) }
	var up struct {
		AudioURL string `json:"audio_url"`
	}
	if st, b := h.upload("soak.wav"); st == 200 {
		json.Unmarshal(b, &up)
	}
	n := 0
	every(10*time.Second, func() {
		if up.AudioURL == "" {
			return
		}
		body, _ := json.Marshal(map[string]any{"audio_url": up.AudioURL, "custom_vocabulary": true,
			"custom_vocabulary_config": map[string]any{"vocabulary": crashVocabularies[n%len(crashVocabularies)]}})
		n++
		h.status("crash vocabulary job", "POST", "/v2/pre-recorded", body, "application/json")
	})
	every(5*time.Second, func() { h.upload(strings.Repeat("f", 900<<10) + ".wav") })
	every(2*time.Second, func() { h.status("live never connected", "POST", "/v2/live", []byte(`{}`), "application/json") })
	every(10*time.Second, func() {
		body, _ := json.Marshal(map[string]any{"audio_url": h.slowURL})
		h.status("slow audio_url job", "POST", "/v2/pre-recorded", body, "application/json")
	})
	wg.Go(func() { h.trickle(ctx) })
}

func (h *hostile) upload(filename string) (int, []byte) {
	action := "upload"
	if len(filename) > 1<<10 {
		action = "upload with a 900 KiB filename"
	}
	return h.uploadAs(action, filename, h.wav)
}

// uploadAs uploads audio as filename and notes the outcome under action.
func (h *hostile) uploadAs(action, filename string, audio []byte) (int, []byte) {
	var buf bytes.Buffer
	mw := multipart.NewWriter(&buf)
	fw, _ := mw.CreateFormFile("audio", filename)
	fw.Write(audio)
	mw.Close()
	return h.status(action, "POST", "/v2/upload", buf.Bytes(), mw.FormDataContentType())
}

// trickle holds h.slowConn connections (from 127.0.0.2..127.0.0.9, as
// several hosts would) that send one header byte every 5 s, redialling
// when the daemon closes one.
func (h *hostile) trickle(ctx context.Context) {
	addr := strings.TrimPrefix(h.c.base, "http://")
	var wg sync.WaitGroup
	for i := range h.slowConn {
		wg.Go(func() {
			src := &net.TCPAddr{IP: net.IPv4(127, 0, 0, byte(2+i%8))}
			d := net.Dialer{LocalAddr: src, Timeout: 5 * time.Second}
			for ctx.Err() == nil {
				conn, err := d.DialContext(ctx, "tcp", addr)
				if err != nil {
					h.note("slow header connection", "dial refused")
					select {
					case <-ctx.Done():
					case <-time.After(5 * time.Second):
					}
					continue
				}
				start := time.Now()
				msg := []byte("GET /v2/pre-recorded HTTP/1.1\r\nHost: x\r\nX-Padding: " + strings.Repeat("a", 4096))
				for j := 0; ctx.Err() == nil && j < len(msg); j++ {
					if _, err := conn.Write(msg[j : j+1]); err != nil {
						break
					}
					select {
					case <-ctx.Done():
					case <-time.After(5 * time.Second):
					}
				}
				conn.Close()
				if ctx.Err() == nil {
					h.note("slow header connection", fmt.Sprintf("closed by the daemon after %s", time.Since(start).Round(10*time.Second)))
				}
			}
		})
	}
	wg.Wait()
}

// slowServer serves wav at 10 bytes/s on a loopback port.
func slowServer(wav []byte) (url string, stop func()) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		panic(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "audio/wav")
		w.Header().Set("Content-Length", fmt.Sprint(len(wav)))
		for i := 0; i < len(wav); i += 10 {
			if _, err := w.Write(wav[i:min(i+10, len(wav))]); err != nil {
				return
			}
			w.(http.Flusher).Flush()
			select {
			case <-r.Context().Done():
				return
			case <-time.After(time.Second):
			}
		}
	})}
	go srv.Serve(ln)
	return "http://" + ln.Addr().String() + "/slow.wav", func() { srv.Close() }
}

// report writes the outcome table.
func (h *hostile) report(b *strings.Builder) {
	h.mu.Lock()
	defer h.mu.Unlock()
	fmt.Fprintf(b, "\n| hostile action | outcomes |\n|---|---|\n")
	for _, a := range sortedKeys(h.outcomes) {
		var parts []string
		for _, o := range sortedKeys(h.outcomes[a]) {
			parts = append(parts, fmt.Sprintf("%s: %d", o, h.outcomes[a][o]))
		}
		fmt.Fprintf(b, "| %s | %s |\n", a, strings.Join(parts, ", "))
	}
}
