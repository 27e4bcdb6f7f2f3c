// Command openaibench measures the OpenAI-compatible door against the
// /v2 API it stands on, in the same run, against the real earshotd
// binary: the same short clip transcribed end to end, from sending the
// file to holding the transcript, by clients each doing one request at a
// time (closed loop). /v1 is one POST /v1/audio/transcriptions; /v2 is
// POST /v2/upload, POST /v2/pre-recorded, then GET /v2/pre-recorded/{id}
// every -poll until done, as a /v2 client without callbacks does. Each
// client alternates the two request by request, so both see the same
// machine (a shared box's load moves more than the door costs). It prints
// requests per second and latency percentiles of each and their ratio.
//
//	go run ./bench/cmd/openaibench [-duration 60s] [-clients 2] [-poll 20ms] [-speech FILE]
package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/earshot-dev/earshot/bench/internal/benchd"
)

func main() {
	duration := flag.Duration("duration", 60*time.Second, "length of the run")
	clients := flag.Int("clients", 2, "concurrent clients (the daemon runs as many workers)")
	poll := flag.Duration("poll", 20*time.Millisecond, "how often the /v2 client reads its job")
	speech := flag.String("speech", "../shared/testdata/speech/pocketsphinx-goforward.wav", "the clip")
	flag.Parse()
	if err := run(*duration, *clients, *poll, *speech); err != nil {
		fmt.Fprintln(os.Stderr, "openaibench:", err)
		os.Exit(1)
	}
}

// door is one way of transcribing the clip end to end, and what its
// requests took.
type door struct {
	name string
	do   func() error
	lats []float64 // ms
	errs int
}

func run(duration time.Duration, clients int, poll time.Duration, speech string) error {
	audio, err := os.ReadFile(speech)
	if err != nil {
		return err
	}
	d, err := benchd.Start("", "--decoders", strconv.Itoa(clients), "--set", "workers="+strconv.Itoa(clients), "--log-level", "info")
	if err != nil {
		return err
	}
	defer d.Stop()
	name := filepath.Base(speech)
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64}, Timeout: time.Minute}
	v1 := &door{name: "POST /v1/audio/transcriptions", do: func() error { return viaV1(client, d, name, audio) }}
	v2 := &door{name: "/v2: upload, pre-recorded, poll", do: func() error { return viaV2(client, d, name, audio, poll) }}
	doors := []*door{v2, v1}
	for range 3 { // warm both
		for _, dr := range doors {
			if err := dr.do(); err != nil {
				return err
			}
		}
	}
	cpu := d.CPUSeconds()
	load(doors, clients, duration)
	cpu = d.CPUSeconds() - cpu
	n := len(v1.lats) + len(v2.lats)
	fmt.Printf("%s, %d clients closed loop for %s, each client alternating the doors request by request (so both see the same machine), /v2 polled every %s; daemon CPU %.0f ms per request of either door\n\n",
		name, clients, duration, poll, 1000*cpu/float64(max(n, 1)))
	fmt.Printf("| door | requests | req/s (clients / mean latency) | mean ms | p50 ms | p90 ms | p99 ms | errors |\n|---|---|---|---|---|---|---|---|\n")
	for _, dr := range doors {
		fmt.Printf("| %s | %d | %.2f | %.0f | %.0f | %.0f | %.0f | %d |\n", dr.name, len(dr.lats), float64(clients)/(mean(dr.lats)/1000),
			mean(dr.lats), pct(dr.lats, 0.5), pct(dr.lats, 0.9), pct(dr.lats, 0.99), dr.errs)
	}
	fmt.Printf("\n/v1 against /v2: req/s %.3f, mean latency %.3f, p50 latency %.3f (overhead target ≤ 5 %%)\n",
		mean(v2.lats)/mean(v1.lats), mean(v1.lats)/mean(v2.lats), pct(v1.lats, 0.5)/pct(v2.lats, 0.5))
	return nil
}

