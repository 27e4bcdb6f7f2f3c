// Command whipbench measures the WebRTC (WHIP) door, ingest/webrtc, against
// the two targets, each next to a reference in the same run:
//
//   - offer → answer: Door.Offer timed for sequential WHIP offers from pion
//     peers (each peer then connects and stays up, as browsers would), next
//     to the same loop answered by a bare pion PeerConnection with the same
//     codecs and ICE settings (what pion alone costs), and the same offers
//     over HTTP to a real earshotd (POST /v2/live/{id}/whip → 201);
//
//   - receive path: the door process's CPU (getrusage(RUSAGE_SELF)) while N
//     WebRTC peers in a separate sender process stream G.711 µ-law speech at
//     real time (20 ms packets), next to the same N streams sent as plain
//     RTP over UDP to N sockets read by the same sink (no ICE, DTLS, SRTP or
//     pion). The sink is the benchmark's own ingest.Session: it decodes each
//     payload with zaf/g711 into a reused buffer and counts bytes; the
//     engine is not involved.
//
//     go run ./bench/cmd/whipbench [-n 50] [-duration 20s] [-offers 100]
//
// The sender runs as a second mode of this binary (-sender), so its CPU is
// not the door's. Only loopback addresses are used.
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"time"

	pionwebrtc "github.com/pion/webrtc/v4"
)

const (
	clip      = "ls-test-clean-1089-134686-0000.wav"
	packetDur = 20 * time.Millisecond
	packetLen = 160 // µ-law bytes per 20 ms at 8 kHz
	udpPorts  = "47000-47999"
)

var pcmu = pionwebrtc.RTPCodecParameters{
	RTPCodecCapability: pionwebrtc.RTPCodecCapability{MimeType: pionwebrtc.MimeTypePCMU, ClockRate: 8000, Channels: 1},
	PayloadType:        0,
}

func main() {
	n := flag.Int("n", 50, "concurrent streaming sessions")
	dur := flag.Duration("duration", 20*time.Second, "measured streaming time per row")
	offers := flag.Int("offers", 100, "sequential offers timed per latency row")
	speech := flag.String("speech", "../shared/testdata/speech", "speech clips")
	sender := flag.Bool("sender", false, "internal: run as the load generator")
	mode := flag.String("mode", "webrtc", "internal: sender mode, webrtc or udp")
	flag.Parse()
	var err error
	if *sender {
		err = runSender(*mode, *n, *dur, filepath.Join(*speech, clip))
	} else {
		err = run(*n, *dur, *offers, *speech)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "whipbench:", err)
		os.Exit(1)
	}
}

func run(n int, dur time.Duration, offers int, speech string) error {
	if _, err := os.Stat(filepath.Join(speech, clip)); err != nil {
		return err
	}
	ref, err := latency(offers, false)
	if err != nil {
		return fmt.Errorf("reference offers: %w", err)
	}
	door, err := latency(offers, true)
	if err != nil {
		return fmt.Errorf("door offers: %w", err)
	}
	httpRow, err := latencyHTTP(min(offers, 50))
	if err != nil {
		return fmt.Errorf("daemon offers: %w", err)
	}
	base, err := receive("udp", n, dur, speech)
	if err != nil {
		return fmt.Errorf("plain rtp: %w", err)
	}
	rtc, err := receive("webrtc", n, dur, speech)
	if err != nil {
		return fmt.Errorf("webrtc: %w", err)
	}

	fmt.Printf("### Offer → answer (%d sequential offers per row, each peer connects and stays up)\n\n", offers)
	fmt.Println("| answerer | p50 ms | p95 ms | max ms | errors |")
	fmt.Println("|---|---|---|---|---|")
	fmt.Printf("| bare pion PeerConnection (reference) | %.1f | %.1f | %.1f | %d |\n", pct(ref.ms, .5), pct(ref.ms, .95), pct(ref.ms, 1), ref.errors)
	fmt.Printf("| webrtc.Door.Offer | %.1f | %.1f | %.1f | %d |\n", pct(door.ms, .5), pct(door.ms, .95), pct(door.ms, 1), door.errors)
	fmt.Printf("| real earshotd: POST /v2/live/{id}/whip → 201, seen by the client (%d offers, each DELETEd after connecting) | %.1f | %.1f | %.1f | %d |\n",
		len(httpRow.ms)+httpRow.errors, pct(httpRow.ms, .5), pct(httpRow.ms, .95), pct(httpRow.ms, 1), httpRow.errors)
	fmt.Printf("| webrtc.Door.Offer, the %d offers of the receive run (sender process) | %.1f | %.1f | %.1f | 0 |\n",
		len(rtc.offerMS), pct(rtc.offerMS, .5), pct(rtc.offerMS, .95), pct(rtc.offerMS, 1))
	fmt.Println()
	fmt.Printf("### Receive path (%d sessions × 50 packets/s of 160 B µ-law, %s measured)\n\n", n, dur)
	fmt.Println("| receive path | door-process CPU % of one core | per session % | sender-process CPU % | audio received / sent | goroutines in door process |")
	fmt.Println("|---|---|---|---|---|---|")
	for _, r := range []struct {
		name string
		r    *recvResult
	}{{"plain RTP over UDP, same sink (reference)", base}, {"WebRTC door (ICE + DTLS-SRTP + pion)", rtc}} {
		fmt.Printf("| %s | %.1f | %.2f | %.1f | %.2f%% | %d |\n", r.name, 100*r.r.cpu, 100*r.r.cpu/float64(n),
			100*r.r.senderCPU, 100*r.r.received, r.r.goroutines)
	}
	fmt.Printf("\nDoor's own share (WebRTC minus reference): %.1f%% of one core.\n", 100*(rtc.cpu-base.cpu))
	return nil
}

// ---- measurements ----

func selfCPU() float64 {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return tv(ru.Utime) + tv(ru.Stime)
}

func tv(t syscall.Timeval) float64 { return float64(t.Sec) + float64(t.Usec)/1e6 }

func pct(s []float64, p float64) float64 {
	if len(s) == 0 {
		return 0
	}
	i := int(p*float64(len(s))+0.5) - 1
	return s[min(max(i, 0), len(s)-1)]
}
