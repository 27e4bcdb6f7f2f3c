package callback

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"strconv"
	"strings"
	"time"
)

// DefaultTolerance is how old (or how far in the future, for clocks that
// disagree) a signed timestamp Verify accepts when given no tolerance: a
// delivery captured and sent again later than this is refused. Each retry
// is signed afresh, so the tolerance bounds the network's delay, not the
// outbox's backoff.
const DefaultTolerance = 5 * time.Minute

// Errors of Verify.
var (
	// ErrSignatureMalformed is returned when the header is not
	// "t=<unix seconds>,v1=<hex>[,v1=<hex>...]".
	ErrSignatureMalformed = errors.New("callback: signature header malformed")
	// ErrSignatureMismatch is returned when no v1 in the header is the
	// HMAC of the timestamp and body under the secret: not ours, or the
	// body or timestamp was changed.
	ErrSignatureMismatch = errors.New("callback: signature does not match")
	// ErrSignatureExpired is returned when the signature matches but its
	// timestamp is further from now than the tolerance: a replay.
	ErrSignatureExpired = errors.New("callback: signature timestamp outside tolerance")
)

// Sign returns the HeaderTimedSignature value of a delivery attempt made
// at t: "t=<unix seconds>,v1=<hex HMAC-SHA256 of "<unix seconds>." + body
// under secret>" (the scheme of Stripe's webhooks). The timestamp is part
// of what is signed, so a receiver that checks it can refuse a captured
// delivery sent again later (Verify).
func Sign(secret []byte, t time.Time, body []byte) string {
	ts := strconv.FormatInt(t.Unix(), 10)
	return "t=" + ts + ",v1=" + timedMAC(secret, ts, body)
}

// timedMAC is the hex HMAC-SHA256 of ts + "." + body under secret.
func timedMAC(secret []byte, ts string, body []byte) string {
	mac := hmac.New(sha256.New, secret)
	mac.Write([]byte(ts))
	mac.Write([]byte{'.'})
	mac.Write(body)
	return hex.EncodeToString(mac.Sum(nil))
}

// Verify checks a HeaderTimedSignature value against the body as received,
// the account's callback secret and the receiver's clock: nil when one v1
// matches and the timestamp is within tolerance of now (DefaultTolerance
// when tolerance <= 0). A receiver also drops a HeaderDelivery id it has
// already taken, which stops a replay inside the tolerance.
// docs/PROTOCOL.md shows the same check in a few lines for receivers that
// do not import this package.
func Verify(secret []byte, header string, body []byte, now time.Time, tolerance time.Duration) error {
	if tolerance <= 0 {
		tolerance = DefaultTolerance
	}
	var ts string
	var sigs []string
	for part := range strings.SplitSeq(header, ",") {
		k, v, ok := strings.Cut(strings.TrimSpace(part), "=")
		switch {
		case !ok:
			return ErrSignatureMalformed
		case k == "t":
			ts = v
		case k == "v1":
			sigs = append(sigs, v)
		}
	}
	sec, err := strconv.ParseInt(ts, 10, 64)
	if err != nil || len(sigs) == 0 {
		return ErrSignatureMalformed
	}
	want := timedMAC(secret, ts, body)
	matched := false
	for _, s := range sigs {
		if hmac.Equal([]byte(s), []byte(want)) {
			matched = true
		}
	}
	if !matched {
		return ErrSignatureMismatch
	}
	if d := now.Sub(time.Unix(sec, 0)); d > tolerance || d < -tolerance {
		return ErrSignatureExpired
	}
	return nil
}
