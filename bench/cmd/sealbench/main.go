// Command sealbench measures what encryption at rest (store/sealed, issue
// 40) costs, against the same daemon without it in the same run: two real
// earshotd, one with store.encryption_key_file and one without, measured
// one at a time in alternating order over several rounds (the order flips
// each round, so drift of the machine falls on both sides):
//
//   - upload throughput: sequential POST /v2/upload of a 66 s WAV (2.1 MB);
//   - pre-recorded job throughput: jobs of a 9.65 s clip created at once,
//     audio seconds transcribed per wall second until all are done;
//   - GET /v2/pre-recorded/{id} latency of a done job, sequential, p50/p99;
//   - a live call's CPU: a WebSocket session of a 10.44 s clip (100 ms
//     frames, unpaced), stop_recording, until its batch pass is stored:
//     the daemon's CPU seconds (/proc) per audio second.
//
// Each measure's figure is the median of the rounds; the cost is sealed
// against plain.
//
//	go run ./bench/cmd/sealbench [-rounds 3] [-speech DIR]
package main

import (
	"crypto/rand"
	"flag"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"time"

	"github.com/fasthttp/websocket"

	"github.com/earshot-dev/earshot/bench/internal/benchd"
)

func main() {
	rounds := flag.Int("rounds", 3, "alternating rounds")
	speech := flag.String("speech", "../shared/testdata/speech", "directory of the test speech")
	flag.Parse()
	if err := run(*rounds, *speech); err != nil {
		fmt.Fprintln(os.Stderr, "sealbench:", err)
		os.Exit(1)
	}
}

const (
	uploadClip = "ljspeech-LJ001-0007-to-0016-long.wav"
	uploads    = 15
	jobClip    = "ljspeech-LJ001-0001.wav"
	jobClipSec = 9.65
	jobs       = 4
	gets       = 2000
	liveClip   = "ls-test-clean-1089-134686-0000.wav"
	liveSec    = 10.44
)

// figures are one round's measures of one daemon.
type figures struct {
	uploadMBps, jobSpeed, getP50, getP99, liveCPU float64
}

