package params

import (
	"slices"
	"strings"
)

// LanguageConfig is language_config (SPEC 2.6). Languages is never nil: the
// contract's default is [].
type LanguageConfig struct {
	// Languages lists language codes: one means transcribe in it, several
	// or none mean detect among them (or among all).
	Languages []string `json:"languages"`
	// CodeSwitching detects the language per utterance; ignored when
	// exactly one language is set.
	CodeSwitching bool `json:"code_switching"`
}

// transcriptionLanguages is SPEC 2.6's list of transcription language codes.
var transcriptionLanguages = strings.Fields(`af am ar as az ba be bg bn bo br bs ca cs cy da de el en es et eu fa fi
	fo fr gl gu ha haw he hi hr ht hu hy id is it ja jw ka kk km kn ko la lb ln lo lt lv mg mi mk ml mn mr ms mt my ne
	nl nn no oc pa pl ps pt ro ru sa sd si sk sl sn so sq sr su sv sw ta te tg th tk tl tr tt uk ur uz vi yi yo zh`)

// model3Languages are the languages model-3 serves (SPEC 1).
var model3Languages = []string{"en", "fr", "de", "es", "it"}

// IsLanguage reports whether code is a transcription language code of SPEC 2.6.
func IsLanguage(code string) bool {
	return slices.Contains(transcriptionLanguages, code)
}

// IsTranslationLanguage reports whether code is a translation language code
// of SPEC 2.6: the transcription codes plus "wo".
func IsTranslationLanguage(code string) bool {
	return code == "wo" || IsLanguage(code)
}

// languageCode checks one language code. Codes are matched without regard to
// case and kept lower case ("EN" is "en"); anything else outside the list is
// a 400.
func languageCode(p *problems, path, s string, translation bool) (string, bool) {
	c := strings.ToLower(strings.TrimSpace(s))
	if IsLanguage(c) || translation && c == "wo" {
		return c, true
	}
	p.addf(path, "must be a known language code, not %q", truncate(s, 16))
	return "", false
}

func decodeLanguageConfig(p *problems, parent *object) LanguageConfig {
	lc := LanguageConfig{Languages: []string{}}
	o, ok := parent.object("language_config")
	if !ok {
		return lc
	}
	defer o.done()
	if langs, _, ok := o.strings("languages", MaxLanguages, func(path, s string) (string, bool) {
		return languageCode(p, path, s, false)
	}); ok {
		lc.Languages = dedupe(langs)
	}
	lc.CodeSwitching = o.boolean("code_switching", false)
	return lc
}

// Language returns the single language to transcribe in, "" to detect.
func (lc LanguageConfig) Language() string {
	if len(lc.Languages) == 1 {
		return lc.Languages[0]
	}
	return ""
}
