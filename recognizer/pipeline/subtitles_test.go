package pipeline

import (
	"testing"

	"github.com/earshot-dev/earshot/params"
)

// TestSubtitlesConfigRunsWhatWasAsked: every subtitles_config params accepts
// reaches the subtitle writer as asked (no clamp) and validates there, also
// a duration given without the other.
func TestSubtitlesConfigRunsWhatWasAsked(t *testing.T) {
	f := func(v float64) *float64 { return &v }
	n := func(v int) *int { return &v }
	tests := []struct {
		name     string
		c        params.SubtitlesConfig
		min, max float64
		chars    int
	}{
		{"short maximum alone", params.SubtitlesConfig{MaximumDuration: f(0.6)}, 0.6, 0.6, 0},
		{"long minimum alone", params.SubtitlesConfig{MinimumDuration: f(8)}, 8, 8, 0},
		{"both", params.SubtitlesConfig{MinimumDuration: f(1), MaximumDuration: f(2)}, 1, 2, 0},
		{"narrowest row", params.SubtitlesConfig{MaximumCharactersPerRow: n(params.MinCharactersPerRow)}, 0, 0, params.MinCharactersPerRow},
		{"shortest caption", params.SubtitlesConfig{MaximumDuration: f(params.MinCaptionSeconds)}, params.MinCaptionSeconds, params.MinCaptionSeconds, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := subtitlesConfig(&tc.c, 10)
			if s.MinimumDuration != tc.min || s.MaximumDuration != tc.max || s.MaximumCharactersPerRow != tc.chars {
				t.Errorf("got min %v max %v chars %d, want %v %v %d", s.MinimumDuration, s.MaximumDuration, s.MaximumCharactersPerRow, tc.min, tc.max, tc.chars)
			}
			s.SetDefaults()
			if err := s.Validate(); err != nil {
				t.Errorf("asked %+v, writer refuses: %v", tc.c, err)
			}
		})
	}
}
