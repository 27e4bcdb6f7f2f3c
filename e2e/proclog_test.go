package e2e

import (
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// procLog is the log of a process a test started (earshotd, Kamailio):
// every line so far, and the waiters to wake when one comes.
type procLog struct {
	mu    sync.Mutex
	lines []string // guarded by mu: every log line so far
	waits []chan struct{}
}

// add records a line and wakes every waiter.
func (p *procLog) add(line string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.lines = append(p.lines, line)
	for _, w := range p.waits {
		select {
		case w <- struct{}{}:
		default:
		}
	}
}

// index is the position of the first line so far holding part, -1 if none.
func (p *procLog) index(part string) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return slices.IndexFunc(p.lines, func(l string) bool { return strings.Contains(l, part) })
}

// waitLine waits until a line contains every one of parts; it fails t
// when done closes (the process exited) or timeout passes first.
func (p *procLog) waitLine(t *testing.T, name string, done <-chan struct{}, timeout time.Duration, parts []string) string {
	t.Helper()
	w := make(chan struct{}, 1)
	p.mu.Lock()
	p.waits = append(p.waits, w)
	p.mu.Unlock()
	deadline := time.After(timeout)
	seen := 0
	for {
		p.mu.Lock()
		lines := p.lines[seen:]
		seen = len(p.lines)
		p.mu.Unlock()
		for _, l := range lines {
			if containsAll(l, parts) {
				return l
			}
		}
		select {
		case <-w:
		case <-done:
			t.Fatalf("%s exited while waiting for log %q", name, parts)
		case <-deadline:
			t.Fatalf("no %s log line with %q within %s", name, parts, timeout)
		}
	}
}

// linesWith returns the log lines that contain s.
func (p *procLog) linesWith(s string) []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	var out []string
	for _, l := range p.lines {
		if strings.Contains(l, s) {
			out = append(out, l)
		}
	}
	return out
}

// logCount is how many log lines contain every one of parts.
func (p *procLog) logCount(parts ...string) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	n := 0
	for _, l := range p.lines {
		if containsAll(l, parts) {
			n++
		}
	}
	return n
}

// tail is the last lines of the log, at most n, leaving out the request
// lines of GET /metrics: tests poll it every few milliseconds, and a
// failed test's dump should show what the daemon did, not the polling.
func (p *procLog) tail(n int) []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	var out []string
	for i := len(p.lines) - 1; i >= 0 && len(out) < n; i-- {
		if !strings.Contains(p.lines[i], `"route":"/metrics"`) {
			out = append(out, p.lines[i])
		}
	}
	slices.Reverse(out)
	return out
}

// tailWriter keeps the last max bytes written to it: a process's stderr
// (PocketSphinx's own logging), shown only when its test fails, so a
// failing CI run ends with the failure rather than with pages of it.
type tailWriter struct {
	mu  sync.Mutex
	max int
	buf []byte // guarded by mu
}

func (w *tailWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf = append(w.buf, p...)
	if over := len(w.buf) - w.max; over > 0 {
		w.buf = append(w.buf[:0], w.buf[over:]...)
	}
	return len(p), nil
}

func (w *tailWriter) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return string(w.buf)
}
