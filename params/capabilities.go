package params

import (
	"slices"
	"strings"
)

// Models (SPEC 1).
const (
	// Model1 is the generalist model, the default, pre-recorded and live.
	Model1 = "model-1"
	// Model3 is pre-recorded only, with exactly one of en, fr, de, es, it.
	Model3 = "model-3"
)

// Capabilities describes what this appliance can serve; requests beyond it
// are well-formed but answered 422.
type Capabilities struct {
	// Languages lists the language codes installed engines serve, e.g.
	// ["en"]. nil means any language is served (an engine that serves
	// them all, or a caller that does not check).
	Languages []string
	// AddonLanguages maps an add-on, by its envelope's name
	// ("named_entity_recognition", "summarization"), to the language codes
	// it reads; an add-on not in it reads any language. A request enabling
	// an add-on that reads none of its language_config.languages is
	// refused (addons.go).
	AddonLanguages map[string][]string
	// LocalFile reports whether a service-hosted audio_url path
	// (/v2/files/{id}) names an existing file the caller may read; nil
	// accepts any id.
	LocalFile func(id string) bool
}

// serves reports whether an installed engine serves lang.
func (c Capabilities) serves(lang string) bool {
	if c.Languages == nil {
		return true
	}
	return slices.Contains(c.Languages, lang)
}

// checkLanguages returns the 422 for languages no installed engine serves, or
// for model-3 without exactly one of its languages.
func (c Capabilities) checkLanguages(model string, lc LanguageConfig) error {
	if model == Model3 {
		if len(lc.Languages) != 1 || !slices.Contains(model3Languages, lc.Languages[0]) {
			return cannotServe("model-3 needs language_config.languages to hold exactly one of %s",
				strings.Join(model3Languages, ", "))
		}
	}
	var missing []string
	for _, l := range lc.Languages {
		if !c.serves(l) {
			missing = append(missing, l)
		}
	}
	if len(missing) == 0 {
		return nil
	}
	installed := "none"
	if len(c.Languages) > 0 {
		installed = strings.Join(c.Languages, ", ")
	}
	verb := "is"
	if len(missing) > 1 {
		verb = "are"
	}
	return cannotServe("language_config.languages %s %s not served by this appliance (installed: %s)",
		strings.Join(missing, ", "), verb, installed)
}