// load runs clients closed loops for duration, each alternating the
// doors request by request, client i starting with door i.
func load(doors []*door, clients int, duration time.Duration) {
	var mu sync.Mutex
	var wg sync.WaitGroup
	end := time.Now().Add(duration)
	for c := range clients {
		wg.Go(func() {
			for i := c; time.Now().Before(end); i++ {
				dr := doors[i%len(doors)]
				t := time.Now()
				err := dr.do()
				ms := float64(time.Since(t).Microseconds()) / 1000
				mu.Lock()
				if err != nil {
					dr.errs++
				} else {
					dr.lats = append(dr.lats, ms)
				}
				mu.Unlock()
			}
		})
	}
	wg.Wait()
}

func mean(l []float64) float64 {
	var s float64
	for _, v := range l {
		s += v
	}
	return s / float64(max(len(l), 1))
}

func pct(l []float64, p float64) float64 {
	if len(l) == 0 {
		return 0
	}
	s := slices.Clone(l)
	slices.Sort(s)
	return s[min(len(s)-1, int(p*float64(len(s))))]
}

func multipartBody(field, name string, audio []byte, fields ...string) (*bytes.Buffer, string) {
	var buf bytes.Buffer
	mw := multipart.NewWriter(&buf)
	fw, _ := mw.CreateFormFile(field, name)
	fw.Write(audio)
	for i := 0; i+1 < len(fields); i += 2 {
		mw.WriteField(fields[i], fields[i+1])
	}
	mw.Close()
	return &buf, mw.FormDataContentType()
}

// call does one request and decodes a JSON answer of status want.
func call(c *http.Client, req *http.Request, key string, want int, out any) error {
	req.Header.Set("x-service-key", key)
	resp, err := c.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != want {
		return fmt.Errorf("%s %s: %d %.200s", req.Method, req.URL.Path, resp.StatusCode, b)
	}
	return json.Unmarshal(b, out)
}

func viaV1(c *http.Client, d *benchd.Daemon, name string, audio []byte) error {
	body, ctype := multipartBody("file", name, audio, "model", "whisper-1")
	req, _ := http.NewRequest("POST", d.Base+"/v1/audio/transcriptions", body)
	req.Header.Set("Content-Type", ctype)
	var res struct{ Text string }
	if err := call(c, req, d.Key, 200, &res); err != nil {
		return err
	}
	if res.Text == "" {
		return fmt.Errorf("/v1: empty transcript")
	}
	return nil
}

func viaV2(c *http.Client, d *benchd.Daemon, name string, audio []byte, poll time.Duration) error {
	body, ctype := multipartBody("audio", name, audio)
	req, _ := http.NewRequest("POST", d.Base+"/v2/upload", body)
	req.Header.Set("Content-Type", ctype)
	var up struct {
		AudioURL string `json:"audio_url"`
	}
	if err := call(c, req, d.Key, 200, &up); err != nil {
		return err
	}
	b, _ := json.Marshal(map[string]string{"audio_url": up.AudioURL})
	req, _ = http.NewRequest("POST", d.Base+"/v2/pre-recorded", bytes.NewReader(b))
	req.Header.Set("Content-Type", "application/json")
	var job struct{ ID string }
	if err := call(c, req, d.Key, 201, &job); err != nil {
		return err
	}
	deadline := time.Now().Add(time.Minute)
	for time.Now().Before(deadline) {
		req, _ = http.NewRequest("GET", d.Base+"/v2/pre-recorded/"+job.ID, nil)
		var rec struct {
			Status string
			Result struct {
				Transcription struct {
					FullTranscript string `json:"full_transcript"`
				}
			}
		}
		if err := call(c, req, d.Key, 200, &rec); err != nil {
			return err
		}
		switch rec.Status {
		case "done":
			if rec.Result.Transcription.FullTranscript == "" {
				return fmt.Errorf("/v2: empty transcript")
			}
			return nil
		case "error":
			return fmt.Errorf("/v2: job %s failed", job.ID)
		}
		time.Sleep(poll) // the client's polling interval
	}
	return fmt.Errorf("/v2: job %s not done in a minute", job.ID)
}
