// Command ackbench measures how long the real daemon takes to acknowledge
// live audio (PROTOCOL.md: acks are sent promptly, well under 500 ms): N
// WebSocket sessions at once stream speech at real time in 20 ms frames,
// their finals decoding as they go, and each frame's time from its write
// to its audio_chunk ack is one sample. It prints p50, p95 and max per N.
// e2e TestLiveAcks checks the acks' order and presence; timings live here.
//
//	go run ./bench/cmd/ackbench [-n 1,4,8] [-seconds 20] [-speech DIR]
package main

import (
	"bytes"
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
)

// ackBound is PROTOCOL.md's "well under 500 ms".
const ackBound = 500 * time.Millisecond

// frameBytes is 20 ms of 16 kHz 16-bit PCM.
const frameBytes = 640

var clips = []string{
	"ls-test-clean-1089-134686-0000.wav",
	"ls-dev-clean-2412-153948-0000.wav",
	"ls-test-clean-1995-1837-0001.wav",
}

func main() {
	ns := flag.String("n", "1,4,8", "session counts to run, comma separated")
	seconds := flag.Float64("seconds", 20, "seconds of audio per session")
	speech := flag.String("speech", "../shared/testdata/speech", "speech clips")
	flag.Parse()
	if err := run(*ns, *seconds, *speech); err != nil {
		fmt.Fprintln(os.Stderr, "ackbench:", err)
		os.Exit(1)
	}
}

func run(ns string, seconds float64, dir string) error {
	var audio []byte
	for _, c := range clips {
		b, err := os.ReadFile(filepath.Join(dir, c))
		if err != nil {
			return err
		}
		audio = append(audio, b[bytes.Index(b, []byte("data"))+8:]...)
	}
	audio = audio[:min(len(audio), int(seconds*32000)&^1)]
	// The shipped defaults, one account's sessions without its per-account
	// bounds (the run measures the box, not one account's share).
	d, err := benchd.Start("live:\n  capacity: 64\n  max_sessions_per_account: 0\n  max_channels_per_account: 0\n  decoder_share: 1\n", "--log-level", "info")
	if err != nil {
		return err
	}
	defer d.Stop()
	fmt.Printf("audio per session: %.1f s of 16 kHz PCM in %d ms frames at real time\n\n", float64(len(audio))/32000, frameBytes/32)
	fmt.Println("| sessions | acks | p50 ms | p95 ms | max ms | p95 under 500 ms | missing acks | errors |")
	fmt.Println("|---|---|---|---|---|---|---|---|")
	for _, f := range strings.Split(ns, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 1 {
			return fmt.Errorf("-n %q", f)
		}
		var mu sync.Mutex
		var lat []float64
		missing, errs := 0, 0
		var wg sync.WaitGroup
		for i := range n {
			off := (len(audio) / n * i) &^ 1 // each session starts elsewhere in the audio
			a := append(append([]byte{}, audio[off:]...), audio[:off]...)
			wg.Go(func() {
				l, miss, err := session(d, a)
				mu.Lock()
				defer mu.Unlock()
				lat, missing = append(lat, l...), missing+miss
				if err != nil {
					errs++
					fmt.Fprintln(os.Stderr, "session:", err)
				}
			})
		}
		wg.Wait()
		slices.Sort(lat)
		p95 := pct(lat, 0.95)
		fmt.Printf("| %d | %d | %.1f | %.1f | %.1f | %v | %d | %d |\n", n, len(lat), pct(lat, 0.5), p95, pct(lat, 1), p95 < float64(ackBound.Milliseconds()), missing, errs)
	}
	return nil
}

// session streams audio in one live session and returns each frame's ack
// latency (ms) and how many frames got no ack.
func session(d *benchd.Daemon, audio []byte) ([]float64, int, error) {
	var s struct{ URL string }
	if err := d.Call("POST", "/v2/live", d.Key, `{}`, http.StatusCreated, &s); err != nil {
		return nil, 0, err
	}
	c, resp, err := websocket.DefaultDialer.Dial(s.URL, nil)
	if resp != nil {
		resp.Body.Close()
	}
	if err != nil {
		return nil, 0, err
	}
	defer c.Close()
	var mu sync.Mutex
	sent := map[int64]time.Time{} // a frame's end offset: its write time
	var lat []float64
	done := make(chan struct{})
	go func() {
		defer close(done)
		c.SetReadDeadline(time.Now().Add(10 * time.Minute))
		for {
			_, b, err := c.ReadMessage()
			if err != nil {
				return
			}
			now := time.Now()
			var m struct {
				Type string `json:"type"`
				Data struct {
					ByteRange [2]int64 `json:"byte_range"`
				} `json:"data"`
			}
			if json.Unmarshal(b, &m) != nil || m.Type != "audio_chunk" {
				continue
			}
			mu.Lock()
			if t0, ok := sent[m.Data.ByteRange[1]]; ok {
				lat = append(lat, float64(now.Sub(t0).Microseconds())/1000)
				delete(sent, m.Data.ByteRange[1])
			}
			mu.Unlock()
		}
	}()
	start := time.Now()
	for i, n := 0, 0; i < len(audio); i, n = i+frameBytes, n+1 {
		time.Sleep(time.Until(start.Add(time.Duration(n) * 20 * time.Millisecond)))
		end := min(i+frameBytes, len(audio))
		mu.Lock()
		sent[int64(end)] = time.Now()
		mu.Unlock()
		if err := c.WriteMessage(websocket.BinaryMessage, audio[i:end]); err != nil {
			return nil, 0, err
		}
	}
	c.WriteJSON(map[string]any{"type": "stop_recording"})
	<-done
	mu.Lock()
	defer mu.Unlock()
	return lat, len(sent), nil
}

// pct is the p-th quantile (0..1) of sorted v, 0 for none.
func pct(v []float64, p float64) float64 {
	if len(v) == 0 {
		return 0
	}
	return v[min(len(v)-1, int(p*float64(len(v))))]
}
