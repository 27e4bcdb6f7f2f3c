// Command sipbench measures the telephony door alone (ingest/sip and
// ingest/rtp, issue 4): the INVITE → 200 OK latency with many calls being
// set up at once, next to OPTIONS → 200 OK on the same SIP stack, and the
// CPU that RTP ingest, jitter buffers and G.711 decode cost for many
// concurrent calls, next to a plain UDP receive loop with no door work.
//
// The door runs in this process with the engine replaced by a counting
// sink (an sip.Opener whose sessions count, and optionally G.711-decode,
// the audio). The SIP client and RTP sender run in a second process (this
// binary with -sender), so the CPU measured (getrusage of this process over
// a steady window) is the door's alone. Loopback only.
//
//	go run ./bench/cmd/sipbench [-setup 50] [-rounds 20] [-calls 100] [-dur 20s]
package main

import (
	"context"
	"flag"
	"fmt"
	"net"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/earshot-dev/earshot/ingest/sip"
)

// opts are the flags of both processes.
type opts struct {
	setup    int
	rounds   int
	calls    int
	dur      time.Duration
	warm     time.Duration
	rtpPorts string
	speech   string
	// sender process only
	mode   string
	target string
	ports  string
}

func main() {
	var o opts
	flag.IntVar(&o.setup, "setup", 50, "calls set up at once in the latency rounds")
	flag.IntVar(&o.rounds, "rounds", 20, "latency rounds (each sets up -setup calls at once, then hangs them up)")
	flag.IntVar(&o.calls, "calls", 100, "concurrent calls streaming RTP in the CPU rows")
	flag.DurationVar(&o.dur, "dur", 20*time.Second, "measured window of each CPU row")
	flag.DurationVar(&o.warm, "warm", 2*time.Second, "RTP before each measured window")
	flag.StringVar(&o.rtpPorts, "rtp-ports", "31000-31999", "the door's RTP port range")
	flag.StringVar(&o.speech, "speech", "../shared/testdata/speech", "speech clips (the RTP payload)")
	flag.StringVar(&o.mode, "sender", "", "internal: run as the load generator (options, invite, calls, idle, raw)")
	flag.StringVar(&o.target, "target", "", "internal: the door's SIP address")
	flag.StringVar(&o.ports, "ports", "", "internal: RTP destination ports for -sender raw")
	flag.Parse()
	var err error
	if o.mode != "" {
		err = sender(o)
	} else {
		err = run(o)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "sipbench:", err)
		os.Exit(1)
	}
}

