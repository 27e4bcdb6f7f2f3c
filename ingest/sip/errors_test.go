package sip

import (
	"fmt"
	"testing"

	"github.com/earshot-dev/earshot/errcode"
	"github.com/earshot-dev/earshot/ingest"
)

// TestReply pins the door's refusals a proxy acts on: capacity and an
// account's live limit are 503 with Retry-After (failed over), however
// OpenLive wrapped them; an error of no kind is 500.
func TestReply(t *testing.T) {
	cases := []struct {
		name  string
		err   error
		code  int
		retry bool
	}{
		{"node at capacity", fmt.Errorf("open live session: %w", &errcode.Error{Kind: ingest.ErrAtCapacity, Msg: "capacity 1"}), 503, true},
		{"account live limit", fmt.Errorf("open live session: %w", &errcode.Error{Kind: errcode.ErrLiveQuota, Msg: "limit 1"}), 503, true},
		{"route busy", ErrBusy, 486, false},
		{"no codec", ErrNoCodec, 488, false},
		{"sips over TCP", ErrInsecureSIPS, 416, false},
		{"unknown", fmt.Errorf("disk on fire"), 500, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if code, _ := reply(c.err); code != c.code {
				t.Errorf("reply: %d, want %d", code, c.code)
			}
			h := replyHeaders(c.err)
			if got := len(h) == 1 && h[0].Name() == "Retry-After" && h[0].Value() == retryAfter; got != c.retry {
				t.Errorf("Retry-After: %v, want %v", h, c.retry)
			}
		})
	}
}
