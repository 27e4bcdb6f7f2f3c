package main

import (
	"io"
	"sync"
	"time"
)

// Log lines are batched: one info line per request would otherwise cost
// a write to journald's pipe per request. A line waits at most
// logFlushEvery, or until logFlushBytes are pending; a crash (SIGKILL)
// loses at most that much of the log.
const (
	logFlushEvery = 50 * time.Millisecond
	logFlushBytes = 64 << 10
)

// lineBuffer batches writes to w. Safe for concurrent use; Close flushes
// what is pending and stops the timer.
type lineBuffer struct {
	w io.Writer

	mu     sync.Mutex
	buf    []byte      // guarded by mu
	timer  *time.Timer // guarded by mu: armed while buf is not empty
	closed bool        // guarded by mu: writes go straight through
}

func newLineBuffer(w io.Writer) *lineBuffer {
	return &lineBuffer{w: w}
}

// Write keeps p (slog writes one whole line per call) for the next flush.
func (b *lineBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return b.w.Write(p)
	}
	b.buf = append(b.buf, p...)
	if len(b.buf) >= logFlushBytes {
		return len(p), b.flushLocked()
	}
	if b.timer == nil {
		b.timer = time.AfterFunc(logFlushEvery, b.flush)
	}
	return len(p), nil
}

func (b *lineBuffer) flush() {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.flushLocked()
}

func (b *lineBuffer) flushLocked() error {
	if b.timer != nil {
		b.timer.Stop()
		b.timer = nil
	}
	if len(b.buf) == 0 {
		return nil
	}
	_, err := b.w.Write(b.buf)
	if cap(b.buf) > 4*logFlushBytes {
		b.buf = nil // one huge line must not pin its memory
	} else {
		b.buf = b.buf[:0]
	}
	return err
}

// Close flushes and makes later writes unbuffered.
func (b *lineBuffer) Close() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.closed = true
	return b.flushLocked()
}
