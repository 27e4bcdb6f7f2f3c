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
	"bufio"
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/pion/rtp"
	pionwebrtc "github.com/pion/webrtc/v4"
	"github.com/zaf/g711"

	"github.com/earshot-dev/earshot/bench/internal/benchd"
	"github.com/earshot-dev/earshot/ingest"
	"github.com/earshot-dev/earshot/ingest/media"
	"github.com/earshot-dev/earshot/ingest/webrtc"
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

// ---- the counting sink: the door's consumer side ----

// sink is an ingest.Session that decodes µ-law and counts bytes.
type sink struct {
	id    string
	done  chan struct{}
	once  sync.Once
	mu    sync.Mutex
	pcm   []int16
	bytes *atomic.Int64
}

func (s *sink) ID() string            { return s.id }
func (s *sink) Done() <-chan struct{} { return s.done }
func (s *sink) Err() error            { return nil }
func (s *sink) Format() media.Format {
	return media.Format{Encoding: media.MuLaw, BitDepth: 8, SampleRate: 8000, Channels: 1}
}

func (s *sink) Write(_ context.Context, b []byte) error {
	s.mu.Lock()
	s.pcm = s.pcm[:0]
	for _, c := range b {
		s.pcm = append(s.pcm, g711.DecodeUlawFrame(c))
	}
	s.mu.Unlock()
	s.bytes.Add(int64(len(b)))
	return nil
}

func (s *sink) Stop(context.Context) error {
	s.once.Do(func() { close(s.done) })
	return nil
}

// attacher hands out sinks for tokens "<id>.x".
type attacher struct {
	bytes atomic.Int64
	mu    sync.Mutex
	all   []*sink
}

func (a *attacher) AttachAudio(_ context.Context, token string) (ingest.Session, error) {
	id, _, _ := strings.Cut(token, ".")
	s := &sink{id: id, done: make(chan struct{}), bytes: &a.bytes}
	a.mu.Lock()
	a.all = append(a.all, s)
	a.mu.Unlock()
	return s, nil
}

func newDoor() (*webrtc.Door, *attacher, error) {
	cfg := webrtc.Config{IncludeLoopback: true, UDPPorts: udpPorts}
	cfg.SetDefaults()
	att := &attacher{}
	d, err := webrtc.New(cfg, att, nil)
	return d, att, err
}

// ---- offer → answer latency ----

type latResult struct {
	ms     []float64
	errors int
}

// latency times offers sequential offers, answered by the door or by a bare
// pion PeerConnection; every offerer connects after its answer and stays up
// until the end of the row.
func latency(offers int, useDoor bool) (*latResult, error) {
	var d *webrtc.Door
	// The reference shares one DTLS certificate too, as the door does.
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	cert0, err := pionwebrtc.GenerateCertificate(key)
	if err != nil {
		return nil, err
	}
	cert := *cert0
	if useDoor {
		var err error
		if d, _, err = newDoor(); err != nil {
			return nil, err
		}
		defer d.Close()
	}
	var pcs []*pionwebrtc.PeerConnection
	defer func() {
		for _, pc := range pcs {
			pc.Close()
		}
	}()
	r := &latResult{}
	for i := range offers {
		o, err := newOfferer()
		if err != nil {
			return nil, err
		}
		pcs = append(pcs, o.pc)
		offer, err := o.offer()
		if err != nil {
			return nil, err
		}
		var answer []byte
		start := time.Now()
		if useDoor {
			id := fmt.Sprintf("lat%d", i)
			answer, _, err = d.Offer(context.Background(), id, id+".x", offer)
		} else {
			var pc *pionwebrtc.PeerConnection
			pc, answer, err = pionAnswer(offer, cert)
			if pc != nil {
				pcs = append(pcs, pc)
			}
		}
		el := time.Since(start)
		if err != nil {
			r.errors++
			continue
		}
		r.ms = append(r.ms, float64(el.Microseconds())/1000)
		if err := o.connect(answer, 10*time.Second); err != nil {
			return nil, err
		}
	}
	slices.Sort(r.ms)
	return r, nil
}

