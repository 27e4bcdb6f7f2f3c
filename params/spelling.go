package params

import (
	"encoding/json"
	"sort"
)

// SpellingConfig is custom_spelling_config (SPEC 2.7): each key is the
// spelling to write, each value the spellings (or sounds) to replace by it.
type SpellingConfig struct {
	// SpellingDictionary is required; at most MaxSpellingEntries words of
	// at most MaxSpellingVariants strings each.
	SpellingDictionary map[string][]string `json:"spelling_dictionary"`
}

func decodeSpellingConfig(parent *object) *SpellingConfig {
	o, ok := parent.object("custom_spelling_config")
	if !ok {
		return nil
	}
	defer o.done()
	c := &SpellingConfig{SpellingDictionary: map[string][]string{}}
	raw, path, ok := o.take("spelling_dictionary")
	if !ok {
		o.p.addf(path, "is required")
		return c
	}
	if kindOf(raw) != kindObject {
		o.p.addf(path, "must be an object")
		return c
	}
	var dict map[string]json.RawMessage
	if err := json.Unmarshal(raw, &dict); err != nil {
		o.p.addf(path, "must be an object")
		return c
	}
	if len(dict) > MaxSpellingEntries {
		o.p.addf(path, "must have at most %d keys", MaxSpellingEntries)
		return c
	}
	words := make([]string, 0, len(dict))
	for w := range dict {
		words = append(words, w)
	}
	sort.Strings(words) // problems in a stable order
	for _, w := range words {
		wp := child(path, w)
		if !word(o.p, wp, w, MaxWordLength) {
			continue
		}
		elems, ok := asArray(o.p, wp, dict[w], MaxSpellingVariants)
		if !ok {
			continue
		}
		variants := make([]string, 0, len(elems))
		for i, e := range elems {
			s, ok := asString(o.p, index(wp, i), e)
			if ok && word(o.p, index(wp, i), s, MaxWordLength) {
				variants = append(variants, s)
			}
		}
		c.SpellingDictionary[w] = variants
	}
	return c
}
