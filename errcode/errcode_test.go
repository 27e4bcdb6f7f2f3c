package errcode

import (
	"errors"
	"fmt"
	"testing"
)

// TestStatus pins each kind to its status: SPEC.md §7 (400, 401, 403, 404,
// 422), PROTOCOL.md (413, 429, 503, 507, 500) and RFC 9725 for WHIP (406,
// 409).
func TestStatus(t *testing.T) {
	sub := ErrNotFound.Sub("store: not found", "")
	tests := []struct {
		name string
		err  error
		want int
	}{
		{"nil", nil, 200},
		{"validation", fmt.Errorf("decode: %w", &ValidationError{Problems: []string{"x is required"}}), 400},
		{"unauthorized", ErrUnauthorized, 401},
		{"not owner", fmt.Errorf("job x: %w", ErrNotOwner), 401},
		{"invalid id", ErrInvalidID, 403},
		{"not admin", ErrNotAdmin, 403},
		{"scope", &Error{Kind: ErrScope, Msg: "API key lacks scope jobs:write"}, 403},
		{"derived not found", fmt.Errorf("job x: %w", sub), 404},
		{"not acceptable", ErrNotAcceptable, 406},
		{"body timeout", ErrBodyTimeout, 408},
		{"conflict", ErrConflict, 409},
		{"too large", &Error{Kind: ErrTooLarge, Msg: "audio: too long"}, 413},
		{"cannot serve", &Error{Kind: ErrCannotServe, Msg: "model-3"}, 422},
		{"live quota", ErrLiveQuota, 429},
		{"rate limited", ErrRateLimited, 429},
		{"engine failed", ErrEngineFailed, 500},
		{"integrity", ErrIntegrity, 500},
		{"at capacity", ErrAtCapacity, 503},
		{"shutting down", ErrShuttingDown, 503},
		{"derived unavailable", fmt.Errorf("store: keys: %w: %w", ErrUnavailable.Sub("store: backend unavailable", ""), errors.New("dial tcp: refused")), 503},
		{"quota over at capacity", &Error{Kind: ErrQuota, Cause: fmt.Errorf("%w: %w", ErrAtCapacity, ErrQuota)}, 507},
		{"no space", ErrNoSpace, 507},
		{"no kind", errors.New("boom"), 500},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Status(tt.err); got != tt.want {
				t.Errorf("Status(%v) = %d, want %d", tt.err, got, tt.want)
			}
		})
	}
}

// TestMessage: an *Error's Msg is shown when its kind is Shown, whatever
// its status; otherwise the kind's message; never the cause or the text a
// wrap added.
func TestMessage(t *testing.T) {
	cause := errors.New("open /var/lib/earshot/blobs/x: permission denied")
	tests := []struct {
		name string
		err  error
		want string
	}{
		{"shown 4xx", &Error{Kind: ErrBadAudio, Msg: "audio: not a readable audio file", Cause: cause}, "audio: not a readable audio file"},
		{"shown 5xx", &Error{Kind: ErrQuota, Msg: "quota of 10 bytes", Cause: cause}, "quota of 10 bytes"},
		{"shown through a derived kind", &Error{Kind: ErrNotFound.Sub("store: not found", ""), Msg: "session s1 has ended"}, "session s1 has ended"},
		{"hidden 5xx", &Error{Kind: ErrAtCapacity, Msg: "16 live sessions open, capacity 16"}, "service at capacity, try again later"},
		{"bare kind", fmt.Errorf("job x: %w", ErrNotOwner), "no permission to this resource"},
		{"derived message", ErrInternal.Sub("daemon: crashed", "the service stopped"), "the service stopped"},
		{"derived, parent's message", fmt.Errorf("%s: %w", "/secret/path", ErrNoSpace.Sub("store: no space", "")), "insufficient storage on the appliance"},
		{"validation", &ValidationError{Problems: []string{"x"}}, "invalid request"},
		{"no kind", fmt.Errorf("open /secret: %w", cause), "internal error"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Message(tt.err); got != tt.want {
				t.Errorf("Message(%v) = %q, want %q", tt.err, got, tt.want)
			}
		})
	}
}

// TestSub: a derived sentinel is its parent for errors.Is, not the other
// way round, and keeps its own identity.
func TestSub(t *testing.T) {
	a := ErrAtCapacity.Sub("ingest: at capacity", "")
	b := ErrAtCapacity.Sub("recognizer: no decoder", "")
	if !errors.Is(fmt.Errorf("x: %w", a), ErrAtCapacity) {
		t.Error("errors.Is(derived, parent) = false")
	}
	if errors.Is(ErrAtCapacity, a) || errors.Is(a, b) {
		t.Error("a parent or a sibling matches a derived sentinel")
	}
	if !errors.Is(ErrLiveQuota, ErrAtCapacity) {
		t.Error("ErrLiveQuota does not match ErrAtCapacity (the SIP door's 503)")
	}
	var ve error = &ValidationError{Problems: []string{"sdp: x"}, Cause: a}
	if !errors.Is(ve, a) {
		t.Error("ValidationError hides its Cause")
	}
}
