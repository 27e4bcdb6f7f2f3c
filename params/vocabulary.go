package params

import "encoding/json"

// VocabularyConfig is custom_vocabulary_config (SPEC 2.7).
type VocabularyConfig struct {
	// Vocabulary is required, 1 to MaxVocabularyItems items.
	Vocabulary []VocabularyItem `json:"vocabulary"`
	// DefaultIntensity, 0 to 1, applies to items without their own.
	DefaultIntensity *float64 `json:"default_intensity,omitempty"`
}

// VocabularyItem is one vocabulary entry. A string item decodes as {Value}.
type VocabularyItem struct {
	Value          string   `json:"value"`
	Intensity      *float64 `json:"intensity,omitempty"`
	Pronunciations []string `json:"pronunciations,omitempty"`
	Language       string   `json:"language,omitempty"`
}

// decodeVocabulary reads vocabulary items at path (the array form of
// custom_vocabulary, or custom_vocabulary_config.vocabulary). Rule where
// SPEC is silent: an empty vocabulary is a 400 (it could only be a mistake).
func decodeVocabulary(p *problems, path string, raw json.RawMessage) ([]VocabularyItem, bool) {
	elems, ok := asArray(p, path, raw, MaxVocabularyItems)
	if !ok {
		return nil, false
	}
	if len(elems) == 0 {
		p.addf(path, "must have at least 1 item")
		return nil, false
	}
	items := make([]VocabularyItem, 0, len(elems))
	for i, e := range elems {
		ep := index(path, i)
		switch kindOf(e) {
		case kindString:
			s, _ := asString(p, ep, e)
			if !word(p, ep, s, MaxWordLength) {
				ok = false
				continue
			}
			items = append(items, VocabularyItem{Value: s})
		case kindObject:
			it, good := decodeVocabularyItem(p, ep, e)
			ok = ok && good
			items = append(items, it)
		default:
			p.addf(ep, "must be a string or an object")
			ok = false
		}
	}
	return items, ok
}

func decodeVocabularyItem(p *problems, path string, raw json.RawMessage) (VocabularyItem, bool) {
	var it VocabularyItem
	o, ok := asObject(p, path, path, raw)
	if !ok {
		return it, false
	}
	defer o.done()
	before := len(p.list) + p.dropped
	if !o.has("value") {
		p.addf(child(path, "value"), "is required")
	} else if s, vp, ok := o.str("value"); ok && word(p, vp, s, MaxWordLength) {
		it.Value = s
	}
	if f, ip, ok := o.number("intensity"); ok && inRange(p, ip, f, 0, 1) {
		it.Intensity = &f
	}
	if prons, _, ok := o.strings("pronunciations", MaxPronunciations, func(pp, s string) (string, bool) {
		return s, word(p, pp, s, MaxWordLength)
	}); ok && len(prons) > 0 {
		it.Pronunciations = prons
	}
	if s, lp, ok := o.str("language"); ok {
		it.Language, _ = languageCode(p, lp, s, false)
	}
	return it, len(p.list)+p.dropped == before
}

// decodeVocabularyConfig reads custom_vocabulary_config from parent.
func decodeVocabularyConfig(parent *object) *VocabularyConfig {
	o, ok := parent.object("custom_vocabulary_config")
	if !ok {
		return nil
	}
	defer o.done()
	c := &VocabularyConfig{}
	if raw, path, ok := o.take("vocabulary"); !ok {
		o.p.addf(path, "is required")
	} else {
		c.Vocabulary, _ = decodeVocabulary(o.p, path, raw)
	}
	if f, path, ok := o.number("default_intensity"); ok && inRange(o.p, path, f, 0, 1) {
		c.DefaultIntensity = &f
	}
	return c
}