func run(rounds int, speech string) error {
	dir, err := os.MkdirTemp("", "sealbench-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	keyFile := filepath.Join(dir, "data-key")
	key := make([]byte, 32)
	rand.Read(key)
	if err := os.WriteFile(keyFile, key, 0o600); err != nil {
		return err
	}
	clips := map[string][]byte{}
	for _, c := range []string{uploadClip, jobClip, liveClip} {
		if clips[c], err = os.ReadFile(filepath.Join(speech, c)); err != nil {
			return err
		}
	}
	sealed, err := benchd.Start("store:\n  encryption_key_file: "+keyFile+"\n", "--decoders", "2", "--log-level", "info")
	if err != nil {
		return err
	}
	defer sealed.Stop()
	plain, err := benchd.Start("", "--decoders", "2", "--log-level", "info")
	if err != nil {
		return err
	}
	defer plain.Stop()
	daemons := []*benchd.Daemon{plain, sealed}
	// A warm-up round on each, unrecorded: first requests, page cache,
	// the decoders' first utterances.
	for _, d := range daemons {
		if _, err := measure(d, clips); err != nil {
			return fmt.Errorf("warm-up: %w", err)
		}
	}
	res := [2][]figures{}
	for r := range rounds {
		for k := range 2 {
			i := (r + k) % 2
			f, err := measure(daemons[i], clips)
			if err != nil {
				return fmt.Errorf("round %d, %s: %w", r+1, []string{"plain", "sealed"}[i], err)
			}
			res[i] = append(res[i], f)
			fmt.Fprintf(os.Stderr, "round %d %s: %+v\n", r+1, []string{"plain", "sealed"}[i], f)
		}
	}
	med := func(side int, pick func(figures) float64) float64 {
		v := make([]float64, 0, rounds)
		for _, f := range res[side] {
			v = append(v, pick(f))
		}
		slices.Sort(v)
		return v[len(v)/2]
	}
	row := func(name string, pick func(figures) float64, higherBetter bool, unit string) {
		p, s := med(0, pick), med(1, pick)
		cost := (s - p) / p * 100
		if higherBetter {
			cost = (p - s) / p * 100
		}
		verdict := "met"
		if cost > 10 {
			verdict = "missed"
		}
		fmt.Printf("| %s | %.3g %s | %.3g %s | %+.1f %% | ≤ 10 %%: %s |\n", name, p, unit, s, unit, cost, verdict)
	}
	fmt.Printf("Median of %d alternating rounds; cost = how much worse sealed is than plain.\n\n", rounds)
	fmt.Printf("| measure | plain | sealed | cost | target |\n|---|---|---|---|---|\n")
	row(fmt.Sprintf("upload throughput (%d × 2.1 MB, sequential)", uploads), func(f figures) float64 { return f.uploadMBps }, true, "MB/s")
	row(fmt.Sprintf("pre-recorded throughput (%d jobs × %.2f s at once)", jobs, jobClipSec), func(f figures) float64 { return f.jobSpeed }, true, "audio s/s")
	row(fmt.Sprintf("GET /v2/pre-recorded/{id} p50 (%d sequential)", gets), func(f figures) float64 { return f.getP50 }, false, "ms")
	row(fmt.Sprintf("GET /v2/pre-recorded/{id} p99 (%d sequential)", gets), func(f figures) float64 { return f.getP99 }, false, "ms")
	row(fmt.Sprintf("live call CPU (WebSocket, %.2f s, with its batch pass)", liveSec), func(f figures) float64 { return f.liveCPU }, false, "CPU s/audio s")
	return nil
}

// measure runs every measure once on d.
func measure(d *benchd.Daemon, clips map[string][]byte) (figures, error) {
	var f figures
	up := clips[uploadClip]
	start := time.Now()
	for range uploads {
		if _, err := d.Upload(uploadClip, up); err != nil {
			return f, err
		}
	}
	f.uploadMBps = float64(uploads*len(up)) / 1e6 / time.Since(start).Seconds()

	url, err := d.Upload(jobClip, clips[jobClip])
	if err != nil {
		return f, err
	}
	start = time.Now()
	var ids []string
	for range jobs {
		var c struct{ ID string }
		if err := d.Call("POST", "/v2/pre-recorded", d.Key, `{"audio_url":"`+url+`"}`, http.StatusCreated, &c); err != nil {
			return f, err
		}
		ids = append(ids, c.ID)
	}
	for _, id := range ids {
		if err := waitDone(d, id); err != nil {
			return f, err
		}
	}
	f.jobSpeed = jobs * jobClipSec / time.Since(start).Seconds()

	lat := make([]float64, 0, gets)
	for range gets {
		t0 := time.Now()
		if err := d.Call("GET", "/v2/pre-recorded/"+ids[0], d.Key, "", http.StatusOK, nil); err != nil {
			return f, err
		}
		lat = append(lat, float64(time.Since(t0).Microseconds())/1000)
	}
	slices.Sort(lat)
	f.getP50, f.getP99 = lat[len(lat)/2], lat[len(lat)*99/100]

	cpu0 := d.CPUSeconds()
	if err := live(d, clips[liveClip]); err != nil {
		return f, err
	}
	f.liveCPU = (d.CPUSeconds() - cpu0) / liveSec
	return f, nil
}

func waitDone(d *benchd.Daemon, id string) error {
	deadline := time.Now().Add(5 * time.Minute)
	for time.Now().Before(deadline) {
		var j struct{ Status string }
		if err := d.Call("GET", "/v2/pre-recorded/"+id, d.Key, "", http.StatusOK, &j); err != nil {
			return err
		}
		switch j.Status {
		case "done":
			return nil
		case "error":
			return fmt.Errorf("job %s ended in error", id)
		}
		time.Sleep(50 * time.Millisecond) // polling a real process
	}
	return fmt.Errorf("job %s not done", id)
}

// live streams wav's audio in one WebSocket session, unpaced in 100 ms
// frames, and waits for the session's batch pass to be stored.
func live(d *benchd.Daemon, wav []byte) error {
	var s struct{ ID, URL string }
	if err := d.Call("POST", "/v2/live", d.Key, `{}`, http.StatusCreated, &s); err != nil {
		return err
	}
	c, resp, err := websocket.DefaultDialer.Dial(s.URL, nil)
	if resp != nil {
		resp.Body.Close()
	}
	if err != nil {
		return err
	}
	defer c.Close()
	var wg sync.WaitGroup
	wg.Go(func() {
		c.SetReadDeadline(time.Now().Add(5 * time.Minute))
		for {
			if _, _, err := c.ReadMessage(); err != nil {
				return
			}
		}
	})
	pcm := wav[44:]
	const frame = 3200 // 100 ms at 16 kHz, 16-bit mono
	for i := 0; i < len(pcm); i += frame {
		if err := c.WriteMessage(websocket.BinaryMessage, pcm[i:min(i+frame, len(pcm))]); err != nil {
			return err
		}
	}
	if err := c.WriteJSON(map[string]any{"type": "stop_recording"}); err != nil {
		return err
	}
	wg.Wait()
	_, err = d.BatchPassRecord(s.ID, 5*time.Minute)
	return err
}
