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
	"bufio"
	"context"
	"encoding/binary"

	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/emiago/sipgo"
	sipmsg "github.com/emiago/sipgo/sip"
	"github.com/zaf/g711"

	"github.com/earshot-dev/earshot/ingest"
	"github.com/earshot-dev/earshot/ingest/media"
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

// ---------------------------------------------------------------- door side

// sink is the benchmark's engine: it counts what the door writes and, when
// decode is set, decodes the G.711 to 16-bit PCM as the live pipeline does.
type sink struct {
	decode   atomic.Bool
	bytes    atomic.Int64
	voiced   atomic.Int64 // bytes in 160-byte steps that are not all silence
	samples  atomic.Int64
	sessions atomic.Int64
}

func (k *sink) OpenLive(_ context.Context, req ingest.LiveRequest) (ingest.Session, error) {
	n := k.sessions.Add(1)
	return &session{k: k, id: fmt.Sprintf("bench-%d", n), format: req.Format, alaw: req.Format.Encoding == media.ALaw, done: make(chan struct{})}, nil
}

type session struct {
	k      *sink
	id     string
	format media.Format
	alaw   bool
	once   sync.Once
	done   chan struct{}
}

func (s *session) ID() string           { return s.id }
func (s *session) Format() media.Format { return s.format }
func (s *session) Err() error           { return nil }

func (s *session) Write(_ context.Context, audio []byte) error {
	s.k.bytes.Add(int64(len(audio)))
	silence := byte(0xFF)
	if s.alaw {
		silence = 0xD5
	}
	voiced := 0
	for i := 0; i < len(audio); i += 160 {
		frame := audio[i:min(i+160, len(audio))]
		for _, b := range frame {
			if b != silence {
				voiced += len(frame)
				break
			}
		}
	}
	s.k.voiced.Add(int64(voiced))
	if s.k.decode.Load() {
		var pcm []byte
		if s.alaw {
			pcm = g711.DecodeAlaw(audio)
		} else {
			pcm = g711.DecodeUlaw(audio)
		}
		s.k.samples.Add(int64(len(pcm) / 2))
	}
	return nil
}

func (s *session) Stop(context.Context) error {
	s.once.Do(func() { close(s.done) })
	return nil
}

func (s *session) Done() <-chan struct{} { return s.done }

func cpuNow() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// window is what the door process did between the sender's two marks.
type window struct {
	wall, cpu time.Duration
	bytes     int64               // audio bytes (G.711) the sink or raw readers got
	voiced    int64               // of which not silence (the sink only)
	lines     map[string][]string // the sender's other output, by key
}

// child runs this binary as the sender and snapshots this process's CPU
// and the counter at its "mark start" and "mark end" lines.
func child(o opts, count func() (int64, int64), args ...string) (window, error) {
	exe, err := os.Executable()
	if err != nil {
		return window{}, err
	}
	args = append([]string{"-sender"}, args...)
	args = append(args, "-calls", strconv.Itoa(o.calls), "-setup", strconv.Itoa(o.setup), "-rounds", strconv.Itoa(o.rounds),
		"-dur", o.dur.String(), "-warm", o.warm.String(), "-speech", o.speech)
	cmd := exec.Command(exe, args...)
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		return window{}, err
	}
	if err := cmd.Start(); err != nil {
		return window{}, err
	}
	w := window{lines: map[string][]string{}}
	var t0 time.Time
	var c0 time.Duration
	var b0, v0 int64
	sc := bufio.NewScanner(out)
	for sc.Scan() {
		key, val, _ := strings.Cut(sc.Text(), " ")
		switch {
		case key == "mark" && val == "start":
			t0, c0 = time.Now(), cpuNow()
			b0, v0 = count()
		case key == "mark" && val == "end":
			w.wall, w.cpu = time.Since(t0), cpuNow()-c0
			b, v := count()
			w.bytes, w.voiced = b-b0, v-v0
		default:
			w.lines[key] = append(w.lines[key], val)
		}
	}
	if err := cmd.Wait(); err != nil {
		return w, fmt.Errorf("sender %s: %w", args[1], err)
	}
	return w, nil
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
		Routes:      []sip.Route{{User: "transcribe", Account: "bench", Live: map[string]any{"language_config": map[string]any{"languages": []string{"en"}}}}},
	}
	door, err := sip.New(cfg, k, nil)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- door.Run(ctx, udp, nil) }()
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
		target15 = pctCore
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

