package fetch

import (
	"errors"
	"fmt"
	"testing"

	"github.com/earshot-dev/earshot/errcode"
	"github.com/earshot-dev/earshot/ingest/media"
	"github.com/earshot-dev/earshot/store"
)

// TestClassify: each class of failed audio_url gets one stable message,
// whatever the address, port or status behind it.
func TestClassify(t *testing.T) {
	f := New(Config{MaxBytes: 1000}, nil, nil)
	tests := []struct {
		name   string
		cause  error
		status int
		want   string
	}{
		{"refused port", fmt.Errorf("%w http://10.0.0.5:22/: dial tcp 10.0.0.5:22: connect: connection refused", media.ErrFetch), 422, reasonUnreachable},
		{"dns", fmt.Errorf("%w http://x.invalid/: lookup x.invalid on 127.0.0.53:53: no such host", media.ErrFetch), 422, reasonUnreachable},
		{"denied", fmt.Errorf("%w http://169.254.169.254/: %w", media.ErrFetch, media.ErrDenied), 422, reasonUnreachable},
		{"status 401", fmt.Errorf("%w http://10.0.0.5/: status 401: %w", media.ErrFetch, media.ErrStatus), 422, reasonRefused},
		{"status 500", fmt.Errorf("%w http://10.0.0.5/: status 500: %w", media.ErrFetch, media.ErrStatus), 422, reasonRefused},
		{"declared too large", fmt.Errorf("%w: declares 5000 bytes", media.ErrTooLarge), 413, "audio_url: larger than the limit of 1000 bytes"},
		{"delivered too large", fmt.Errorf("write blob: %w", store.ErrTooLarge), 413, "audio_url: larger than the limit of 1000 bytes"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := f.classify(tt.cause)
			if got := errcode.Status(err); got != tt.status {
				t.Errorf("Status = %d, want %d", got, tt.status)
			}
			if got := errcode.Message(err); got != tt.want {
				t.Errorf("Message = %q, want %q", got, tt.want)
			}
			if !errors.Is(err, tt.cause) {
				t.Error("the cause is lost for the log")
			}
		})
	}
}
