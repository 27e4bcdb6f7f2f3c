package ingest

import (
	"context"
	"fmt"

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
