package params

// Subtitle formats (SPEC 2.4) and styles (PROTOCOL.md).
const (
	SubtitlesSRT        = "srt"
	SubtitlesVTT        = "vtt"
	StyleDefault        = "default"
	StyleCompliance     = "compliance"
	maxCaptionSeconds   = 30
	maxCharactersPerRow = 200
	maxRowsPerCaption   = 5
	maxFormats          = 10 // repeats are dropped; more is a mistake
)

// SubtitlesConfig is subtitles_config, defaults filled in. Rules where SPEC is
// silent: minimum_duration and maximum_duration are seconds in (0, 30] with
// minimum ≤ maximum; maximum_characters_per_row is 1 to 200;
// maximum_rows_per_caption is 1 to 5.
type SubtitlesConfig struct {
	// Formats lists srt and/or vtt, repeats dropped; default (also for an
	// empty list) ["srt"].
	Formats                 []string `json:"formats"`
	MinimumDuration         *float64 `json:"minimum_duration,omitempty"`
	MaximumDuration         *float64 `json:"maximum_duration,omitempty"`
	MaximumCharactersPerRow *int     `json:"maximum_characters_per_row,omitempty"`
	MaximumRowsPerCaption   *int     `json:"maximum_rows_per_caption,omitempty"`
	// Style is default or compliance (PROTOCOL.md); default "default".
	Style string `json:"style"`
}

func defaultSubtitlesConfig() *SubtitlesConfig {
	return &SubtitlesConfig{Formats: []string{SubtitlesSRT}, Style: StyleDefault}
}

func decodeSubtitlesConfig(parent *object) *SubtitlesConfig {
	o, ok := parent.object("subtitles_config")
	if !ok {
		return nil
	}
	defer o.done()
	c := defaultSubtitlesConfig()
	if fs, _, ok := o.strings("formats", maxFormats, func(path, s string) (string, bool) {
		return s, oneOf(o.p, path, s, SubtitlesSRT, SubtitlesVTT)
	}); ok && len(fs) > 0 {
		c.Formats = dedupe(fs)
	}
	duration := func(name string) *float64 {
		f, path, ok := o.number(name)
		if !ok {
			return nil
		}
		if f <= 0 || f > maxCaptionSeconds {
			o.p.addf(path, "must be more than 0 and at most %d", maxCaptionSeconds)
			return nil
		}
		return &f
	}
	c.MinimumDuration = duration("minimum_duration")
	c.MaximumDuration = duration("maximum_duration")
	if c.MinimumDuration != nil && c.MaximumDuration != nil && *c.MinimumDuration > *c.MaximumDuration {
		o.p.addf(child(o.path, "minimum_duration"), "must not be more than maximum_duration")
	}
	count := func(name string, hi int) *int {
		n, path, ok := o.integer(name)
		if !ok || !inRange(o.p, path, float64(n), 1, float64(hi)) {
			return nil
		}
		return &n
	}
	c.MaximumCharactersPerRow = count("maximum_characters_per_row", maxCharactersPerRow)
	c.MaximumRowsPerCaption = count("maximum_rows_per_caption", maxRowsPerCaption)
	if s, path, ok := o.str("style"); ok && oneOf(o.p, path, s, StyleDefault, StyleCompliance) {
		c.Style = s
	}
	return c
}
