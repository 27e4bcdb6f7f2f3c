// Command livebench measures live transcription on the real daemon: N
// WebSocket sessions stream speech at real time at once; it reports the
// latency from the end of an utterance's audio to its final transcript, the
// gaps between partial transcripts, CPU per session-second next to
// pocketsphinx_batch's on the same audio, and memory per idle and per
// streaming session.
//
//	go run ./bench/cmd/livebench [-n 1,2,4,6,8] [-speech DIR] [-decoders-per-session]
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/fasthttp/websocket"

	"github.com/earshot-dev/earshot/bench/internal/benchd"
	"github.com/earshot-dev/earshot/bench/internal/psbatch"
	"github.com/earshot-dev/earshot/recognizer/sphinx"
)

// extraConfig is appended to every daemon's YAML.
var extraConfig string

// oneTenant lifts the per-account live bounds (under live:): every
// session of a run is one account's, and the runs measure the box and its
// pools, not one account's share of them (live.decoder_share).
const oneTenant = "  max_sessions_per_account: 0\n  max_channels_per_account: 0\n  decoder_share: 1\n"

// verbose (LIVEBENCH_VERBOSE=1) prints each final with its times.
var verbose = os.Getenv("LIVEBENCH_VERBOSE") != ""

// sessionBody is the POST /v2/live body of every session.
var sessionBody = `{}`

var clips = []string{
	"ls-test-clean-1089-134686-0000.wav",
	"ls-dev-clean-2412-153948-0000.wav",
	"ls-test-clean-1995-1837-0001.wav",
}

func main() {
	ns := flag.String("n", "1,2,4,6,8", "wideband (16 kHz PCM) session counts to run; empty for none")
	nb := flag.String("narrow", "4,6,8,10", "narrowband (8 kHz mu-law, daemon defaults) session counts to run; empty for none")
	speech := flag.String("speech", "../shared/testdata/speech", "speech clips")
	fast := flag.Bool("fast", false, "run the daemon with sphinx.fast_search: true")
	partials := flag.Bool("partials", false, "ask for partial transcripts (the WebSocket default is off)")
	presets := flag.String("presets", "", "engine presets of the narrowband sweep, comma separated (sphinx.PresetNames; empty: the daemon's defaults)")
	flag.BoolVar(&perSession, "decoders-per-session", false, "run the wideband sweep with --decoders N (N sessions) instead of the daemon's default pools")
	flag.Parse()
	if *fast {
		extraConfig = "sphinx:\n  fast_search: true\n"
	}
	if *partials {
		sessionBody = `{"messages_config":{"receive_partial_transcripts":true}}`
	}
	if err := run(*ns, *nb, *presets, *speech); err != nil {
		fmt.Fprintln(os.Stderr, "livebench:", err)
		os.Exit(1)
	}
}

func run(ns, nb, presets, dir string) error {
	var audio []byte
	for _, c := range clips {
		b, err := os.ReadFile(filepath.Join(dir, c))
		if err != nil {
			return err
		}
		audio = append(audio, b[bytes.Index(b, []byte("data"))+8:]...)
	}
	audioSec := float64(len(audio)) / 32000
	ref, err := refCPU(dir)
	if err != nil {
		return err
	}
	fmt.Printf("audio per session: %.1f s; pocketsphinx_batch on the same clips: %.3f CPU s per audio s\n\n", audioSec, ref)
	if ns == "" { // the narrowband sweep only
		return narrowTable(nb, presets, dir, ref)
	}
	fmt.Println("| sessions | decoders | finals | latency p50 ms | p95 ms | max ms | partial gap p95 / max ms | CPU s per session-s | ratio to pocketsphinx_batch | RSS per streaming session MB | errors |")
	fmt.Println("|---|---|---|---|---|---|---|---|---|---|---|")
	for _, f := range strings.Split(ns, ",") {
		n, _ := strconv.Atoi(f)
		r, err := runN(n, audio)
		if err != nil {
			return err
		}
		gaps := "not measured (no partials asked)"
		if len(r.gaps) > 0 {
			gaps = fmt.Sprintf("%.0f / %.0f", pct(r.gaps, 0.95), pct(r.gaps, 1))
		}
		fmt.Printf("| %d | %d | %d | %.0f | %.0f | %.0f | %s | %.3f | %.2f | %.1f | %d |\n",
			n, r.decoders, len(r.lat), pct(r.lat, 0.5), pct(r.lat, 0.95), pct(r.lat, 1), gaps,
			r.cpu/(float64(n)*audioSec), r.cpu/(float64(n)*audioSec)/ref, r.rssPer, r.errors)
	}
	idle, err := idleRSS(50)
	if err != nil {
		return err
	}
	fmt.Printf("\nmemory per idle connected session (50 sessions): %.2f MB\n", idle)
	if nb == "" {
		return nil
	}
	return narrowTable(nb, presets, dir, ref)
}

