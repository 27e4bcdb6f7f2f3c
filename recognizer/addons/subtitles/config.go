package subtitles

import (
	"errors"
	"fmt"
	"slices"
)

// Formats and styles as spelled in SPEC.md and PROTOCOL.md.
const (
	FormatSRT       = "srt"
	FormatVTT       = "vtt"
	StyleDefault    = "default"
	StyleCompliance = "compliance"
)

// Compliance limits (broadcast captioning practice).
const (
	complianceRows  = 2
	complianceChars = 42
	complianceMin   = 1.0 // s
	complianceMax   = 7.0 // s
)

// maxPause is the longest silence a caption may span, in seconds.
const maxPause = 1.5

// Config is subtitles_config of a request.
type Config struct {
	// Formats lists the files to build, each "srt" or "vtt", no
	// duplicates. Default ["srt"].
	Formats []string `yaml:"formats"`
	// MinimumDuration is how long a caption stays at least, in seconds.
	// Default 0.7; 0..MaximumDuration.
	MinimumDuration float64 `yaml:"minimum_duration"`
	// MaximumDuration is how long a caption may last, in seconds. Default
	// 6; 0.5..60.
	MaximumDuration float64 `yaml:"maximum_duration"`
	// MaximumCharactersPerRow bounds a row, in characters (runes).
	// Default 42; 10..200.
	MaximumCharactersPerRow int `yaml:"maximum_characters_per_row"`
	// MaximumRowsPerCaption bounds a caption's rows. Default 2; 1..10.
	MaximumRowsPerCaption int `yaml:"maximum_rows_per_caption"`
	// Style is "default" or "compliance" (see the package comment).
	// Default "default".
	Style string `yaml:"style"`
	// AudioDuration is the length of the audio in seconds, set by the
	// caller for each job: captions are held no later than this. 0 means
	// unknown, and the last word's end is the limit.
	AudioDuration float64 `yaml:"-"`
}

// SetDefaults fills zero fields with their defaults.
func (c *Config) SetDefaults() {
	if len(c.Formats) == 0 {
		c.Formats = []string{FormatSRT}
	}
	if c.MinimumDuration == 0 {
		c.MinimumDuration = 0.7
	}
	if c.MaximumDuration == 0 {
		c.MaximumDuration = 6
	}
	if c.MaximumCharactersPerRow == 0 {
		c.MaximumCharactersPerRow = 42
	}
	if c.MaximumRowsPerCaption == 0 {
		c.MaximumRowsPerCaption = 2
	}
	if c.Style == "" {
		c.Style = StyleDefault
	}
}

// Validate reports every problem at once, each naming its key.
func (c Config) Validate() error {
	var errs []error
	for i, f := range c.Formats {
		if f != FormatSRT && f != FormatVTT {
			errs = append(errs, fmt.Errorf("subtitles: formats: %q is not srt or vtt", f))
		} else if slices.Contains(c.Formats[:i], f) {
			errs = append(errs, fmt.Errorf("subtitles: formats: %q listed twice", f))
		}
	}
	if c.MaximumDuration < 0.5 || c.MaximumDuration > 60 {
		errs = append(errs, fmt.Errorf("subtitles: maximum_duration: %v s not in 0.5..60", c.MaximumDuration))
	}
	if c.MinimumDuration < 0 || c.MinimumDuration > c.MaximumDuration {
		errs = append(errs, fmt.Errorf("subtitles: minimum_duration: %v s not in 0..maximum_duration (%v s)",
			c.MinimumDuration, c.MaximumDuration))
	}
	if c.MaximumCharactersPerRow < 10 || c.MaximumCharactersPerRow > 200 {
		errs = append(errs, fmt.Errorf("subtitles: maximum_characters_per_row: %d not in 10..200", c.MaximumCharactersPerRow))
	}
	if c.MaximumRowsPerCaption < 1 || c.MaximumRowsPerCaption > 10 {
		errs = append(errs, fmt.Errorf("subtitles: maximum_rows_per_caption: %d not in 1..10", c.MaximumRowsPerCaption))
	}
	if c.Style != StyleDefault && c.Style != StyleCompliance {
		errs = append(errs, fmt.Errorf("subtitles: style: %q is not default or compliance", c.Style))
	}
	if c.AudioDuration < 0 {
		errs = append(errs, fmt.Errorf("subtitles: audio duration %v s < 0", c.AudioDuration))
	}
	return errors.Join(errs...)
}

// limits are the effective limits after the style is applied.
type limits struct {
	minDur, maxDur float64
	chars, rows    int
}

func (c Config) limits() limits {
	l := limits{c.MinimumDuration, c.MaximumDuration, c.MaximumCharactersPerRow, c.MaximumRowsPerCaption}
	if c.Style == StyleCompliance {
		l.rows = min(l.rows, complianceRows)
		l.chars = min(l.chars, complianceChars)
		l.minDur = max(l.minDur, complianceMin)
		l.maxDur = min(l.maxDur, complianceMax)
	}
	return l
}
