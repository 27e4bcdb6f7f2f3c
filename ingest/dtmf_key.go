package ingest

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/earshot-dev/earshot/errcode"
)

// Where a DTMF key came from (Key.Source, the dtmf message's source).
const (
	KeyRFC4733 = "rfc4733"  // an RTP telephone-event (SIP, WebRTC)
	KeySIPInfo = "sip_info" // a SIP INFO body (application/dtmf-relay, application/dtmf)
	KeyInband  = "inband"   // a tone detected in the call's audio
)

// MaxKeyDuration bounds a key's Duration: longer is clipped to it (RFC 4733
// events last at most a few seconds; a held key is still one key).
const MaxKeyDuration = 60.0

// ErrBadKey is a Key whose digit is not a DTMF digit or whose source is
// unknown: the door's bug or hostile input (SIP INFO answers 400).
var ErrBadKey = errcode.ErrInvalid.Sub("ingest: bad DTMF key", "")

// Key is one DTMF key pressed on a call. Its digit is a card digit as
// often as not: it must never reach a log line, an error or the disk in
// clear (the session masks it unless pci.mask_dtmf is false).
type Key struct {
	// Digit is '0'-'9', '*', '#' or 'A'-'D'.
	Digit byte
	// Duration is how long the key was held, in seconds (0 when unknown).
	Duration float64
	// Source is KeyRFC4733, KeySIPInfo or KeyInband.
	Source string
}

// IsDigit reports whether d is a DTMF digit: '0'-'9', '*', '#', 'A'-'D'.
func IsDigit(d byte) bool {
	return d >= '0' && d <= '9' || d == '*' || d == '#' || d >= 'A' && d <= 'D'
}

// eventDigits maps RFC 4733 event codes 0-15 to their keys (section 3.2).
const eventDigits = "0123456789*#ABCD"

// EventDigit is the key of RFC 4733 event code code; ok is false for the
// codes that are no key (16 and up: flash, fax and modem tones).
func EventDigit(code int) (d byte, ok bool) {
	if code < 0 || code >= len(eventDigits) {
		return 0, false
	}
	return eventDigits[code], true
}

// Check reports a key the session cannot take (ErrBadKey), naming neither
// its digit nor anything else of it.
func (k Key) Check() error {
	switch {
	case !IsDigit(k.Digit):
		return &errcode.Error{Kind: ErrBadKey, Msg: "a DTMF key's digit must be 0-9, *, # or A-D"}
	case k.Source != KeyRFC4733 && k.Source != KeySIPInfo && k.Source != KeyInband:
		return &errcode.Error{Kind: ErrBadKey, Msg: fmt.Sprintf("DTMF key source %q is none of %s, %s, %s", k.Source, KeyRFC4733, KeySIPInfo, KeyInband)}
	case !(k.Duration >= 0): // NaN too
		return &errcode.Error{Kind: ErrBadKey, Msg: "a DTMF key's duration must be 0 or more seconds"}
	}
	return nil
}

// KeySession is what a door asserts on its Session to hand it the DTMF keys
// of its call (the SIP door's RFC 4733 events and INFO requests, the WebRTC
// door's telephone-events). Key records k at the session's current audio
// position and returns once the session has it; ctx bounds only the wait
// for the session to take it. It returns ErrBadKey for a key Check refuses
// and the session's end error once it has ended. Safe for concurrent use.
type KeySession interface {
	Key(ctx context.Context, k Key) error
}

// A door hands a session at most KeyBurst keys at once and KeyRate a
// second after that (KeyLimiter): a person keys at most about ten a second
// (RFC 4733's 40 ms tones and gaps), so a flood of thousands is cut to a
// few a second before it costs the session anything.
const (
	KeyRate  = 20
	KeyBurst = 40
)

// KeyLimiter is one call's bound on keys (a token bucket of KeyBurst
// tokens, KeyRate a second). The zero value is full. Safe for concurrent
// use (SIP INFO requests of a call come on their own goroutines).
type KeyLimiter struct {
	mu      sync.Mutex
	started bool
	tokens  float64
	last    time.Time
	dropped int
}

// Allow reports whether a key arriving at now may go to the session;
// first is true for the first key it refuses (the door logs it, once).
func (l *KeyLimiter) Allow(now time.Time) (ok, first bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.started {
		l.started, l.tokens, l.last = true, KeyBurst, now
	}
	if dt := now.Sub(l.last).Seconds(); dt > 0 {
		l.tokens = min(KeyBurst, l.tokens+dt*KeyRate)
		l.last = now
	}
	if l.tokens >= 1 {
		l.tokens--
		return true, false
	}
	l.dropped++
	return false, l.dropped == 1
}

// Dropped is the keys Allow refused.
func (l *KeyLimiter) Dropped() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.dropped
}

// Admit is Allow for a door's key arriving now: false past the bound, the
// first refusal logged (without the key) as the call's "dtmf flood".
func (l *KeyLimiter) Admit(now time.Time, log *slog.Logger) bool {
	ok, first := l.Allow(now)
	if first {
		log.Warn("dtmf flood: keys past the call's bound dropped", "rate", KeyRate, "burst", KeyBurst)
	}
	return ok
}

// KeyWait bounds a door's wait for its session to take a key.
const KeyWait = 2 * time.Second

// SendKey hands k to w when it takes keys (a KeySession: the daemon's
// sessions do), waiting at most KeyWait; a refusal (the session ended) is
// logged at debug, without the key.
func SendKey(ctx context.Context, w any, k Key, log *slog.Logger) {
	ks, ok := w.(KeySession)
	if !ok {
		return
	}
	ctx, cancel := context.WithTimeout(ctx, KeyWait)
	defer cancel()
	if err := ks.Key(ctx, k); err != nil {
		log.Debug("session refused a dtmf key", "error", err)
	}
}
