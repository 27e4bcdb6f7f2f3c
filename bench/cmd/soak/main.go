// Command soak runs a bounded mixed load against a loopback earshotd
// (uploads, pre-recorded jobs, list/get/delete, live WebSocket sessions) and
// reports throughput, error rate, latency percentiles, and the daemon's RSS,
// goroutines (from /metrics go_goroutines) and open fds over time.
//
// It runs in two phases on one daemon: a quiet phase of normal traffic
// only (-quiet), the reference, then the same normal traffic beside the
// hostile mix of another account (hostile.go) for -duration. The report
// compares the normal traffic's p99 latency between the phases, counts
// its errors (which must be 0) and says whether the daemon stayed up.
//
//	go run ./bench/cmd/soak -duration 10m -out bench/SOAK.md
package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/fasthttp/websocket"

	"github.com/earshot-dev/earshot/bench/internal/benchd"
)

type stats struct {
	mu   sync.Mutex
	lat  map[string][]time.Duration // guarded by mu
	errs map[string]int             // guarded by mu
	last map[string]string          // guarded by mu: last error text per op
}

func (s *stats) add(op string, d time.Duration, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.lat[op] = append(s.lat[op], d)
	if err != nil {
		s.errs[op]++
		s.last[op] = err.Error()
	}
}

type client struct {
	base, key string
	hc        *http.Client
	st        *stats
}

func (c *client) req(op, method, path string, body []byte, ctype string, want int, out any) error {
	start := time.Now()
	req, _ := http.NewRequest(method, c.base+path, bytes.NewReader(body))
	req.Header.Set("x-service-key", c.key)
	if ctype != "" {
		req.Header.Set("Content-Type", ctype)
	}
	resp, err := c.hc.Do(req)
	if err == nil {
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != want {
			err = fmt.Errorf("%s %s: %d %.200s", method, path, resp.StatusCode, b)
		} else if out != nil {
			err = json.Unmarshal(b, out)
		}
	}
	c.st.add(op, time.Since(start), err)
	return err
}

// preRecorded: upload, create, poll until done, list, read, delete.
func (c *client) preRecorded(ctx context.Context, wav []byte) {
	var buf bytes.Buffer
	mw := multipart.NewWriter(&buf)
	fw, _ := mw.CreateFormFile("audio", "soak.wav")
	fw.Write(wav)
	mw.Close()
	var up struct {
		AudioURL string `json:"audio_url"`
	}
	if c.req("upload", "POST", "/v2/upload", buf.Bytes(), mw.FormDataContentType(), 200, &up) != nil {
		return
	}
	body, _ := json.Marshal(map[string]any{"audio_url": up.AudioURL})
	var job struct{ ID string }
	if c.req("create", "POST", "/v2/pre-recorded", body, "application/json", 201, &job) != nil {
		return
	}
	start := time.Now()
	for ctx.Err() == nil {
		var rec struct{ Status string }
		if c.req("get", "GET", "/v2/pre-recorded/"+job.ID, nil, "", 200, &rec) != nil {
			return
		}
		if rec.Status == "done" || rec.Status == "error" {
			var err error
			if rec.Status == "error" {
				err = fmt.Errorf("job %s ended error", job.ID)
			}
			c.st.add("job (create to done)", time.Since(start), err)
			break
		}
		time.Sleep(200 * time.Millisecond) // client polling interval
	}
	c.req("list", "GET", "/v2/pre-recorded?limit=20&status=done", nil, "", 200, nil)
	c.req("delete", "DELETE", "/v2/pre-recorded/"+job.ID, nil, "", 202, nil)
}

// live: create a session, stream the clip at 4x real time, stop, read to close.
func (c *client) live(pcm []byte) { c.liveWith([]byte(`{}`), pcm) }

