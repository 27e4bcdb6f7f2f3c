package remote

import (
	"errors"
	"sync"
	"time"

	"github.com/earshot-dev/earshot/recognizer/openai"
)

// errCircuitOpen is wrapped (with ErrUnavailable) by requests refused by
// an open breaker.
var errCircuitOpen = errors.New("circuit open")

// breakerState is the state of a breaker.
type breakerState int

const (
	breakerClosed   breakerState = iota // requests flow; failures counted
	breakerOpen                         // requests fail fast until the cooldown ends
	breakerHalfOpen                     // cooldown over: one probe at a time
)

func (s breakerState) String() string {
	switch s {
	case breakerClosed:
		return "closed"
	case breakerOpen:
		return "open"
	case breakerHalfOpen:
		return "half-open"
	}
	return "unknown"
}

// The outcomes of an attempt, as package openai classifies them.
const (
	outcomeSuccess = openai.Success // the server answered (any 2xx, or a 4xx it chose)
	outcomeFailure = openai.Failure // unreachable, 5xx/429/408 or too slow
	outcomeNeutral = openai.Neutral // cancelled by the caller: says nothing
)

// breaker is a consecutive-failure circuit breaker shared by all requests
// of an Engine. Safe for concurrent use. Time comes from time.Now, so
// testing/synctest controls it.
type breaker struct {
	threshold int
	cooldown  time.Duration

	mu       sync.Mutex
	state    breakerState // guarded by mu
	failures int          // guarded by mu; consecutive failed attempts while closed
	openedAt time.Time    // guarded by mu; when it last opened
	probing  bool         // guarded by mu; a half-open probe is in flight
}

func newBreaker(threshold int, cooldown time.Duration) *breaker {
	return &breaker{threshold: threshold, cooldown: cooldown}
}

// allow asks to send one attempt. It returns errCircuitOpen while the
// circuit is open, or half-open with a probe already in flight. When it
// returns nil the caller must report the attempt's outcome with done.
func (b *breaker) allow() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.advanceLocked()
	switch b.state {
	case breakerOpen:
		return errCircuitOpen
	case breakerHalfOpen:
		if b.probing {
			return errCircuitOpen
		}
		b.probing = true
	}
	return nil
}

// closed reports whether requests currently flow freely (no probe
// needed); partial requests are only started then.
func (b *breaker) closed() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.advanceLocked()
	return b.state == breakerClosed
}

// advanceLocked moves an open breaker whose cooldown is over to half-open.
func (b *breaker) advanceLocked() {
	if b.state == breakerOpen && time.Since(b.openedAt) >= b.cooldown {
		b.state = breakerHalfOpen
		b.probing = false
	}
}

// done records the outcome of an attempt allow let through and returns the
// state before and after, so the caller can log transitions.
func (b *breaker) done(o openai.Outcome) (from, to breakerState) {
	b.mu.Lock()
	defer b.mu.Unlock()
	from = b.state
	switch o {
	case outcomeSuccess:
		b.state = breakerClosed
		b.failures = 0
		b.probing = false
	case outcomeFailure:
		switch b.state {
		case breakerClosed:
			b.failures++
			if b.failures >= b.threshold {
				b.openLocked()
			}
		case breakerHalfOpen:
			b.openLocked()
		case breakerOpen:
			// An attempt let through before another one opened the
			// circuit: the cooldown already runs.
		}
	case outcomeNeutral:
		if b.state == breakerHalfOpen {
			b.probing = false
		}
	}
	return from, b.state
}

func (b *breaker) openLocked() {
	b.state = breakerOpen
	b.openedAt = time.Now()
	b.failures = 0
	b.probing = false
}
