package params

// Bounds of what this appliance builds, below which a well-formed value is
// refused (422) rather than run as something else.
const (
	// MinCharactersPerRow is the narrowest subtitle row the subtitle
	// writer lays out (a row must hold a word and its punctuation).
	MinCharactersPerRow = 10
	// MinCaptionSeconds is the shortest maximum_duration of a caption the
	// subtitle writer builds.
	MinCaptionSeconds = 0.5
)

// refusePreRecorded returns the 422 for a pre-recorded request that is well
// formed but asks for something this appliance does not do (README:
// "Fields this appliance refuses"): each refusal names the field and why,
// so that no field is accepted and then run as something else.
func refusePreRecorded(r *PreRecorded) error {
	if c := r.SubtitlesConfig; c != nil {
		if n := c.MaximumCharactersPerRow; n != nil && *n < MinCharactersPerRow {
			return cannotServe("subtitles_config.maximum_characters_per_row %d is below %d, the narrowest row this appliance lays out",
				*n, MinCharactersPerRow)
		}
		if d := c.MaximumDuration; d != nil && *d < MinCaptionSeconds {
			return cannotServe("subtitles_config.maximum_duration %v is below %v s, the shortest caption this appliance builds",
				*d, MinCaptionSeconds)
		}
	}
	return refuseTranslation("translation_config", r.TranslationConfig)
}

// refuseTranslation is the 422 for a translation_config (at path) this
// appliance cannot serve: a model other than base, or lipsync false.
func refuseTranslation(path string, c *TranslationConfig) error {
	if c == nil {
		return nil
	}
	if c.Model != TranslationBase {
		return cannotServe("%s.model %q: this appliance translates with one model (its configured backend), served as %q",
			path, c.Model, TranslationBase)
	}
	if !c.Lipsync {
		return cannotServe("%s.lipsync false: translated utterances always keep the original utterances' timing on this appliance",
			path)
	}
	return nil
}