type result struct {
	decoders int
	lat      []float64 // ms
	gaps     []float64 // ms between partials of one utterance
	cpu      float64
	rssPer   float64
	errors   int
}

// perSession: the wideband sweep gives the daemon --decoders N for N
// sessions (-decoders-per-session, as before 2026-11-28, when wideband
// live streams decoded on that pool) instead of running it on its
// defaults (the wideband live pool, 4 decoders per CPU).
var perSession bool

func runN(n int, audio []byte) (*result, error) {
	var defaults sphinx.Config
	defaults.SetDefaults()
	dec := defaults.LiveDecoders // the daemon's wideband live pool
	flags := []string{"--log-level", "info"}
	if perSession {
		dec = max(2, n)
		flags = append(flags, "--decoders", strconv.Itoa(dec))
	}
	d, err := benchd.Start("live:\n  capacity: 64\n"+oneTenant+extraConfig, flags...)
	if err != nil {
		return nil, err
	}
	defer d.Stop()
	base := d.RSSMB()
	r := &result{decoders: dec}
	var mu sync.Mutex
	var wg sync.WaitGroup
	cpu0 := d.CPUSeconds()
	peak := 0.0
	stopPeak := make(chan struct{})
	go func() {
		t := time.NewTicker(500 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-stopPeak:
				return
			case <-t.C:
				mu.Lock()
				peak = max(peak, d.RSSMB())
				mu.Unlock()
			}
		}
	}()
	for i := range n {
		// Each session starts at another point of the audio.
		off := (len(audio) / n * i) &^ 1
		a := append(append([]byte{}, audio[off:]...), audio[:off]...)
		wg.Go(func() {
			res := sessionWith(d, a, sessionBody, 640)
			mu.Lock()
			r.lat = append(r.lat, res.lat...)
			r.gaps = append(r.gaps, res.gaps...)
			r.errors += res.errs
			mu.Unlock()
		})
	}
	wg.Wait()
	close(stopPeak)
	r.cpu = d.CPUSeconds() - cpu0
	r.rssPer = (peak - base) / float64(n)
	slices.Sort(r.lat)
	slices.Sort(r.gaps)
	return r, nil
}

// sessionResult is what one streamed session saw.
type sessionResult struct {
	lat, gaps []float64 // final latencies and gaps between partials, ms
	finals    []string  // final transcripts in order
	errs      int       // error messages and failures
}

