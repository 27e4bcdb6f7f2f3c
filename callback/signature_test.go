package callback_test

import (
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/earshot-dev/earshot/callback"
)

// TestVerify: a fresh signature verifies; the same delivery sent again
// past the tolerance (a replay), a changed body or timestamp, another
// secret and malformed headers do not, each with its error.
func TestVerify(t *testing.T) {
	secret := []byte("0123456789abcdef0123456789abcdef")
	body := []byte(`{"id":"j","event":"transcription.success","payload":{}}`)
	at := time.Unix(1_700_000_000, 0)
	h := callback.Sign(secret, at, body)
	if !strings.HasPrefix(h, "t=1700000000,v1=") || len(h) != len("t=1700000000,v1=")+64 {
		t.Fatalf("Sign = %q", h)
	}
	forged := strings.Replace(h, "t=1700000000", "t="+strconv.FormatInt(at.Add(time.Hour).Unix(), 10), 1)
	for _, tc := range []struct {
		name   string
		secret []byte
		header string
		body   []byte
		now    time.Time
		tol    time.Duration
		want   error
	}{
		{"fresh", secret, h, body, at.Add(2 * time.Second), 0, nil},
		{"clock behind", secret, h, body, at.Add(-time.Minute), 0, nil},
		{"replayed after the tolerance", secret, h, body, at.Add(callback.DefaultTolerance + time.Second), 0, callback.ErrSignatureExpired},
		{"replayed within a tighter tolerance", secret, h, body, at.Add(31 * time.Second), 30 * time.Second, callback.ErrSignatureExpired},
		{"timestamp moved forward", secret, forged, body, at.Add(time.Hour), 0, callback.ErrSignatureMismatch},
		{"body changed", secret, h, []byte(`{"id":"k"}`), at, 0, callback.ErrSignatureMismatch},
		{"other secret", []byte("other"), h, body, at, 0, callback.ErrSignatureMismatch},
		{"second v1 matches", secret, "t=1700000000,v1=00," + h[len("t=1700000000,"):], body, at, 0, nil},
		{"no v1", secret, "t=1700000000", body, at, 0, callback.ErrSignatureMalformed},
		{"no t", secret, h[len("t=1700000000,"):], body, at, 0, callback.ErrSignatureMalformed},
		{"bare hex (the body signature)", secret, "deadbeef", body, at, 0, callback.ErrSignatureMalformed},
		{"empty", secret, "", body, at, 0, callback.ErrSignatureMalformed},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if err := callback.Verify(tc.secret, tc.header, tc.body, tc.now, tc.tol); !errors.Is(err, tc.want) || (tc.want == nil && err != nil) {
				t.Errorf("Verify = %v, want %v", err, tc.want)
			}
		})
	}
}