// liveWith is live with a session of the given POST /v2/live body; pcm
// matches its format.
func (c *client) liveWith(body, pcm []byte) {
	var s struct{ ID, URL string }
	if c.req("live create", "POST", "/v2/live", body, "application/json", 201, &s) != nil {
		return
	}
	start := time.Now()
	err := func() error {
		conn, resp, err := websocket.DefaultDialer.Dial(s.URL, nil)
		if resp != nil {
			resp.Body.Close()
		}
		if err != nil {
			return err
		}
		defer conn.Close()
		done := make(chan error, 1)
		go func() {
			for {
				if _, _, err := conn.ReadMessage(); err != nil {
					if ce, ok := err.(*websocket.CloseError); ok && ce.Code == 1000 {
						done <- nil
					} else {
						done <- err
					}
					return
				}
			}
		}()
		for i := 0; i < len(pcm); i += 3200 {
			if err := conn.WriteMessage(websocket.BinaryMessage, pcm[i:min(i+3200, len(pcm))]); err != nil {
				return err
			}
			time.Sleep(25 * time.Millisecond) // 100 ms of audio every 25 ms: 4x real time
		}
		conn.WriteJSON(map[string]any{"type": "stop_recording"})
		select {
		case err := <-done:
			return err
		case <-time.After(2 * time.Minute):
			return fmt.Errorf("live session %s did not end", s.ID)
		}
	}()
	c.st.add("live session (connect to close)", time.Since(start), err)
	if err == nil {
		c.req("live file", "GET", "/v2/live/"+s.ID+"/file", nil, "", 200, nil)
		c.req("live delete", "DELETE", "/v2/live/"+s.ID, nil, "", 202, nil)
	}
}

type sample struct {
	at         time.Duration
	rss        float64
	goroutines int
	fds        int
}

func goroutines(base string) int {
	resp, err := http.Get(base + "/metrics")
	if err != nil {
		return -1
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "go_goroutines "); ok {
			n, _ := strconv.ParseFloat(v, 64)
			return int(n)
		}
	}
	return -1
}

func fds(pid int) int {
	ents, err := os.ReadDir(fmt.Sprintf("/proc/%d/fd", pid))
	if err != nil {
		return -1
	}
	return len(ents)
}

func pct(ds []time.Duration, p float64) float64 {
	if len(ds) == 0 {
		return 0
	}
	i := min(len(ds)-1, int(float64(len(ds))*p))
	return float64(ds[i].Microseconds()) / 1000
}

