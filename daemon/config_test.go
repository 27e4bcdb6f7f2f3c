package daemon

import (
	"testing"
	"time"

	"github.com/earshot-dev/earshot/config"
)

// TestMaxDecodedBytes: limits.max_decoded_bytes defaults to two channels
// (a call) of limits.max_audio_duration at 16 kHz 16-bit, whatever that
// duration is, reaches the pipeline's media bounds, and may not be set
// below one channel of it.
func TestMaxDecodedBytes(t *testing.T) {
	tests := []struct {
		name     string
		duration time.Duration
		set      int64
		want     int64
		problem  bool
	}{
		{"default", 0, 0, 921_600_000, false},
		{"default follows the duration", 10 * time.Hour, 0, 2_304_000_000, false},
		{"set", 0, 1 << 30, 1 << 30, false},
		{"one channel of the duration", time.Hour, 115_200_000, 115_200_000, false},
		{"less than one channel", time.Hour, 115_199_999, 115_199_999, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var c Config
			c.Limits.MaxAudioDuration, c.Limits.MaxDecodedBytes = tt.duration, tt.set
			c.SetDefaults()
			if c.Limits.MaxDecodedBytes != tt.want || c.Pipeline().Media.MaxDecodedBytes != tt.want {
				t.Errorf("max_decoded_bytes %d, pipeline's %d, want %d", c.Limits.MaxDecodedBytes, c.Pipeline().Media.MaxDecodedBytes, tt.want)
			}
			named := false
			for _, p := range config.Problems(c.Validate()) {
				named = named || p.Key == "limits.max_decoded_bytes"
			}
			if named != tt.problem {
				t.Errorf("Validate names limits.max_decoded_bytes: %v, want %v (%v)", named, tt.problem, c.Validate())
			}
		})
	}
}
