package params

import (
	"encoding/json"
	"strings"
	"testing"
	"time"
)

// TestEndpointing: the body's two fields become durations, with their
// defaults and bounds here, and are written back as the same numbers.
func TestEndpointing(t *testing.T) {
	for _, tc := range []struct {
		body          string
		silence, max  time.Duration
		wantStoredSub string
	}{
		{`{}`, 50 * time.Millisecond, 5 * time.Second, `"endpointing":0.05,"maximum_duration_without_endpointing":5,`},
		{`{"endpointing":0.3,"maximum_duration_without_endpointing":30}`, 300 * time.Millisecond, 30 * time.Second, `"endpointing":0.3,"maximum_duration_without_endpointing":30,`},
		{`{"endpointing":0.01,"maximum_duration_without_endpointing":60}`, 10 * time.Millisecond, time.Minute, `"endpointing":0.01,"maximum_duration_without_endpointing":60,`},
		{`{"endpointing":0.123456789}`, 123456789 * time.Nanosecond, 5 * time.Second, `"endpointing":0.123456789,`},
	} {
		l, err := DecodeLive([]byte(tc.body), english)
		if err != nil {
			t.Fatalf("%s: %v", tc.body, err)
		}
		if l.Endpointing.Silence.D() != tc.silence || l.Endpointing.MaxUtterance.D() != tc.max {
			t.Errorf("%s: %+v, want %v and %v", tc.body, l.Endpointing, tc.silence, tc.max)
		}
		if err := l.Endpointing.Validate(); err != nil {
			t.Errorf("%s: decoded value fails Validate: %v", tc.body, err)
		}
		b, _ := json.Marshal(l)
		if !strings.Contains(string(b), tc.wantStoredSub) {
			t.Errorf("%s: stored %s, want %s", tc.body, b, tc.wantStoredSub)
		}
		back, err := StoredLive(b)
		if err != nil || back.Endpointing != l.Endpointing {
			t.Errorf("%s: stored read back %+v (%v), want %+v", tc.body, back.Endpointing, err, l.Endpointing)
		}
	}
	for _, e := range []Endpointing{{}, {Silence: DefaultSilence}, {Silence: MaxSilence + 1, MaxUtterance: DefaultMaxUtterance}, {Silence: DefaultSilence, MaxUtterance: MaxMaxUtterance + 1}} {
		if e.Validate() == nil {
			t.Errorf("%+v: Validate passed", e)
		}
	}
}