// latencyHTTP times WHIP offers over HTTP against the real daemon: for
// each, POST /v2/live (not timed), then POST .../whip with the session
// token (timed until the 201 is read), connect, DELETE the resource.
func latencyHTTP(offers int) (*latResult, error) {
	d, err := benchd.Start("webrtc:\n  include_loopback: true\n  udp_ports: \"47000-47999\"\n", "--log-level", "info")
	if err != nil {
		return nil, err
	}
	defer d.Stop()
	r := &latResult{}
	for range offers {
		var live struct {
			ID  string `json:"id"`
			URL string `json:"url"`
		}
		body := `{"encoding":"wav/ulaw","bit_depth":8,"sample_rate":8000,"channels":1}`
		if err := call(d, "POST", "/v2/live", d.Key, "application/json", body, 201, &live); err != nil {
			return nil, err
		}
		u, err := url.Parse(live.URL)
		if err != nil {
			return nil, err
		}
		o, err := newOfferer()
		if err != nil {
			return nil, err
		}
		offer, err := o.offer()
		if err != nil {
			o.pc.Close()
			return nil, err
		}
		req, _ := http.NewRequest("POST", d.Base+"/v2/live/"+live.ID+"/whip", bytes.NewReader(offer))
		req.Header.Set("Content-Type", "application/sdp")
		req.Header.Set("Authorization", "Bearer "+u.Query().Get("token"))
		start := time.Now()
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			o.pc.Close()
			return nil, err
		}
		answer, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		el := time.Since(start)
		if resp.StatusCode != 201 {
			r.errors++
			o.pc.Close()
			continue
		}
		r.ms = append(r.ms, float64(el.Microseconds())/1000)
		err = o.connect(answer, 10*time.Second)
		if err == nil {
			err = call(d, "DELETE", resp.Header.Get("Location"), "", "", "", 200, nil)
		}
		o.pc.Close()
		if err != nil {
			return nil, err
		}
	}
	slices.Sort(r.ms)
	return r, nil
}

