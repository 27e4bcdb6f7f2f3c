package e2e

import (
	"fmt"
	"io"
	"net"
	"os"
	"strings"
	"sync"
	"testing"
	"time"
)

// openFiles counts the file descriptors d holds.
func (d *daemonProc) openFiles() int {
	d.t.Helper()
	fds, err := os.ReadDir(fmt.Sprintf("/proc/%d/fd", d.cmd.Process.Pid))
	if err != nil {
		d.t.Fatalf("read the daemon's descriptors: %v", err)
	}
	return len(fds)
}

// TestSIPTCPConnectionsBounded is issue 43 finding 2: SIP over TCP had no
// read timeout and no cap, so 300 refused addresses holding 8 connections
// each kept 2,400 descriptors for ever, and an allowed source could hold
// thousands more; at the descriptor limit the next accept ended the whole
// daemon. Here 300 addresses of 127.0.0.0/8 outside sip.allow open 8
// connections each and an allowed source opens 200 idle ones, all held
// open by the test: the daemon's descriptors stay within sip.max_tcp_conns
// of where they started, /healthz answers throughout, another allowed
// source (the PBX) is served over TCP right after the storm, and the idle
// and refused connections are closed by the daemon, after which the hog
// is served again too.
func TestSIPTCPConnectionsBounded(t *testing.T) {
	const (
		refusedSources = 300
		perSource      = 8
		allowedIdle    = 200
		maxConns       = 150
		maxPerSource   = 40
		slack          = 40 // descriptors the daemon may open meanwhile for other work
	)
	cfg := strings.Replace(fmt.Sprintf(sipConfig, "30s", "0s"), "allow: [127.0.0.0/8]",
		fmt.Sprintf("allow: [127.0.0.0/24]\n  max_tcp_conns: %d\n  max_tcp_conns_per_source: %d\n  tcp_idle_timeout: 3s", maxConns, maxPerSource), 1)
	d, addr := startSIPDaemon(t, cfg)
	base := d.openFiles()

	var mu sync.Mutex
	var held []net.Conn
	defer func() {
		for _, c := range held {
			c.Close()
		}
	}()
	dial := func(src net.IP) {
		c, err := (&net.Dialer{LocalAddr: &net.TCPAddr{IP: src}, Timeout: 5 * time.Second}).Dial("tcp", addr)
		if err != nil {
			return // refused under the storm: as good
		}
		mu.Lock()
		held = append(held, c)
		mu.Unlock()
	}
	peak := 0
	sample := func() {
		if n := d.openFiles(); n > peak {
			peak = n
		}
	}
	var wg sync.WaitGroup
	wg.Go(func() {
		for i := range refusedSources {
			src := net.IPv4(127, 1, byte(i/250), byte(i%250+1))
			for range perSource {
				dial(src)
			}
		}
	})
	wg.Go(func() {
		for range allowedIdle {
			dial(net.IPv4(127, 0, 0, 1))
		}
	})
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	for storming := true; storming; {
		select {
		case <-done:
			storming = false
		case <-time.After(50 * time.Millisecond):
			sample()
			if st, body := d.do("GET", "/healthz", "", nil, "", nil); st != 200 {
				t.Fatalf("/healthz during the storm: %d %s", st, body)
			}
		}
	}
	sample()
	t.Logf("held %d connections; the daemon's descriptors: %d at start, %d at most", len(held), base, peak)
	if peak > base+maxConns+slack {
		t.Fatalf("the daemon's descriptors reached %d from %d with %d connections held; want at most %d (sip.max_tcp_conns %d)",
			peak, base, len(held), base+maxConns+slack, maxConns)
	}

	optionsOverTCP(t, addr, net.IPv4(127, 0, 0, 2), "the PBX, right after the storm")

	// The refused sources' connections end after their 403's time, the
	// allowed idle ones after tcp_idle_timeout: the daemon lets go of them
	// although the test still holds its ends.
	deadline := time.Now().Add(20 * time.Second)
	for d.openFiles() > base+5 {
		if time.Now().After(deadline) {
			t.Fatalf("the daemon still holds %d descriptors (%d at start) 20 s after the storm", d.openFiles(), base)
		}
		time.Sleep(200 * time.Millisecond) // polling a real process
	}
	optionsOverTCP(t, addr, net.IPv4(127, 0, 0, 1), "the idle hog, after its connections timed out")
}

// optionsOverTCP sends an OPTIONS from src over a new TCP connection and
// wants 200.
func optionsOverTCP(t *testing.T, addr string, src net.IP, who string) {
	t.Helper()
	c, err := (&net.Dialer{LocalAddr: &net.TCPAddr{IP: src}, Timeout: 5 * time.Second}).Dial("tcp", addr)
	if err != nil {
		t.Fatalf("%s: %v", who, err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(10 * time.Second))
	local := c.LocalAddr().String()
	fmt.Fprintf(c, "OPTIONS sip:transcribe@%[1]s SIP/2.0\r\nVia: SIP/2.0/TCP %[2]s;branch=z9hG4bK-opt-%[2]s\r\nMax-Forwards: 70\r\n"+
		"From: <sip:pbx@%[2]s>;tag=o1\r\nTo: <sip:transcribe@%[1]s>\r\nCall-ID: opt-%[2]s\r\nCSeq: 1 OPTIONS\r\nContent-Length: 0\r\n\r\n", addr, local)
	buf := make([]byte, 4096)
	n, err := io.ReadAtLeast(c, buf, 12)
	if err != nil || !strings.HasPrefix(string(buf[:n]), "SIP/2.0 200") {
		t.Fatalf("OPTIONS over TCP from %s: %q, %v", who, buf[:n], err)
	}
}
