package daemon

import (
	"errors"
	"fmt"
	"testing"

	"github.com/earshot-dev/earshot/daemon/live"
	"github.com/earshot-dev/earshot/errcode"
	"github.com/earshot-dev/earshot/ingest"
	"github.com/earshot-dev/earshot/params"
	"github.com/earshot-dev/earshot/recognizer"
	"github.com/earshot-dev/earshot/store"
)

// TestStatus pins each contract error to its status: SPEC.md §7 (400, 401,
// 403, 404, 422) and PROTOCOL.md (413, 503, 507, 500).
func TestStatus(t *testing.T) {
	tests := []struct {
		name string
		err  error
		want int
	}{
		{"nil", nil, 200},
		{"validation", &errcode.ValidationError{Problems: []string{"audio_url is required"}}, 400},
		{"wrapped validation", fmt.Errorf("decode: %w", &params.ValidationError{}), 400},
		{"unknown key", store.ErrUnauthorized, 401},
		{"other account", fmt.Errorf("job x: %w", errcode.ErrNotOwner), 401},
		{"bad token", live.ErrTokenInvalid, 401},
		{"invalid id on DELETE /v2/transcription", errcode.ErrInvalidID, 403},
		{"not found", fmt.Errorf("job x: %w", store.ErrNotFound), 404},
		{"ended session", live.ErrSessionEnded, 404},
		{"too large", newError(errcode.ErrTooLarge, nil, "audio: upload exceeds 10 bytes"), 413},
		{"cannot serve", fmt.Errorf("%w: model-3 is not available for live", params.ErrCannotServe), 422},
		{"bad audio", newError(errcode.ErrBadAudio, errors.New("media: corrupt"), "audio: unreadable"), 422},
		{"fetch", newError(errcode.ErrFetch, errors.New("status 404"), "audio_url: fetch failed"), 422},
		{"capacity", newError(ingest.ErrAtCapacity, nil, "16 live sessions"), 503},
		{"no decoder", fmt.Errorf("stream: %w", recognizer.ErrAtCapacity), 503},
		{"disk full", fmt.Errorf("write: %w", store.ErrNoSpace), 507},
		{"account quota", newError(errcode.ErrQuota, nil, reasonQuota, 1000), 507},
		{"account quota, live", newError(errcode.ErrQuota, fmt.Errorf("%w: %w", ingest.ErrAtCapacity, errcode.ErrQuota), reasonQuota, 1000), 507},
		{"anything else", errors.New("boom"), 500},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := errcode.Status(tt.err); got != tt.want {
				t.Errorf("Status(%v) = %d, want %d", tt.err, got, tt.want)
			}
		})
	}
}

// TestMessage: client messages name the field, never carry a cause (paths,
// addresses, remote answers) and keep lower causes reachable for errors.Is.
func TestMessage(t *testing.T) {
	cause := errors.New("media: ffprobe file:/var/lib/earshot/blobs/job-1: truncated data chunk")
	err := newError(errcode.ErrBadAudio, cause, reasonNotAudio)
	if got := errcode.Message(err); got != reasonNotAudio {
		t.Errorf("Message = %q, want the reason without its cause", got)
	}
	if !errors.Is(err, cause) || !errors.Is(err, errcode.ErrBadAudio) {
		t.Error("errors.Is lost the kind or the cause")
	}
	if got := errcode.Message(newError(params.ErrCannotServe, nil, "model-3 is not available for live")); got != "model-3 is not available for live" {
		t.Errorf("422 message = %q", got)
	}
	// A sentinel wrapped with fmt.Errorf shows its kind's message, never
	// the text around it.
	if got := errcode.Message(fmt.Errorf("%w: /var/lib/earshot/x", params.ErrCannotServe)); got != "request cannot be served" {
		t.Errorf("wrapped 422 message = %q", got)
	}
	if got := errcode.Message(errPoisonJob); got != "the service stopped while processing this job; it is not retried" {
		t.Errorf("poison job message = %q", got)
	}
	if got := errcode.Message(newError(errcode.ErrQuota, errors.New("account acme: 900 bytes"), reasonQuota, 1000)); got != fmt.Sprintf(reasonQuota, 1000) {
		t.Errorf("quota message = %q", got)
	}
	if got := errcode.Message(fmt.Errorf("write: %w", store.ErrNoSpace)); got != "insufficient storage on the appliance" {
		t.Errorf("disk full message = %q", got)
	}
	if got := errcode.Message(fmt.Errorf("open /secret/path: %w", errors.New("permission denied"))); got != "internal error" {
		t.Errorf("500 message leaks the cause: %q", got)
	}
}
