package acceptloop

import (
	"errors"
	"net"
	"os"
	"syscall"
	"testing"
	"time"
)

// failingListener fails its first n accepts with err, then accepts from a
// real listener.
type failingListener struct {
	net.Listener
	n   int
	err error
}

func (f *failingListener) Accept() (net.Conn, error) {
	if f.n > 0 {
		f.n--
		return nil, f.err
	}
	return f.Listener.Accept()
}

// TestAcceptRetriesDescriptorExhaustion: EMFILE from accept (the daemon
// out of file descriptors) is waited out with growing pauses, not
// returned to the server loop, which would end it; a closed listener still
// ends Accept.
func TestAcceptRetriesDescriptorExhaustion(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	emfile := &net.OpError{Op: "accept", Net: "tcp", Err: os.NewSyscallError("accept4", syscall.EMFILE)}
	var pauses []time.Duration
	l := New(&failingListener{Listener: ln, n: 12, err: emfile}, "test", nil)
	l.sleep = func(d time.Duration) { pauses = append(pauses, d) }
	go func() {
		if c, err := net.Dial("tcp", ln.Addr().String()); err == nil {
			c.Close()
		}
	}()
	c, err := l.Accept()
	if err != nil {
		t.Fatalf("Accept after 12 EMFILEs = %v; want the next connection", err)
	}
	c.Close()
	if len(pauses) != 12 || pauses[0] != minPause || pauses[len(pauses)-1] != maxPause {
		t.Fatalf("pauses %v; want 12 growing from %s to %s", pauses, minPause, maxPause)
	}
	ln.Close()
	if _, err := l.Accept(); !errors.Is(err, net.ErrClosed) {
		t.Fatalf("Accept on a closed listener = %v; want net.ErrClosed", err)
	}
}

// TestAdmitting: Accept skips the connections admit refuses and returns
// the first it lets through, as admit returned it.
func TestAdmitting(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	n := 0
	type wrapped struct{ net.Conn }
	al := Admitting(ln, func(c net.Conn) net.Conn {
		if n++; n < 3 {
			c.Close()
			return nil
		}
		return wrapped{c}
	})
	for range 3 {
		c, err := net.Dial("tcp", ln.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
	}
	c, err := al.Accept()
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, ok := c.(wrapped); !ok || n != 3 {
		t.Errorf("Accept returned %T after %d admits, want the third, wrapped", c, n)
	}
}
