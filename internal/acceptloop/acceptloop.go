// Package acceptloop keeps a listener serving through accept errors. A
// server loop (fasthttp's Serve, sipgo's TCP transport) returns on the
// first error Accept gives it, and the daemon ends with it: running out of
// file descriptors for a moment (EMFILE, ENFILE), or a connection reset
// before it was accepted (ECONNABORTED), ended every call and the API at
// once (issue 43 finding 2). Listener retries such errors after a growing
// pause, as net/http's Server does for temporary errors, and returns only
// once the listener is closed.
package acceptloop

import (
	"errors"
	"log/slog"
	"net"
	"time"
)

// Backoff bounds: the first pause after an accept error, and the longest.
const (
	minPause = 5 * time.Millisecond
	maxPause = time.Second
	// logEvery bounds the log to one line per door this often while
	// errors go on.
	logEvery = 10 * time.Second
)

// Listener is a net.Listener whose Accept retries every error but the
// listener's own closing.
type Listener struct {
	net.Listener
	door string
	log  *slog.Logger
	// sleep waits between attempts (time.Sleep; a test's own).
	sleep func(time.Duration)
}

// New wraps ln; door names it in the log ("api", "sip tcp"). log may be nil.
func New(ln net.Listener, door string, log *slog.Logger) *Listener {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Listener{Listener: ln, door: door, log: log, sleep: time.Sleep}
}

// Accept returns the next connection. Errors other than net.ErrClosed are
// logged (at most once per logEvery, with how many there were) and retried
// after a pause that doubles from 5 ms up to 1 s while they go on.
func (l *Listener) Accept() (net.Conn, error) {
	pause := time.Duration(0)
	var lastLog time.Time
	failures := 0
	for {
		c, err := l.Listener.Accept()
		if err == nil {
			if failures > 0 {
				l.log.Info("accepting connections again", "door", l.door, "failed_accepts", failures)
			}
			return c, nil
		}
		if errors.Is(err, net.ErrClosed) {
			return nil, err
		}
		failures++
		if time.Since(lastLog) >= logEvery {
			l.log.Error("accept failed; retrying (is the open files limit reached?)", "door", l.door,
				"error", err, "failed_accepts", failures)
			lastLog = time.Now()
		}
		pause = min(max(2*pause, minPause), maxPause)
		l.sleep(pause)
	}
}

// Admitting is ln whose Accept hands each accepted connection to admit and
// returns the first one admit lets through (admit returns it, or a
// wrapper); admit closes a connection it refuses and returns nil, and
// Accept then takes the next. Both doors' connection guards sit on it.
func Admitting(ln net.Listener, admit func(net.Conn) net.Conn) net.Listener {
	return admitting{ln, admit}
}

type admitting struct {
	net.Listener
	admit func(net.Conn) net.Conn
}

func (l admitting) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		if ac := l.admit(c); ac != nil {
			return ac, nil
		}
	}
}