// sessionWith creates a session with body, streams audio at real time in
// chunks of chunk bytes (20 ms of audio) and returns what it saw.
func sessionWith(d *benchd.Daemon, audio []byte, body string, chunk int) (res sessionResult) {
	url, err := create(d, body)
	if err != nil {
		res.errs = 1
		return res
	}
	c, _, err := websocket.DefaultDialer.Dial(url, nil)
	if err != nil {
		res.errs = 1
		return res
	}
	defer c.Close()
	lat, gaps, finals, errs := &res.lat, &res.gaps, &res.finals, &res.errs
	var t0 time.Time
	done := make(chan struct{})
	go func() {
		defer close(done)
		lastPartial := map[string]time.Time{}
		for {
			_, b, err := c.ReadMessage()
			if err != nil {
				return
			}
			now := time.Now()
			var m struct {
				Type string `json:"type"`
				Data struct {
					ID        string `json:"id"`
					IsFinal   bool   `json:"is_final"`
					Utterance struct {
						End  float64 `json:"end"`
						Text string  `json:"text"`
					} `json:"utterance"`
				} `json:"data"`
			}
			json.Unmarshal(b, &m)
			switch m.Type {
			case "error":
				*errs++
				if verbose {
					fmt.Fprintf(os.Stderr, "error at %.2f s: %s\n", now.Sub(t0).Seconds(), b)
				}
			case "transcript":
				if prev, ok := lastPartial[m.Data.ID]; ok {
					*gaps = append(*gaps, float64(now.Sub(prev).Milliseconds()))
				}
				if m.Data.IsFinal {
					delete(lastPartial, m.Data.ID)
					*lat = append(*lat, float64(now.Sub(t0.Add(time.Duration(m.Data.Utterance.End*float64(time.Second)))).Milliseconds()))
					if verbose {
						fmt.Fprintf(os.Stderr, "final %s end %.2f s at %.2f s (+%.0f ms): %s\n", m.Data.ID, m.Data.Utterance.End, now.Sub(t0).Seconds(), (*lat)[len(*lat)-1], m.Data.Utterance.Text)
					}
					*finals = append(*finals, m.Data.Utterance.Text)
				} else {
					lastPartial[m.Data.ID] = now
				}
			}
		}
	}()
	t0 = time.Now()
	for i, n := 0, 0; i < len(audio); i, n = i+chunk, n+1 {
		if err := c.WriteMessage(websocket.BinaryMessage, audio[i:min(i+chunk, len(audio))]); err != nil {
			c.Close()
			<-done
			res.errs++
			return res
		}
		if d := time.Until(t0.Add(time.Duration(n+1) * 20 * time.Millisecond)); d > 0 {
			time.Sleep(d)
		}
	}
	c.WriteJSON(map[string]string{"type": "stop_recording"})
	<-done
	return res
}

// create makes a live session (POST /v2/live with body) and returns its
// WebSocket URL.
func create(d *benchd.Daemon, body string) (string, error) {
	var s struct{ URL string }
	err := d.Call("POST", "/v2/live", d.Key, body, http.StatusCreated, &s)
	return s.URL, err
}

// idleRSS connects n sessions that send nothing and returns the RSS growth
// per session.
func idleRSS(n int) (float64, error) {
	d, err := benchd.Start("live:\n  capacity: 128\n"+oneTenant, "--decoders", "2")
	if err != nil {
		return 0, err
	}
	defer d.Stop()
	base := d.RSSMB()
	var conns []*websocket.Conn
	for range n {
		url, err := create(d, `{}`)
		if err != nil {
			return 0, err
		}
		c, _, err := websocket.DefaultDialer.Dial(url, nil)
		if err != nil {
			return 0, err
		}
		conns = append(conns, c)
	}
	time.Sleep(time.Second) // let the connections settle before reading RSS
	per := (d.RSSMB() - base) / float64(n)
	for _, c := range conns {
		c.Close()
	}
	return per, nil
}

// refCPU runs pocketsphinx_batch on the clips and returns its CPU seconds
// per audio second.
func refCPU(dir string) (float64, error) {
	audioSec := 0.0
	for _, c := range clips {
		st, err := os.Stat(filepath.Join(dir, c))
		if err != nil {
			return 0, err
		}
		audioSec += float64(st.Size()-44) / 32000
	}
	res, err := psbatch.Run(context.Background(), psbatch.DefaultModel(), dir, clips)
	if err != nil {
		return 0, err
	}
	return res.CPU.Seconds() / audioSec, nil
}

func pct(v []float64, p float64) float64 {
	if len(v) == 0 {
		return 0
	}
	return v[min(len(v)-1, int(p*float64(len(v))))]
}
