package pipeline

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/earshot-dev/earshot/params"
	"github.com/earshot-dev/earshot/recognizer"
	"github.com/earshot-dev/earshot/recognizer/addons/ner"
	"github.com/earshot-dev/earshot/recognizer/addons/pii"
	"github.com/earshot-dev/earshot/recognizer/addons/punctuation"
	"github.com/earshot-dev/earshot/recognizer/addons/sentences"
	"github.com/earshot-dev/earshot/recognizer/addons/sentiment"
	"github.com/earshot-dev/earshot/recognizer/addons/summarize"
)

// An add-on reads only the languages its rules are written for. The
// built-ins that read words (entities, redaction, sentiment, punctuation,
// sentences, the extractive summary and chapters) declare theirs in their
// packages (Languages: English); those that read audio or a user's own
// words (diarization, custom_spelling, subtitles) and those a language
// model or the transcribing engine serves (translation, audio_to_llm,
// summarization with addons.llm) read any language the engines transcribe.
// On a transcript in another language an add-on does not run: its
// envelope fails with 422 UnsupportedLanguage naming the language, and a
// request whose language_config.languages lists only such languages is
// refused at creation (params.Capabilities.AddonLanguages).

// builtinReads is Addons.Reads of the built-ins.
func builtinReads() map[string][]string {
	return map[string][]string{
		"named_entity_recognition": ner.Languages(),
		"pii_redaction":            pii.Languages(),
		"sentiment_analysis":       sentiment.Languages(),
		"punctuation_enhanced":     punctuation.Languages(),
		"sentences":                sentences.Languages(),
		"summarization":            summarize.Languages(),
		"chapterization":           summarize.Languages(),
	}
}

// languageError is the failure of an add-on asked to read a transcript in
// languages it does not read; its text is the client's.
type languageError struct {
	addon string
	reads []string // what the add-on reads
	heard []string // the transcript's languages it does not read
}

func (e *languageError) Error() string {
	verb := "is"
	if len(e.heard) > 1 {
		verb = "are"
	}
	return fmt.Sprintf("%s reads only %s on this appliance; the transcript's language %s %s",
		e.addon, strings.Join(e.reads, ", "), verb, strings.Join(e.heard, ", "))
}

// transcriptLanguages lists the languages of utts in order of first
// appearance: each utterance's own, lang for one without; lang alone when
// there are no utterances. Unknown ("") languages are left out.
func transcriptLanguages(utts []recognizer.Utterance, lang string) []string {
	var out []string
	add := func(l string) {
		if l != "" && !slices.Contains(out, l) {
			out = append(out, l)
		}
	}
	for _, u := range utts {
		if u.Language != "" {
			add(u.Language)
		} else {
			add(lang)
		}
	}
	if len(utts) == 0 {
		add(lang)
	}
	return out
}

// readable returns nil when addon reads every one of langs (or declares no
// languages: it reads any), else a *languageError naming those it does
// not read.
func (a *Addons) readable(addon string, langs []string) error {
	reads, ok := a.Reads[addon]
	if !ok {
		return nil
	}
	var heard []string
	for _, l := range langs {
		if !slices.Contains(reads, l) {
			heard = append(heard, l)
		}
	}
	if len(heard) == 0 {
		return nil
	}
	return &languageError{addon: addon, reads: reads, heard: heard}
}

// Capabilities is what this pipeline serves, for package params to refuse
// the rest at creation (422): the languages of its engines and those its
// add-ons read.
func (t *Transcriber) Capabilities() params.Capabilities {
	return params.Capabilities{
		Languages:      t.Engines.Languages(),
		AddonLanguages: maps.Clone(t.Addons.orBuiltin().Reads),
	}
}