// call does one request and checks its status; out, when not nil, takes
// the JSON body.
func call(d *benchd.Daemon, method, path, key, ctype, body string, want int, out any) error {
	req, err := http.NewRequest(method, d.Base+path, strings.NewReader(body))
	if err != nil {
		return err
	}
	if key != "" {
		req.Header.Set("x-service-key", key)
	}
	if ctype != "" {
		req.Header.Set("Content-Type", ctype)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != want {
		return fmt.Errorf("%s %s: %d %s", method, path, resp.StatusCode, b)
	}
	if out != nil {
		return json.Unmarshal(b, out)
	}
	return nil
}

// pionAnswer answers like the door does (PCMU/PCMA only, UDP host
// candidates on the same port range, loopback included, complete
// gathering) with nothing of the door around it.
func pionAnswer(offer []byte, cert pionwebrtc.Certificate) (*pionwebrtc.PeerConnection, []byte, error) {
	me := &pionwebrtc.MediaEngine{}
	pcma := pcmu
	pcma.MimeType, pcma.PayloadType = pionwebrtc.MimeTypePCMA, 8
	for _, c := range []pionwebrtc.RTPCodecParameters{pcmu, pcma} {
		if err := me.RegisterCodec(c, pionwebrtc.RTPCodecTypeAudio); err != nil {
			return nil, nil, err
		}
	}
	var se pionwebrtc.SettingEngine
	lo, hi := 47000, 47999
	if err := se.SetEphemeralUDPPortRange(uint16(lo), uint16(hi)); err != nil {
		return nil, nil, err
	}
	se.SetNetworkTypes([]pionwebrtc.NetworkType{pionwebrtc.NetworkTypeUDP4, pionwebrtc.NetworkTypeUDP6})
	se.SetIncludeLoopbackCandidate(true)
	api := pionwebrtc.NewAPI(pionwebrtc.WithMediaEngine(me), pionwebrtc.WithSettingEngine(se))
	pc, err := api.NewPeerConnection(pionwebrtc.Configuration{
		Certificates: []pionwebrtc.Certificate{cert}, BundlePolicy: pionwebrtc.BundlePolicyMaxBundle,
	})
	if err != nil {
		return nil, nil, err
	}
	if err := pc.SetRemoteDescription(pionwebrtc.SessionDescription{Type: pionwebrtc.SDPTypeOffer, SDP: string(offer)}); err != nil {
		return pc, nil, err
	}
	ans, err := pc.CreateAnswer(nil)
	if err != nil {
		return pc, nil, err
	}
	gathered := pionwebrtc.GatheringCompletePromise(pc)
	if err := pc.SetLocalDescription(ans); err != nil {
		return pc, nil, err
	}
	<-gathered
	return pc, []byte(pc.LocalDescription().SDP), nil
}

// ---- WHIP offerer (a pion peer sending one PCMU track) ----

type offerer struct {
	pc    *pionwebrtc.PeerConnection
	track *pionwebrtc.TrackLocalStaticRTP
	up    chan struct{}
}

func newOfferer() (*offerer, error) {
	me := &pionwebrtc.MediaEngine{}
	if err := me.RegisterCodec(pcmu, pionwebrtc.RTPCodecTypeAudio); err != nil {
		return nil, err
	}
	var se pionwebrtc.SettingEngine
	se.SetIncludeLoopbackCandidate(true)
	se.SetNetworkTypes([]pionwebrtc.NetworkType{pionwebrtc.NetworkTypeUDP4})
	se.SetInterfaceFilter(func(name string) bool { return name == "lo" })
	api := pionwebrtc.NewAPI(pionwebrtc.WithMediaEngine(me), pionwebrtc.WithSettingEngine(se))
	pc, err := api.NewPeerConnection(pionwebrtc.Configuration{})
	if err != nil {
		return nil, err
	}
	o := &offerer{pc: pc, up: make(chan struct{})}
	var once sync.Once
	pc.OnConnectionStateChange(func(s pionwebrtc.PeerConnectionState) {
		if s == pionwebrtc.PeerConnectionStateConnected {
			once.Do(func() { close(o.up) })
		}
	})
	if o.track, err = pionwebrtc.NewTrackLocalStaticRTP(pcmu.RTPCodecCapability, "audio", "whipbench"); err != nil {
		pc.Close()
		return nil, err
	}
	if _, err := pc.AddTransceiverFromTrack(o.track, pionwebrtc.RTPTransceiverInit{Direction: pionwebrtc.RTPTransceiverDirectionSendonly}); err != nil {
		pc.Close()
		return nil, err
	}
	return o, nil
}

func (o *offerer) offer() ([]byte, error) {
	offer, err := o.pc.CreateOffer(nil)
	if err != nil {
		return nil, err
	}
	gathered := pionwebrtc.GatheringCompletePromise(o.pc)
	if err := o.pc.SetLocalDescription(offer); err != nil {
		return nil, err
	}
	<-gathered
	return []byte(o.pc.LocalDescription().SDP), nil
}

func (o *offerer) connect(answer []byte, timeout time.Duration) error {
	if err := o.pc.SetRemoteDescription(pionwebrtc.SessionDescription{Type: pionwebrtc.SDPTypeAnswer, SDP: string(answer)}); err != nil {
		return err
	}
	select {
	case <-o.up:
		return nil
	case <-time.After(timeout):
		return errors.New("offerer did not connect")
	}
}

// ---- receive path CPU ----

// msg is one line between the door process and the sender.
type msg struct {
	Kind  string  `json:"kind"` // offer, answer, ports, streaming, done
	Index int     `json:"index,omitempty"`
	SDP   string  `json:"sdp,omitempty"`
	Ports []int   `json:"ports,omitempty"`
	Sent  int64   `json:"sent,omitempty"` // bytes of payload sent per session (done)
	CPU   float64 `json:"cpu,omitempty"`  // sender's CPU seconds while streaming (done)
}

type recvResult struct {
	cpu, senderCPU float64 // cores
	received       float64 // fraction of the sent audio counted by the sink
	goroutines     int
	offerMS        []float64
}

// receive runs one row: a sender process with n streams in mode (webrtc or
// udp), the door process's CPU measured between its streaming and done
// lines.
func receive(mode string, n int, dur time.Duration, speech string) (*recvResult, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(exe, "-sender", "-mode", mode, "-n", strconv.Itoa(n), "-duration", dur.String(), "-speech", speech)
	cmd.Stderr = os.Stderr
	in, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	defer cmd.Wait()
	defer cmd.Process.Kill()
	enc, dec := json.NewEncoder(in), json.NewDecoder(bufio.NewReader(out))

	att := &attacher{}
	r := &recvResult{}
	var door *webrtc.Door
	var conns []*net.UDPConn
	var readers sync.WaitGroup
	defer func() {
		for _, c := range conns {
			c.Close()
		}
		readers.Wait()
	}()
	if mode == "webrtc" {
		if door, att, err = newDoor(); err != nil {
			return nil, err
		}
		defer door.Close()
	} else {
		var ports []int
		for i := range n {
			c, err := net.ListenUDP("udp4", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
			if err != nil {
				return nil, err
			}
			conns = append(conns, c)
			ports = append(ports, c.LocalAddr().(*net.UDPAddr).Port)
			s, _ := att.AttachAudio(context.Background(), fmt.Sprintf("udp%d.x", i))
			readers.Go(func() { readUDP(c, s) })
		}
		if err := enc.Encode(msg{Kind: "ports", Ports: ports}); err != nil {
			return nil, err
		}
	}
	var cpu0 float64
	var t0 time.Time
	var bytes0 int64
	for {
		var m msg
		if err := dec.Decode(&m); err != nil {
			return nil, fmt.Errorf("sender: %w", err)
		}
		switch m.Kind {
		case "offer":
			id := fmt.Sprintf("s%d", m.Index)
			start := time.Now()
			ans, _, err := door.Offer(context.Background(), id, id+".x", []byte(m.SDP))
			if err != nil {
				return nil, err
			}
			r.offerMS = append(r.offerMS, float64(time.Since(start).Microseconds())/1000)
			if err := enc.Encode(msg{Kind: "answer", Index: m.Index, SDP: string(ans)}); err != nil {
				return nil, err
			}
		case "streaming":
			cpu0, t0, bytes0 = selfCPU(), time.Now(), att.bytes.Load()
			r.goroutines = runtime.NumGoroutine()
			if err := enc.Encode(msg{Kind: "go"}); err != nil {
				return nil, err
			}
		case "done":
			wall := time.Since(t0).Seconds()
			r.cpu = (selfCPU() - cpu0) / wall
			r.senderCPU = m.CPU / wall
			got := att.bytes.Load() - bytes0
			r.received = float64(got) / float64(m.Sent*int64(n))
			enc.Encode(msg{Kind: "bye"})
			slices.Sort(r.offerMS)
			return r, nil
		}
	}
}

func readUDP(c *net.UDPConn, s ingest.Session) {
	buf := make([]byte, 1500)
	var pkt rtp.Packet
	for {
		n, err := c.Read(buf)
		if err != nil {
			return
		}
		if pkt.Unmarshal(buf[:n]) != nil || len(pkt.Payload) == 0 {
			continue
		}
		s.Write(context.Background(), pkt.Payload)
	}
}

// ---- the sender process ----

func runSender(mode string, n int, dur time.Duration, wav string) error {
	audio, err := exec.Command("ffmpeg", "-v", "error", "-i", wav, "-ar", "8000", "-ac", "1", "-f", "mulaw", "-").Output()
	if err != nil {
		return fmt.Errorf("ffmpeg: %w", err)
	}
	audio = audio[:len(audio)/packetLen*packetLen]
	enc, dec := json.NewEncoder(os.Stdout), json.NewDecoder(bufio.NewReader(os.Stdin))
	var send func(i int, p *rtp.Packet) error
	if mode == "webrtc" {
		offs := make([]*offerer, n)
		for i := range n {
			o, err := newOfferer()
			if err != nil {
				return err
			}
			defer o.pc.Close()
			sdp, err := o.offer()
			if err != nil {
				return err
			}
			if err := enc.Encode(msg{Kind: "offer", Index: i, SDP: string(sdp)}); err != nil {
				return err
			}
			var m msg
			if err := dec.Decode(&m); err != nil {
				return err
			}
			if err := o.connect([]byte(m.SDP), 10*time.Second); err != nil {
				return err
			}
			offs[i] = o
		}
		send = func(i int, p *rtp.Packet) error { return offs[i].track.WriteRTP(p) }
	} else {
		var m msg
		if err := dec.Decode(&m); err != nil {
			return err
		}
		c, err := net.ListenUDP("udp4", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
		if err != nil {
			return err
		}
		defer c.Close()
		buf := make([]byte, 1500)
		send = func(i int, p *rtp.Packet) error {
			b, err := p.MarshalTo(buf)
			if err != nil {
				return err
			}
			_, err = c.WriteToUDP(buf[:b], &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1), Port: m.Ports[i]})
			return err
		}
	}
	// Let the connections settle (DTLS done, first RTCP) before measuring.
	warm := time.NewTimer(time.Second)
	<-warm.C
	if err := enc.Encode(msg{Kind: "streaming"}); err != nil {
		return err
	}
	var goMsg msg
	if err := dec.Decode(&goMsg); err != nil { // the door has read its CPU
		return err
	}
	cpu0 := selfCPU()
	packets := int(dur / packetDur)
	start := time.Now()
	pkt := &rtp.Packet{Header: rtp.Header{Version: 2, PayloadType: 0}}
	timer := time.NewTimer(0)
	for k := range packets {
		<-timer.C
		for i := range n {
			// Each session starts at another point of the clip.
			off := ((k + i*len(audio)/packetLen/n) * packetLen) % len(audio)
			pkt.SequenceNumber, pkt.Timestamp, pkt.SSRC = uint16(k), uint32(k*packetLen), uint32(1000+i)
			pkt.Payload = audio[off : off+packetLen]
			if err := send(i, pkt); err != nil {
				return err
			}
		}
		timer.Reset(time.Until(start.Add(time.Duration(k+1) * packetDur)))
	}
	// Packets in flight reach the sink before done is read.
	<-timer.C
	drain := time.NewTimer(200 * time.Millisecond)
	<-drain.C
	if err := enc.Encode(msg{Kind: "done", Sent: int64(packets * packetLen), CPU: selfCPU() - cpu0}); err != nil {
		return err
	}
	var m msg
	dec.Decode(&m) // bye: the door has read its CPU
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
