package api

import (
	"fmt"
	"testing"

	"github.com/earshot-dev/earshot/errcode"
	"github.com/earshot-dev/earshot/store"
)

// TestStatus: this door's errors map to 403 and 429 even when wrapped, and
// the job service's keep their daemon.Status mapping.
func TestStatus(t *testing.T) {
	tests := []struct {
		name string
		err  error
		want int
		msg  string
	}{
		{"not admin", fmt.Errorf("key k1: %w", errcode.ErrNotAdmin), 403, "admin key required"},
		{"rate limited", fmt.Errorf("key k1: %w", errcode.ErrRateLimited), 429, "too many requests for this API key, retry later"},
		{"body timeout", fmt.Errorf("upload body: %w: %w", errcode.ErrBodyTimeout, fmt.Errorf("i/o timeout")), 408, "request body not received in time"},
		{"unauthorized", fmt.Errorf("x: %w", store.ErrUnauthorized), 401, "missing or invalid API key (x-service-key)"},
		{"invalid id", errcode.ErrInvalidID, 403, "invalid id"},
		{"not found", store.ErrNotFound, 404, "not found"},
		{"other", fmt.Errorf("boom"), 500, "internal error"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got, msg := status(tt.err); got != tt.want || msg != tt.msg {
				t.Errorf("status(%v) = %d %q, want %d %q", tt.err, got, msg, tt.want, tt.msg)
			}
		})
	}
}
