package rtp

import (
	"context"
	"net"
	"testing"
	"time"
)

// running is a Receiver at work in a test, writing into its sink over
// real loopback sockets.
type running struct {
	t      *testing.T
	r      *Receiver
	s      sink
	cancel context.CancelFunc
	done   chan error
}

// start runs r until the test hangs up (hangUp, until) or ends.
func start(t *testing.T, r *Receiver) *running {
	t.Helper()
	ctx, cancel := context.WithCancel(t.Context())
	g := &running{t: t, r: r, cancel: cancel, done: make(chan error, 1)}
	go func() { g.done <- r.Run(ctx, &g.s) }()
	t.Cleanup(cancel)
	return g
}

// until waits until cond holds for what the receiver wrote, 5 s at the
// most, hangs up and returns all it wrote.
func (g *running) until(cond func([]byte) bool) []byte {
	g.t.Helper()
	deadline := time.NewTimer(5 * time.Second)
	defer deadline.Stop()
	for {
		changed := g.s.changed()
		if cond(g.s.bytes()) {
			break
		}
		select {
		case <-changed:
			continue
		case <-deadline.C:
		}
		break
	}
	g.hangUp()
	return g.s.bytes()
}

// hangUp stops the receiver; Run's error fails the test.
func (g *running) hangUp() {
	g.t.Helper()
	g.cancel()
	if err := <-g.done; err != nil {
		g.t.Fatal(err)
	}
}

// has is an until condition: n bytes came.
func has(n int) func([]byte) bool { return func(b []byte) bool { return len(b) >= n } }

// listen opens n port pairs, closed when the test ends.
func listen(t *testing.T, n int) []*Pair {
	t.Helper()
	ports := testPorts(t)
	out := make([]*Pair, n)
	for i := range out {
		p, err := ports.Listen()
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { p.Close() })
		out[i] = p
	}
	return out
}

// dial connects to p's RTP port, closed when the test ends.
func dial(t *testing.T, p *Pair) *net.UDPConn {
	t.Helper()
	c, err := net.DialUDP("udp", nil, p.RTP.LocalAddr().(*net.UDPAddr))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// paced calls send(i) for i in [0, n), one every d: packets at about a
// call's pace, faster than real time.
func paced(d time.Duration, n int, send func(i int)) {
	tick := time.NewTicker(d)
	defer tick.Stop()
	for i := range n {
		<-tick.C
		send(i)
	}
}
