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
	name  string
	do    func() (job string, err error)
	lats  []float64 // ms, end to end
	spans []float64 // ms, each request's job from created_at to completed_at
	errs  int
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
	v1 := &door{name: "POST /v1/audio/transcriptions", do: func() (string, error) { return viaV1(d, name, audio) }}
	v2 := &door{name: "/v2: upload, pre-recorded, poll", do: func() (string, error) { return viaV2(d, name, audio, poll) }}
	doors := []*door{v2, v1}
	for range 3 { // warm both
		for _, dr := range doors {
			if _, err := dr.do(); err != nil {
				return err
			}
		}
	}
	cpu := d.CPUSeconds()
	load(d, doors, clients, duration)
	cpu = d.CPUSeconds() - cpu
	n := len(v1.lats) + len(v2.lats)
	fmt.Printf("%s, %d clients closed loop for %s, each client alternating the doors request by request (so both see the same machine), /v2 polled every %s; daemon CPU %.0f ms per request of either door\n\n",
		name, clients, duration, poll, 1000*cpu/float64(max(n, 1)))
	fmt.Printf("| door | requests | req/s (clients / mean latency) | mean ms | p50 ms | p90 ms | p99 ms | job created to completed, mean ms | door's own: latency - job, mean ms | errors |\n|---|---|---|---|---|---|---|---|---|---|\n")
	for _, dr := range doors {
		fmt.Printf("| %s | %d | %.2f | %.0f | %.0f | %.0f | %.0f | %.0f | %.0f | %d |\n", dr.name, len(dr.lats), float64(clients)/(mean(dr.lats)/1000),
			mean(dr.lats), pct(dr.lats, 0.5), pct(dr.lats, 0.9), pct(dr.lats, 0.99), mean(dr.spans), mean(dr.lats)-mean(dr.spans), dr.errs)
	}
	fmt.Printf("\n/v1 against /v2: req/s %.3f, mean latency %.3f, p50 latency %.3f; the jobs alone %.3f (overhead target ≤ 5 %%)\n",
		mean(v2.lats)/mean(v1.lats), mean(v1.lats)/mean(v2.lats), pct(v1.lats, 0.5)/pct(v2.lats, 0.5), mean(v1.spans)/mean(v2.spans))
	return nil
}

// load runs clients closed loops for duration, each alternating the
// doors request by request, client i starting with door i.
func load(d *benchd.Daemon, doors []*door, clients int, duration time.Duration) {
	var mu sync.Mutex
	var wg sync.WaitGroup
	end := time.Now().Add(duration)
	for c := range clients {
		wg.Go(func() {
			for i := c; time.Now().Before(end); i++ {
				dr := doors[i%len(doors)]
				t := time.Now()
				id, err := dr.do()
				ms := float64(time.Since(t).Microseconds()) / 1000
				var span float64
				if err == nil {
					span, err = jobSpan(d, id) // not timed
				}
				mu.Lock()
				if err != nil {
					dr.errs++
				} else {
					dr.lats = append(dr.lats, ms)
					dr.spans = append(dr.spans, span)
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

// jobSpan is a job's time from created_at to completed_at, in ms.
func jobSpan(d *benchd.Daemon, id string) (float64, error) {
	var rec struct {
		CreatedAt   time.Time `json:"created_at"`
		CompletedAt time.Time `json:"completed_at"`
	}
	if err := d.Call("GET", "/v2/pre-recorded/"+id, d.Key, "", http.StatusOK, &rec); err != nil {
		return 0, err
	}
	return float64(rec.CompletedAt.Sub(rec.CreatedAt).Microseconds()) / 1000, nil
}

// viaV1 transcribes with one POST /v1/audio/transcriptions and returns
// the job behind it (earshot-job-id).
func viaV1(d *benchd.Daemon, name string, audio []byte) (string, error) {
	body, ctype := multipartBody("file", name, audio, "model", "whisper-1")
	req, _ := http.NewRequest("POST", d.Base+"/v1/audio/transcriptions", body)
	req.Header.Set("Content-Type", ctype)
	req.Header.Set("Authorization", "Bearer "+d.Key)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	var res struct{ Text string }
	if err := json.NewDecoder(resp.Body).Decode(&res); err != nil || resp.StatusCode != http.StatusOK || res.Text == "" {
		return "", fmt.Errorf("/v1: %d %q %v", resp.StatusCode, res.Text, err)
	}
	return resp.Header.Get("earshot-job-id"), nil
}

// viaV2 transcribes as a /v2 client without callbacks and returns the
// job.
func viaV2(d *benchd.Daemon, name string, audio []byte, poll time.Duration) (string, error) {
	id, text, err := d.PreRecorded(name, audio, poll, time.Minute)
	if err == nil && text == "" {
		err = fmt.Errorf("/v2: job %s: empty transcript", id)
	}
	return id, err
}