// raw is the reference receive loop: sockets read by one goroutine each,
// counting RTP payload bytes, nothing else.
type raw struct {
	conns []*net.UDPConn
	bytes atomic.Int64
	wg    sync.WaitGroup
}

func rawReaders(n int) (*raw, error) {
	r := &raw{}
	for range n {
		c, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
		if err != nil {
			r.close()
			return nil, err
		}
		r.conns = append(r.conns, c)
		r.wg.Go(func() {
			buf := make([]byte, 1500)
			for {
				n, _, err := c.ReadFromUDPAddrPort(buf)
				if err != nil {
					return
				}
				if n > 12 {
					r.bytes.Add(int64(n - 12))
				}
			}
		})
	}
	return r, nil
}

func (r *raw) count() (int64, int64) { b := r.bytes.Load(); return b, b }

func (r *raw) ports() string {
	var ps []string
	for _, c := range r.conns {
		ps = append(ps, strconv.Itoa(c.LocalAddr().(*net.UDPAddr).Port))
	}
	return strings.Join(ps, ",")
}

func (r *raw) close() {
	for _, c := range r.conns {
		c.Close()
	}
	r.wg.Wait()
}

// ---------------------------------------------------------------- sender side

// phone is the sender's SIP user agent client on 127.0.0.1.
type phone struct {
	ua      *sipgo.UserAgent
	cli     *sipgo.Client
	dialogs *sipgo.DialogClientCache
	target  sipmsg.Uri
	conn    net.PacketConn
}

func newPhone(target string) (*phone, error) {
	ua, err := sipgo.NewUA(sipgo.WithUserAgent("sipbench"))
	if err != nil {
		return nil, err
	}
	srv, err := sipgo.NewServer(ua)
	if err != nil {
		return nil, err
	}
	conn, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	port := conn.LocalAddr().(*net.UDPAddr).Port
	cli, err := sipgo.NewClient(ua, sipgo.WithClientHostname("127.0.0.1"), sipgo.WithClientPort(port))
	if err != nil {
		return nil, err
	}
	p := &phone{ua: ua, cli: cli, conn: conn,
		dialogs: sipgo.NewDialogClientCache(cli, sipmsg.ContactHeader{Address: sipmsg.Uri{User: "bench", Host: "127.0.0.1", Port: port}})}
	srv.OnBye(func(req *sipmsg.Request, tx sipmsg.ServerTransaction) {
		if err := p.dialogs.ReadBye(req, tx); err != nil {
			tx.Respond(sipmsg.NewResponseFromRequest(req, 481, "No Dialog", nil))
		}
	})
	go srv.ServeUDP(conn)
	host, ps, _ := net.SplitHostPort(target)
	n, _ := strconv.Atoi(ps)
	p.target = sipmsg.Uri{Scheme: "sip", User: "transcribe", Host: host, Port: n}
	return p, nil
}

func (p *phone) close() {
	p.ua.Close()
	p.conn.Close()
}

func offerSDP(port int) []byte {
	return fmt.Appendf(nil, "v=0\r\no=bench 1 1 IN IP4 127.0.0.1\r\ns=call\r\nc=IN IP4 127.0.0.1\r\nt=0 0\r\n"+
		"m=audio %d RTP/AVP 0 101\r\na=rtpmap:0 PCMU/8000\r\na=rtpmap:101 telephone-event/8000\r\na=fmtp:101 0-16\r\na=ptime:20\r\na=sendonly\r\n", port)
}

// answerPort is the m=audio port of an SDP answer.
func answerPort(body []byte) (int, error) {
	for _, l := range strings.Split(string(body), "\n") {
		if f := strings.Fields(l); len(f) >= 2 && f[0] == "m=audio" {
			return strconv.Atoi(f[1])
		}
	}
	return 0, errors.New("answer has no m=audio line")
}

