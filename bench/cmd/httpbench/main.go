// Command httpbench measures the API's throughput and latency against the
// real earshotd binary, side by side with a reference in the same run:
// wrk against GET /v2/pre-recorded/{id}, and against a bare fasthttp server
// answering the same bytes (the ceiling of the HTTP stack on this machine);
// POST /v2/pre-recorded at a fixed rate (open loop) with latency
// percentiles; the daemon's RSS with two decoders.
//
//	go run ./bench/cmd/httpbench [-duration 10s] [-rate 500]
package main

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/earshot-dev/earshot/bench/internal/benchd"
)

func main() {
	duration := flag.Duration("duration", 10*time.Second, "length of each load run")
	rate := flag.Int("rate", 500, "POST requests per second")
	speech := flag.String("speech", "../shared/testdata/speech/pocketsphinx-goforward.wav", "audio to upload")
	flag.Parse()
	if err := run(*duration, *rate, *speech); err != nil {
		fmt.Fprintln(os.Stderr, "httpbench:", err)
		os.Exit(1)
	}
}

func run(duration time.Duration, rate int, speech string) error {
	d, err := benchd.Start("", "--decoders", "2", "--log-level", "info")
	if err != nil {
		return err
	}
	defer d.Stop()
	base, key := d.Base, d.Key

	audioURL, err := upload(d, speech)
	if err != nil {
		return err
	}
	id, err := create(d, audioURL)
	if err != nil {
		return err
	}
	body, err := waitDone(base, key, id)
	if err != nil {
		return err
	}
	rss := d.RSSMB()

	// Reference: fasthttp answering the same bytes with no work at all.
	refLn, _ := net.Listen("tcp", "127.0.0.1:0")
	ref := &fasthttp.Server{Handler: func(ctx *fasthttp.RequestCtx) {
		ctx.SetContentType("application/json")
		ctx.SetBody(body)
	}}
	go ref.Serve(refLn)
	defer ref.Shutdown()

	sec := strconv.Itoa(int(duration.Seconds())) + "s"
	getRPS, err := wrk("-t2", "-c64", "-d"+sec, "-H", "x-service-key: "+key, base+"/v2/pre-recorded/"+id)
	if err != nil {
		return err
	}
	refRPS, err := wrk("-t2", "-c64", "-d"+sec, "http://"+refLn.Addr().String()+"/v2/pre-recorded/"+id)
	if err != nil {
		return err
	}
	lat, errs := postLoad(base, key, audioURL, rate, duration)

	fmt.Printf("| measure | earshot | reference | ratio | target |\n|---|---|---|---|---|\n")
	fmt.Printf("| GET /v2/pre-recorded/{id} req/s (wrk -t2 -c64) | %.0f | %.0f (bare fasthttp, same body) | %.2f | ≥ 20000 req/s |\n", getRPS, refRPS, getRPS/refRPS)
	fmt.Printf("| POST /v2/pre-recorded at %d req/s: p50 / p99 / max ms | %.1f / %.1f / %.1f | | | p99 < 25 ms |\n", rate, lat[0], lat[1], lat[2])
	fmt.Printf("| POST errors | %d | | | 0 |\n", errs)
	fmt.Printf("| daemon RSS after a job, 2 decoders (MB) | %.0f | | | ≤ 350 MB |\n", rss)
	return nil
}

// upload stores the file at path through the daemon's upload door.
func upload(d *benchd.Daemon, path string) (string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return "", err
	}
	return d.Upload(filepath.Base(path), b)
}

// create makes a pre-recorded job of audioURL and returns its id.
func create(d *benchd.Daemon, audioURL string) (string, error) {
	var c struct{ ID string }
	err := d.Call("POST", "/v2/pre-recorded", d.Key, `{"audio_url":"`+audioURL+`"}`, http.StatusCreated, &c)
	return c.ID, err
}

func waitDone(base, key, id string) ([]byte, error) {
	deadline := time.Now().Add(2 * time.Minute)
	for time.Now().Before(deadline) {
		req, _ := http.NewRequest("GET", base+"/v2/pre-recorded/"+id, nil)
		req.Header.Set("x-service-key", key)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return nil, err
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if bytes.Contains(b, []byte(`"status":"done"`)) {
			return b, nil
		}
		time.Sleep(200 * time.Millisecond)
	}
	return nil, fmt.Errorf("job %s not done", id)
}

var rpsRE = regexp.MustCompile(`Requests/sec:\s+([0-9.]+)`)

func wrk(args ...string) (float64, error) {
	out, err := exec.Command("wrk", args...).CombinedOutput()
	if err != nil {
		return 0, fmt.Errorf("wrk: %v %s", err, out)
	}
	if bytes.Contains(out, []byte("Non-2xx")) {
		return 0, fmt.Errorf("wrk saw errors: %s", out)
	}
	m := rpsRE.FindSubmatch(out)
	if m == nil {
		return 0, fmt.Errorf("wrk output: %s", out)
	}
	return strconv.ParseFloat(string(m[1]), 64)
}

// postLoad sends POSTs open-loop at rate per second and returns the p50,
// p99 and max latency in ms and the count of non-201 answers.
func postLoad(base, key, audioURL string, rate int, d time.Duration) ([3]float64, int) {
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 256}, Timeout: 10 * time.Second}
	body := []byte(`{"audio_url":"` + audioURL + `"}`)
	var mu sync.Mutex
	var lats []float64
	errs := 0
	var wg sync.WaitGroup
	tick := time.NewTicker(time.Second / time.Duration(rate))
	defer tick.Stop()
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
loop:
	for {
		select {
		case <-ctx.Done():
			break loop
		case <-tick.C:
		}
		wg.Go(func() {
			req, _ := http.NewRequest("POST", base+"/v2/pre-recorded", bytes.NewReader(body))
			req.Header.Set("x-service-key", key)
			req.Header.Set("Content-Type", "application/json")
			start := time.Now()
			resp, err := client.Do(req)
			el := float64(time.Since(start).Microseconds()) / 1000
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				errs++
				return
			}
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if resp.StatusCode != 201 {
				errs++
			}
			lats = append(lats, el)
		})
	}
	wg.Wait()
	slices.Sort(lats)
	if len(lats) == 0 {
		return [3]float64{}, errs
	}
	pct := func(p float64) float64 { return lats[min(len(lats)-1, int(p*float64(len(lats))))] }
	return [3]float64{pct(0.5), pct(0.99), lats[len(lats)-1]}, errs
}
