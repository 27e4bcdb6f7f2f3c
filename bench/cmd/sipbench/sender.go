package main

import (
	"context"
	"encoding/binary"
	"fmt"
	"log/slog"
	"net"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	sipmsg "github.com/emiago/sipgo/sip"
	"github.com/pion/srtp/v3"
)

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
// until stop is closed, counting the packets sent in sent. A call with an
// SRTP context in protect (nil: none) sends its packets protected.
func stream(conns []*net.UDPConn, dests []*net.UDPAddr, protect []*srtp.Context, audio []byte, stop <-chan struct{}, sent *atomic.Int64) {
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
	sealed := make([]byte, 0, 12+frame+16)
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
				pkt := buf
				if i < len(protect) && protect[i] != nil {
					var err error
					if pkt, err = protect[i].EncryptRTP(sealed[:0], buf, nil); err != nil {
						continue
					}
				}
				if _, err := conns[i].WriteToUDP(pkt, dests[i]); err == nil {
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
		return measure(o, conns, dests, nil, true)
	case "calls", "idle", "srtp":
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
		var protect []*srtp.Context
		for range o.calls {
			c, _, err := p.place(ctx, o.mode == "srtp")
			if err != nil {
				return err
			}
			calls = append(calls, c)
			conns = append(conns, c.conn)
			dests = append(dests, c.dest)
			protect = append(protect, c.srtp)
		}
		return measure(o, conns, dests, protect, o.mode != "idle")
	}
	return fmt.Errorf("unknown sender mode %q", o.mode)
}

// measure streams (or not), warms up, then prints the marks around the
// window and its own CPU and packet count.
func measure(o opts, conns []*net.UDPConn, dests []*net.UDPAddr, protect []*srtp.Context, send bool) error {
	stop := make(chan struct{})
	var sent atomic.Int64
	var wg sync.WaitGroup
	if send {
		audio, err := loadAudio(o.speech)
		if err != nil {
			return err
		}
		wg.Go(func() { stream(conns, dests, protect, audio, stop, &sent) })
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
				c, lat, err := p.place(ctx, false)
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