func newStats() *stats {
	return &stats{lat: map[string][]time.Duration{}, errs: map[string]int{}, last: map[string]string{}}
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// normal runs the normal traffic until ctx ends.
func normal(ctx context.Context, wg *sync.WaitGroup, c *client, wav, pcm []byte, pre, lives, lists int) {
	loop := func(n int, f func()) {
		for range n {
			wg.Go(func() {
				for ctx.Err() == nil {
					f()
				}
			})
		}
	}
	loop(pre, func() { c.preRecorded(ctx, wav) })
	loop(lives, func() { c.live(pcm) })
	loop(lists, func() {
		c.req("list", "GET", "/v2/pre-recorded?limit=50", nil, "", 200, nil)
		c.req("list live", "GET", "/v2/live?limit=50", nil, "", 200, nil)
		time.Sleep(50 * time.Millisecond) // 20 list pairs per second per client
	})
	// Deliberate bad requests, counted apart: they must answer 4xx.
	loop(1, func() {
		c.req("bad request (expect 400)", "POST", "/v2/pre-recorded", []byte(`{"audio_url":5}`), "application/json", 400, nil)
		time.Sleep(time.Second) // one per second
	})
}

func main() {
	duration := flag.Duration("duration", 10*time.Minute, "how long to run the load beside the hostile mix")
	quiet := flag.Duration("quiet", 2*time.Minute, "how long to run the normal load alone first (the reference)")
	every := flag.Duration("sample", 30*time.Second, "resource sampling interval")
	speech := flag.String("speech", "../shared/testdata/speech/pocketsphinx-goforward.wav", "16 kHz 16-bit mono WAV")
	pre := flag.Int("prerecorded", 2, "concurrent pre-recorded clients")
	lives := flag.Int("live", 2, "concurrent live clients")
	lists := flag.Int("list", 1, "concurrent list/get clients")
	slowConns := flag.Int("slow-conns", 400, "hostile connections trickling a header byte every 5 s")
	out := flag.String("out", "", "also write the report (markdown) here")
	flag.Parse()

	wav, err := os.ReadFile(*speech)
	if err != nil {
		fmt.Fprintln(os.Stderr, "soak:", err)
		os.Exit(1)
	}
	pcm := wav[bytes.Index(wav, []byte("data"))+8:]
	sipPort, err := freePort()
	if err != nil {
		fmt.Fprintln(os.Stderr, "soak:", err)
		os.Exit(1)
	}
	// The SIP door is on for the round-two mix's TCP storms (hostile_round2.go);
	// only 127.0.0.1 may place calls.
	d, err := benchd.Start(fmt.Sprintf(soakSIPConfig, sipPort), "--decoders", "2")
	if err != nil {
		fmt.Fprintln(os.Stderr, "soak:", err)
		os.Exit(1)
	}
	defer d.Stop()
	hostileKey, err := d.CreateKey("hostile")
	if err != nil {
		fmt.Fprintln(os.Stderr, "soak:", err)
		os.Exit(1)
	}
	slowURL, stopSlow := slowServer(wav)
	defer stopSlow()
	hc := &http.Client{Timeout: time.Minute}
	h := &hostile{c: &client{base: d.Base, key: hostileKey, hc: hc, st: newStats()}, wav: wav, slowURL: slowURL,
		slowConn: *slowConns, outcomes: map[string]map[string]int{}}
	wideKey, err := d.CreateKey("wide") // the 8-channel sessions: an account of their own, so the hostile account's never-connected sessions do not hold them back
	if err != nil {
		fmt.Fprintln(os.Stderr, "soak:", err)
		os.Exit(1)
	}
	r2, err := newRoundTwo(h, &client{base: d.Base, key: wideKey, hc: hc, st: newStats()}, pcm, fmt.Sprintf("127.0.0.1:%d", sipPort))
	if err != nil {
		fmt.Fprintln(os.Stderr, "soak:", err)
		os.Exit(1)
	}
	defer r2.close()

	loadStart := loadavg()
	start := time.Now()
	var samples []sample
	take := func() {
		samples = append(samples, sample{time.Since(start), d.RSSMB(), goroutines(d.Base), fds(d.PID())})
		s := samples[len(samples)-1]
		fmt.Fprintf(os.Stderr, "soak %6.0fs rss %.0f MB goroutines %d fds %d\n", s.at.Seconds(), s.rss, s.goroutines, s.fds)
	}
	phase := func(dur time.Duration, withHostile bool) *stats {
		st := newStats()
		c := &client{base: d.Base, key: d.Key, hc: hc, st: st}
		ctx, cancel := context.WithTimeout(context.Background(), dur)
		defer cancel()
		var wg sync.WaitGroup
		normal(ctx, &wg, c, wav, pcm, *pre, *lives, *lists)
		if withHostile {
			h.run(ctx, &wg)
			r2.run(ctx, &wg)
		}
		tick := time.NewTicker(*every)
		for done := false; !done; {
			select {
			case <-tick.C:
				take()
			case <-ctx.Done():
				done = true
			}
		}
		tick.Stop()
		wg.Wait()
		return st
	}
	take()
	quietSt := phase(*quiet, false)
	take()
	hostileSt := phase(*duration, true)
	take() // after the clients stopped
	crashed := d.Exited()

	var b strings.Builder
	host, _ := os.Hostname()
	fmt.Fprintf(&b, "## Soak, %s, %s, %d CPUs, %s\n\n", time.Now().UTC().Format("2006-01-02 15:04 UTC"), host, runtime.NumCPU(), runtime.Version())
	fmt.Fprintf(&b, "Normal traffic (account bench): %d pre-recorded clients (upload, create, poll, list, delete), %d live clients (%.1f s clip at 4x), %d list clients, 1 bad request/s. "+
		"First %s of normal traffic alone (quiet), then %s of the same beside the hostile mix of account hostile: crash vocabularies every 10 s, %d connections trickling a header byte every 5 s from 8 loopback addresses, an upload with a 900 KiB filename every 5 s, a never-connected live session every 2 s, a job whose audio_url serves 10 bytes/s every 10 s; and issue 43's round two ("+roundTwoMix+").\n\n",
		*pre, *lives, float64(len(pcm))/32000, *lists, *quiet, *duration, *slowConns)
	fmt.Fprintf(&b, "Daemon crashed or exited during the run: %v. Load average (1 min) at the start %s, at the end %s.\n\n", crashed, loadStart, loadavg())
	totalErr := writeOps(&b, "hostile phase, normal traffic", hostileSt, *duration)
	writeOps(&b, "quiet phase (reference)", quietSt, *quiet)
	fmt.Fprintf(&b, "\n| normal operation | quiet p99 ms | hostile-phase p99 ms | ratio |\n|---|---|---|---|\n")
	worst := 0.0
	for _, op := range sortedKeys(hostileSt.lat) {
		q, hs := quietSt.lat[op], hostileSt.lat[op]
		if len(q) == 0 || strings.HasPrefix(op, "bad request") {
			continue
		}
		r := pct(hs, .99) / max(pct(q, .99), 0.001)
		worst = max(worst, r)
		fmt.Fprintf(&b, "| %s | %.1f | %.1f | %.2f |\n", op, pct(q, .99), pct(hs, .99), r)
	}
	fmt.Fprintf(&b, "\nworst p99 ratio (hostile / quiet): %.2f\n", worst)
	h.report(&b)
	writeOps(&b, "account wide's 8-channel live sessions (round two; their errors are not the normal traffic's)", r2.wide.st, *duration)
	fmt.Fprintf(&b, "\n| t s | RSS MB | goroutines | open fds |\n|---|---|---|---|\n")
	for _, s := range samples {
		fmt.Fprintf(&b, "| %.0f | %.0f | %d | %d |\n", s.at.Seconds(), s.rss, s.goroutines, s.fds)
	}
	fmt.Print(b.String())
	if *out != "" {
		if err := os.WriteFile(*out, []byte(b.String()), 0o644); err != nil {
			fmt.Fprintln(os.Stderr, "soak:", err)
			os.Exit(1)
		}
	}
	if totalErr > 0 || crashed {
		os.Exit(1)
	}
}

// loadavg is the machine's 1-minute load average, as /proc/loadavg says.
func loadavg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "unknown"
	}
	return strings.Fields(string(b))[0]
}