func run(o opts) error {
	k := &sink{}
	udp, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	cfg := sip.Config{
		Listen:      udp.LocalAddr().String(),
		RTPPorts:    o.rtpPorts,
		Allow:       []string{"127.0.0.0/8"},
		AdvertiseIP: "127.0.0.1",
		RTPTimeout:  10 * time.Minute, // the idle row sends no RTP
		MaxCalls:    2*max(o.setup, o.calls) + 10,
		// SDES over UDP: the bench runs on loopback without TLS.
		Routes: []sip.Route{{User: "transcribe", Account: "bench", AllowSDESWithoutTLS: true,
			Live: map[string]any{"language_config": map[string]any{"languages": []string{"en"}}}}},
	}
	door, err := sip.New(cfg, k, nil)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- door.Run(ctx, sip.Sockets{UDP: udp}) }()
	defer func() {
		cancel()
		<-done
		door.Close()
	}()
	target := udp.LocalAddr().String()
	sinkCount := func() (int64, int64) { return k.bytes.Load(), k.voiced.Load() }
	// settle waits for the door to finish tearing down the last run's calls.
	settle := func() {
		for deadline := time.Now().Add(30 * time.Second); door.Calls() > 0 && time.Now().Before(deadline); {
			time.Sleep(50 * time.Millisecond)
		}
	}

	// Latency: OPTIONS (the SIP stack and the door's source check) and
	// INVITE (call setup: dialog, ports, receiver, session) to 200 OK.
	fmt.Printf("sipbench: door on %s (UDP), RTP ports %s, GOMAXPROCS %s, sender in a separate process\n\n", target, o.rtpPorts, gomaxprocs())
	fmt.Println("| request → 200 OK | at once | samples | p50 ms | p95 ms | p99 ms | max ms | failed |")
	fmt.Println("|---|---|---|---|---|---|---|---|")
	var invP95 float64
	for _, m := range []struct{ mode, name string }{{"options", "OPTIONS (reference: SIP stack, no call)"}, {"invite", "INVITE (call setup, counting sink)"}} {
		w, err := child(o, sinkCount, m.mode, "-target", target)
		if err != nil {
			return err
		}
		var lat []float64
		for _, v := range w.lines["lat"] {
			f, _ := strconv.ParseFloat(v, 64)
			lat = append(lat, f)
		}
		slices.Sort(lat)
		fmt.Printf("| %s | %d | %d | %.1f | %.1f | %.1f | %.1f | %d |\n", m.name, o.setup, len(lat),
			pct(lat, 0.5), pct(lat, 0.95), pct(lat, 0.99), pct(lat, 1), len(w.lines["fail"]))
		if m.mode == "invite" {
			invP95 = pct(lat, 0.95)
			if len(w.lines["fail"]) > 0 {
				fmt.Fprintln(os.Stderr, "sipbench: failed setups:", strings.Join(w.lines["fail"], "; "))
			}
		}
	}
	fmt.Println()

	// CPU: the plain UDP loop first, before any call exists.
	type row struct {
		name string
		w    window
	}
	var rows []row
	raw, err := rawReaders(o.calls)
	if err != nil {
		return err
	}
	w, err := child(o, raw.count, "raw", "-ports", raw.ports())
	raw.close()
	if err != nil {
		return err
	}
	rows = append(rows, row{"reference: plain UDP read loop, 1 socket + goroutine per call, no door work", w})
	for _, m := range []struct {
		mode, name string
		decode     bool
	}{
		{"idle", "door, calls up, no RTP (20 ms clocks padding silence)", false},
		{"calls", "door: RTP + jitter buffer → counting sink", false},
		{"calls", "door: RTP + jitter buffer → sink with G.711 decode (issue target)", true},
		{"srtp", "door: SRTP (SDES, AES_CM_128_HMAC_SHA1_80) + jitter buffer → sink with G.711 decode", true},
	} {
		k.decode.Store(m.decode)
		settle()
		w, err := child(o, sinkCount, m.mode, "-target", target)
		if err != nil {
			return err
		}
		rows = append(rows, row{m.name, w})
	}
	fmt.Printf("| %d calls, %.0f s window | door process CPU s | %% of one core | audio to sink, call-s per s | of which not silence | RTP packets sent | sender CPU %% (own process) |\n", o.calls, o.dur.Seconds())
	fmt.Println("|---|---|---|---|---|---|---|")
	var target15 float64
	perCallSecond := map[string]float64{} // door CPU µs per call-second of audio delivered, by mode
	for _, r := range rows {
		pctCore := 100 * r.w.cpu.Seconds() / r.w.wall.Seconds()
		delivered := float64(r.w.bytes) / rtpRate / r.w.wall.Seconds()
		voiced := float64(r.w.voiced) / rtpRate / r.w.wall.Seconds()
		sent, scpu := "-", "-"
		if v := r.w.lines["sent"]; len(v) > 0 {
			sent = v[0]
		}
		if v := r.w.lines["cpu"]; len(v) > 0 {
			f, _ := strconv.ParseFloat(v[0], 64)
			scpu = fmt.Sprintf("%.1f", 100*f/r.w.wall.Seconds())
		}
		fmt.Printf("| %s | %.2f | %.1f | %.1f | %.1f | %s | %s |\n", r.name, r.w.cpu.Seconds(), pctCore, delivered, voiced, sent, scpu)
		switch {
		case strings.HasPrefix(r.name, "door: SRTP"):
			perCallSecond["srtp"] = float64(r.w.cpu.Microseconds()) / (delivered * r.w.wall.Seconds())
		case strings.Contains(r.name, "G.711 decode"):
			target15 = pctCore
			perCallSecond["clear"] = float64(r.w.cpu.Microseconds()) / (delivered * r.w.wall.Seconds())
		}
	}
	fmt.Println()
	verdict := func(ok bool) string {
		if ok {
			return "met"
		}
		return "NOT met"
	}
	fmt.Printf("- INVITE → 200 OK p95 with %d set up at once: %.1f ms (target < 50 ms): %s\n", o.setup, invP95, verdict(invP95 < 50))
	fmt.Printf("- RTP ingest + jitter buffer + G.711 decode, %d calls: %.1f%% of one core (target < 15%%): %s\n", o.calls, target15, verdict(target15 < 15))
	if c, s := perCallSecond["clear"], perCallSecond["srtp"]; c > 0 && s > 0 {
		fmt.Printf("- door CPU per call-second, SRTP against the same calls in clear: %.0f µs against %.0f µs (%+.0f%%)\n", s, c, 100*(s-c)/c)
	}
	return nil
}

// rtpRate is G.711 bytes per second of one channel.
const rtpRate = 8000

func gomaxprocs() string {
	if v := os.Getenv("GOMAXPROCS"); v != "" {
		return v
	}
	return "default"
}

func pct(v []float64, p float64) float64 {
	if len(v) == 0 {
		return 0
	}
	return v[min(len(v)-1, int(p*float64(len(v))))]
}
