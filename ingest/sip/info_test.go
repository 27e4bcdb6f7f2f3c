package sip

import (
	"errors"
	"strings"
	"testing"

	"github.com/earshot-dev/earshot/ingest"
)

// TestParseDTMFInfo: the DTMF INFO bodies PBXs send, and malformed ones:
// each good one is its key; a malformed body 400, another content type
// 415; no error quotes the body or its digit.
func TestParseDTMFInfo(t *testing.T) {
	for _, tc := range []struct {
		ct, body string
		digit    byte
		duration float64
		code     int
	}{
		{"application/dtmf-relay", "Signal=5\r\nDuration=160\r\n", '5', 0.16, 200},
		{"application/dtmf-relay", "signal= #\nduration =250", '#', 0.25, 200},
		{"Application/DTMF-Relay; charset=utf-8", "Signal=d\r\n", 'D', 0, 200},
		{"application/dtmf-relay", "Signal=11\r\nDuration=100\r\nVolume=10\r\n", '#', 0.1, 200},
		{"application/dtmf-relay", "Duration=999999999\r\nSignal=*", '*', ingest.MaxKeyDuration, 200},
		{"application/dtmf", "7\r\n", '7', 0, 200},
		{"application/dtmf", "10", '*', 0, 200},
		{"application/dtmf-relay", "Duration=160\r\n", 0, 0, 400},
		{"application/dtmf-relay", "Signal=7\r\nSignal=8\r\n", 0, 0, 400},
		{"application/dtmf-relay", "Signal=77\r\n", 0, 0, 400},
		{"application/dtmf-relay", "Signal=16\r\n", 0, 0, 400},
		{"application/dtmf-relay", "Signal=E\r\n", 0, 0, 400},
		{"application/dtmf-relay", "Signal=7\r\nDuration=-5\r\n", 0, 0, 400},
		{"application/dtmf-relay", "Signal=7\r\nDuration=1e3\r\n", 0, 0, 400},
		{"application/dtmf-relay", "Signal 7\r\n", 0, 0, 400},
		{"application/dtmf-relay", "Signal=7\r\n" + strings.Repeat("X=1\r\n", 200), 0, 0, 400},
		{"application/dtmf", "", 0, 0, 400},
		{"application/dtmf", "4111", 0, 0, 400},
		{"application/sdp", "v=0\r\n", 0, 0, 415},
		{"text/plain", "Signal=7", 0, 0, 415},
		{"", "Signal=7", 0, 0, 415},
		{"application/dtmf-relay; x=\"", "Signal=7", 0, 0, 415},
	} {
		k, err := parseDTMFInfo(tc.ct, []byte(tc.body))
		code := 200
		if err != nil {
			code, _ = reply(err)
			if strings.Contains(err.Error(), "7") || tc.body != "" && strings.Contains(err.Error(), tc.body) {
				t.Errorf("%q %q: the error quotes the body: %v", tc.ct, tc.body, err)
			}
		}
		if code != tc.code || err == nil && (k.Digit != tc.digit || k.Duration != tc.duration || k.Source != ingest.KeySIPInfo || k.Check() != nil) {
			t.Errorf("%q %q: key %+v, %d (%v); want %c %v, %d", tc.ct, tc.body, k, code, err, tc.digit, tc.duration, tc.code)
		}
	}
}

// FuzzParseDTMFRelay: any body parses to a key that Check takes, or to
// ErrBadDTMF, without panicking, and an error never quotes the body.
func FuzzParseDTMFRelay(f *testing.F) {
	for _, s := range []string{"Signal=5\r\nDuration=160\r\n", "Signal=11", "signal=a\nduration=0", "Signal=\r\n", "=\n=", "Duration=65536\nSignal=#"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, body string) {
		k, err := parseDTMFRelay([]byte(body))
		if err != nil {
			if !errors.Is(err, ErrBadDTMF) {
				t.Fatalf("%q: %v is not ErrBadDTMF", body, err)
			}
			if len(body) > 3 && strings.Contains(err.Error(), body) {
				t.Fatalf("%q: the error quotes the body: %v", body, err)
			}
			return
		}
		if k.Check() != nil || k.Duration > ingest.MaxKeyDuration {
			t.Fatalf("%q: key %+v refused by Check (%v)", body, k, k.Check())
		}
	})
}
