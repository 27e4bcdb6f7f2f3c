package params

// Translation models (SPEC 2.7).
const (
	TranslationBase     = "base"
	TranslationEnhanced = "enhanced"
)

// TranslationConfig is translation_config (SPEC 2.7), defaults filled in.
type TranslationConfig struct {
	// TargetLanguages is required: 1 to MaxTargetLanguages translation
	// language codes, repeats dropped.
	TargetLanguages []string `json:"target_languages"`
	// Model is base (default) or enhanced.
	Model                   string `json:"model"`
	MatchOriginalUtterances bool   `json:"match_original_utterances"` // default true
	Lipsync                 bool   `json:"lipsync"`                   // default true
	ContextAdaptation       bool   `json:"context_adaptation"`        // default true
	// Context is free text about the audio, at most MaxPromptLength bytes.
	Context  string `json:"context,omitempty"`
	Informal bool   `json:"informal"` // default false
}

// AdaptationContext is the context the translation adapts to: Context when
// context_adaptation is on (the default), else "" (context_adaptation false
// translates each utterance without the given context).
func (c *TranslationConfig) AdaptationContext() string {
	if c == nil || !c.ContextAdaptation {
		return ""
	}
	return c.Context
}

func decodeTranslationConfig(parent *object) *TranslationConfig {
	o, ok := parent.object("translation_config")
	if !ok {
		return nil
	}
	defer o.done()
	c := &TranslationConfig{Model: TranslationBase, MatchOriginalUtterances: true, Lipsync: true, ContextAdaptation: true}
	if !o.has("target_languages") {
		o.p.addf(child(o.path, "target_languages"), "is required")
	} else if langs, path, ok := o.strings("target_languages", MaxTargetLanguages, func(path, s string) (string, bool) {
		return languageCode(o.p, path, s, true)
	}); ok {
		if len(langs) == 0 {
			o.p.addf(path, "must have at least 1 item")
		}
		c.TargetLanguages = dedupe(langs)
	}
	if s, path, ok := o.str("model"); ok && oneOf(o.p, path, s, TranslationBase, TranslationEnhanced) {
		c.Model = s
	}
	c.MatchOriginalUtterances = o.boolean("match_original_utterances", true)
	c.Lipsync = o.boolean("lipsync", true)
	c.ContextAdaptation = o.boolean("context_adaptation", true)
	if s, path, ok := o.str("context"); ok {
		if len(s) > MaxPromptLength {
			o.p.addf(path, "must be at most %d bytes", MaxPromptLength)
		} else {
			c.Context = s
		}
	}
	c.Informal = o.boolean("informal", false)
	return c
}
