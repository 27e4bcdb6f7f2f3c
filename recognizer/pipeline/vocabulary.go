package pipeline

import (
	"fmt"
	"strings"

	"github.com/earshot-dev/earshot/params"
	"github.com/earshot-dev/earshot/recognizer"
)

// vocabularyPrompt is custom_vocabulary as a prompt: the values joined by
// commas.
func vocabularyPrompt(c *params.VocabularyConfig) string {
	if c == nil {
		return ""
	}
	vals := make([]string, 0, len(c.Vocabulary))
	for _, v := range c.Vocabulary {
		vals = append(vals, v.Value)
	}
	return strings.Join(vals, ", ")
}

// DefaultVocabularyIntensity is the intensity of a custom_vocabulary item
// with neither its own intensity nor default_intensity (SPEC gives none):
// for the embedded engine, a listed word is then at least as likely as an
// everyday content word (see recognizer/sphinx, floorLog10).
const DefaultVocabularyIntensity = 0.5

// vocabularyWords is a job's custom_vocabulary as the embedded engine en
// takes it in its stream options (items in another language than lang are
// left out), and the post_session_metadata note saying so, with what the
// engine left out; nil and "" when nothing applies.
func vocabularyWords(en recognizer.Engine, lang string, c *params.VocabularyConfig) ([]recognizer.VocabularyWord, string) {
	if c == nil {
		return nil, ""
	}
	def := DefaultVocabularyIntensity
	if c.DefaultIntensity != nil {
		def = *c.DefaultIntensity
	}
	var words []recognizer.VocabularyWord
	for _, it := range c.Vocabulary {
		if it.Language != "" && lang != "" && it.Language != lang {
			continue
		}
		w := recognizer.VocabularyWord{Value: it.Value, Intensity: def, Pronunciations: it.Pronunciations}
		if it.Intensity != nil {
			w.Intensity = *it.Intensity
		}
		words = append(words, w)
	}
	if len(words) == 0 {
		return nil, ""
	}
	note := fmt.Sprintf("added to engine %s's dictionary and language model (%d items)", en.Name(), len(words))
	if ch, ok := en.(interface {
		CheckVocabulary([]recognizer.VocabularyWord) []error
	}); ok {
		if probs := ch.CheckVocabulary(words); len(probs) > 0 {
			msgs := make([]string, len(probs))
			for i, p := range probs {
				msgs[i] = p.Error()
			}
			note += "; left out: " + strings.Join(msgs, "; ")
		}
	}
	return words, note
}
