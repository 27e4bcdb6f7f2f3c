package params

import (
	"slices"
	"strings"
)

// addonSwitch is one add-on a request may enable: on when enabled, name
// as Capabilities.AddonLanguages keys it (the envelope's name), path the
// switch's field in the request.
type addonSwitch struct {
	on         bool
	name, path string
}

// addonSwitches are the add-ons of a pre-recorded request.
func (r *PreRecorded) addonSwitches() []addonSwitch {
	return []addonSwitch{
		{r.NamedEntityRecognition, "named_entity_recognition", "named_entity_recognition"},
		{r.PIIRedaction, "pii_redaction", "pii_redaction"},
		{r.SentimentAnalysis, "sentiment_analysis", "sentiment_analysis"},
		{r.PunctuationEnhanced, "punctuation_enhanced", "punctuation_enhanced"},
		{r.Sentences, "sentences", "sentences"},
		{r.Summarization, "summarization", "summarization"},
		{r.CustomSpelling, "custom_spelling", "custom_spelling"},
		{r.Subtitles, "subtitles", "subtitles"},
		{r.Diarization, "diarization", "diarization"},
		{r.Translation, "translation", "translation"},
		{r.AudioToLLM, "audio_to_llm", "audio_to_llm"},
	}
}

// AnyAddon reports whether the request enables an add-on. Every add-on
// reads the transcript (its words, or diarization its utterances), so a
// result whose transcript is changed after its add-ons ran would
// contradict them.
func (r *PreRecorded) AnyAddon() bool {
	return slices.ContainsFunc(r.addonSwitches(), func(s addonSwitch) bool { return s.on })
}

// addonSwitches are the add-ons of a live request.
func (l *Live) addonSwitches() []addonSwitch {
	rt, pp := l.RealtimeProcessing, l.PostProcessing
	return []addonSwitch{
		{rt.NamedEntityRecognition, "named_entity_recognition", "realtime_processing.named_entity_recognition"},
		{l.PIIRedaction, "pii_redaction", "pii_redaction"},
		{rt.SentimentAnalysis, "sentiment_analysis", "realtime_processing.sentiment_analysis"},
		{rt.CustomSpelling, "custom_spelling", "realtime_processing.custom_spelling"},
		{rt.Translation, "translation", "realtime_processing.translation"},
		{pp.Summarization, "summarization", "post_processing.summarization"},
		{pp.Chapterization, "chapterization", "post_processing.chapterization"},
	}
}

// checkAddonLanguages returns the 422 for an enabled add-on that reads
// none of language_config.languages: the transcript will be in a language
// it cannot read. With no language listed the language is detected, and
// an add-on that cannot read it says so in its envelope.
func (c Capabilities) checkAddonLanguages(lc LanguageConfig, switches []addonSwitch) error {
	if len(lc.Languages) == 0 {
		return nil
	}
	for _, s := range switches {
		reads, listed := c.AddonLanguages[s.name]
		if !s.on || !listed || slices.ContainsFunc(lc.Languages, func(l string) bool { return slices.Contains(reads, l) }) {
			continue
		}
		return cannotServe("%s true: this add-on reads only %s on this appliance, and language_config.languages names %s",
			s.path, strings.Join(reads, ", "), strings.Join(lc.Languages, ", "))
	}
	return nil
}