// call is one placed call with its RTP socket and the door's RTP address.
type call struct {
	dlg  *sipgo.DialogClientSession
	conn *net.UDPConn
	dest *net.UDPAddr
}

// place sends an INVITE, waits for the final answer and ACKs it; it returns
// the time from sending the INVITE to the 200 OK.
func (p *phone) place(ctx context.Context) (*call, time.Duration, error) {
	conn, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		return nil, 0, err
	}
	c := &call{conn: conn}
	t0 := time.Now()
	c.dlg, err = p.dialogs.Invite(ctx, p.target, offerSDP(conn.LocalAddr().(*net.UDPAddr).Port), sipmsg.NewHeader("Content-Type", "application/sdp"))
	if err != nil {
		conn.Close()
		return nil, 0, fmt.Errorf("invite: %w", err)
	}
	if err := c.dlg.WaitAnswer(ctx, sipgo.AnswerOptions{}); err != nil {
		conn.Close()
		return nil, 0, fmt.Errorf("answer: %w", err)
	}
	lat := time.Since(t0)
	if err := c.dlg.Ack(ctx); err != nil {
		conn.Close()
		return nil, 0, fmt.Errorf("ack: %w", err)
	}
	port, err := answerPort(c.dlg.InviteResponse.Body())
	if err != nil {
		c.hangup(ctx)
		return nil, 0, err
	}
	c.dest = &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1), Port: port}
	return c, lat, nil
}

func (c *call) hangup(ctx context.Context) {
	if c.dlg != nil {
		c.dlg.Bye(ctx)
		c.dlg.Close()
	}
	c.conn.Close()
}

// loadAudio is the first speech clip as 8 kHz mu-law (ffmpeg).
func loadAudio(dir string) ([]byte, error) {
	clips, err := filepath.Glob(filepath.Join(dir, "*.wav"))
	if err != nil || len(clips) == 0 {
		return nil, fmt.Errorf("no speech clips in %s", dir)
	}
	slices.Sort(clips)
	out, err := exec.Command("ffmpeg", "-v", "error", "-i", clips[0], "-ac", "1", "-ar", "8000", "-f", "mulaw", "-").Output()
	if err != nil {
		return nil, fmt.Errorf("ffmpeg %s: %w", clips[0], err)
	}
	return out, nil
}

// stream sends one 20 ms PCMU packet per destination per 20 ms, spread
// over the period in 10 groups (as calls from a PBX are not in phase),
// until stop is closed, counting the packets sent in sent.
func stream(conns []*net.UDPConn, dests []*net.UDPAddr, audio []byte, stop <-chan struct{}, sent *atomic.Int64) {
	const frame = 160
	const groups = 10
	n := len(conns)
	seq := make([]uint16, n)
	ts := make([]uint32, n)
	off := make([]int, n)
	for i := range n {
		seq[i], ts[i] = uint16(i*1000), uint32(i*100000)
		off[i] = (i * 7919 * frame) % (len(audio) - frame)
	}
	buf := make([]byte, 12+frame)
	next := time.Now()
	for {
		for g := range groups {
			next = next.Add(20 * time.Millisecond / groups)
			select {
			case <-stop:
				return
			case <-time.After(time.Until(next)):
			}
			for i := g; i < n; i += groups {
				buf[0], buf[1] = 0x80, 0
				binary.BigEndian.PutUint16(buf[2:], seq[i])
				binary.BigEndian.PutUint32(buf[4:], ts[i])
				binary.BigEndian.PutUint32(buf[8:], uint32(0x5eed0000+i))
				if off[i]+frame > len(audio) {
					off[i] = 0
				}
				copy(buf[12:], audio[off[i]:off[i]+frame])
				off[i] += frame
				seq[i]++
				ts[i] += frame
				if _, err := conns[i].WriteToUDP(buf, dests[i]); err == nil {
					sent.Add(1)
				}
			}
		}
	}
}