// writeOps writes the latency table of one phase and returns its error
// count (deliberate bad requests excluded).
func writeOps(b *strings.Builder, title string, st *stats, d time.Duration) int {
	fmt.Fprintf(b, "\n%s:\n\n| operation | count | per s | errors | p50 ms | p95 ms | p99 ms | max ms |\n|---|---|---|---|---|---|---|---|\n", title)
	total, totalErr := 0, 0
	for _, op := range sortedKeys(st.lat) {
		ds := st.lat[op]
		slices.Sort(ds)
		fmt.Fprintf(b, "| %s | %d | %.2f | %d | %.1f | %.1f | %.1f | %.1f |\n", op, len(ds), float64(len(ds))/d.Seconds(), st.errs[op], pct(ds, .5), pct(ds, .95), pct(ds, .99), pct(ds, 1))
		if !strings.HasPrefix(op, "bad request") {
			total += len(ds)
			totalErr += st.errs[op]
		}
	}
	fmt.Fprintf(b, "\nerror rate (excluding the deliberate bad requests): %d / %d = %.4f%%\n", totalErr, total, 100*float64(totalErr)/float64(max(total, 1)))
	for _, op := range sortedKeys(st.last) {
		fmt.Fprintf(b, "- last %s error: %s\n", op, st.last[op])
	}
	return totalErr
}