// sender is the load generator process; it reports on stdout.
func sender(o opts) error {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	// sipgo logs through the default logger (a warning when its UDP
	// connection closes); the sender's report is its stdout.
	slog.SetDefault(slog.New(slog.DiscardHandler))
	switch o.mode {
	case "options", "invite":
		return latency(ctx, o)
	case "raw":
		var conns []*net.UDPConn
		var dests []*net.UDPAddr
		for _, ps := range strings.Split(o.ports, ",") {
			port, _ := strconv.Atoi(ps)
			c, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
			if err != nil {
				return err
			}
			defer c.Close()
			conns = append(conns, c)
			dests = append(dests, &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1), Port: port})
		}
		return measure(o, conns, dests, true)
	case "calls", "idle":
		p, err := newPhone(o.target)
		if err != nil {
			return err
		}
		defer p.close()
		var calls []*call
		defer func() {
			var wg sync.WaitGroup
			for _, c := range calls {
				wg.Go(func() { c.hangup(ctx) })
			}
			wg.Wait()
		}()
		var conns []*net.UDPConn
		var dests []*net.UDPAddr
		for range o.calls {
			c, _, err := p.place(ctx)
			if err != nil {
				return err
			}
			calls = append(calls, c)
			conns = append(conns, c.conn)
			dests = append(dests, c.dest)
		}
		return measure(o, conns, dests, o.mode == "calls")
	}
	return fmt.Errorf("unknown sender mode %q", o.mode)
}

// measure streams (or not), warms up, then prints the marks around the
// window and its own CPU and packet count.
func measure(o opts, conns []*net.UDPConn, dests []*net.UDPAddr, send bool) error {
	stop := make(chan struct{})
	var sent atomic.Int64
	var wg sync.WaitGroup
	if send {
		audio, err := loadAudio(o.speech)
		if err != nil {
			return err
		}
		wg.Go(func() { stream(conns, dests, audio, stop, &sent) })
	}
	time.Sleep(o.warm)
	fmt.Println("mark start")
	c0, s0 := cpuNow(), sent.Load()
	time.Sleep(o.dur)
	fmt.Println("mark end")
	cpu, s1 := cpuNow()-c0, sent.Load()
	close(stop)
	wg.Wait()
	fmt.Printf("sent %d\ncpu %.3f\n", s1-s0, cpu.Seconds())
	return nil
}

// latency runs rounds of o.setup requests sent at once and prints each
// request's time to its 200 OK ("lat ms") or its failure ("fail why").
func latency(ctx context.Context, o opts) error {
	p, err := newPhone(o.target)
	if err != nil {
		return err
	}
	defer p.close()
	var mu sync.Mutex
	report := func(format string, a ...any) {
		mu.Lock()
		defer mu.Unlock()
		fmt.Printf(format+"\n", a...)
	}
	for range o.rounds {
		gate := make(chan struct{})
		var calls []*call
		var wg sync.WaitGroup
		for range o.setup {
			wg.Go(func() {
				<-gate
				if o.mode == "options" {
					req := sipmsg.NewRequest(sipmsg.OPTIONS, p.target)
					t0 := time.Now()
					res, err := p.cli.Do(ctx, req)
					switch {
					case err != nil:
						report("fail %v", err)
					case res.StatusCode != 200:
						report("fail status %d", res.StatusCode)
					default:
						report("lat %.3f", float64(time.Since(t0).Microseconds())/1000)
					}
					return
				}
				c, lat, err := p.place(ctx)
				if err != nil {
					report("fail %v", err)
					return
				}
				report("lat %.3f", float64(lat.Microseconds())/1000)
				mu.Lock()
				calls = append(calls, c)
				mu.Unlock()
			})
		}
		close(gate)
		wg.Wait()
		for _, c := range calls {
			wg.Go(func() { c.hangup(ctx) })
		}
		wg.Wait()
		// Let the door finish tearing the calls down (its receivers drain
		// for 150 ms after a BYE) so each round measures setup alone.
		time.Sleep(500 * time.Millisecond)
	}
	return nil
}
