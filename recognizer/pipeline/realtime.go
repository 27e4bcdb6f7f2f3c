package pipeline

import (
	"context"
	"errors"
	"fmt"

	"github.com/earshot-dev/earshot/recognizer"
	"github.com/earshot-dev/earshot/recognizer/addons/llm"
	"github.com/earshot-dev/earshot/transcript"
)

// The realtime add-ons of a live session (SPEC 2.7 realtime_processing)
// run on one final utterance at a time; the session (package daemon) owns
// when they run and the messages that carry them, these methods what they
// compute. Each is guarded like the pre-recorded ones: a failure or a
// panic becomes the envelope's error.

// OrBuiltin returns a, or the built-ins without a backend when a is nil.
func (a *Addons) OrBuiltin() *Addons { return a.orBuiltin() }

// SpellUtterance applies custom_spelling's dict to one utterance; u itself
// when the speller fails.
func (a *Addons) SpellUtterance(u recognizer.Utterance, dict map[string][]string) recognizer.Utterance {
	out, err := a.guard("custom_spelling", []recognizer.Utterance{u}, func(in []recognizer.Utterance) []recognizer.Utterance {
		return a.Spelling.Spell(in, dict)
	})
	if err != nil {
		return u
	}
	return out[0]
}

// EntitiesEnvelope is the named_entity_recognition envelope of utts; its
// results are []EntityResult. Utterances in a language it does not read
// fail it (languages.go).
func (a *Addons) EntitiesEnvelope(utts []recognizer.Utterance) *transcript.Envelope {
	return a.envelope("named_entity_recognition", func() (any, bool, error) {
		if err := a.readable("named_entity_recognition", transcriptLanguages(utts, "")); err != nil {
			return nil, true, err
		}
		ents, _ := a.Entities.Entities(utts, nil)
		return entityResults(ents), len(ents) == 0, nil
	})
}

// SentimentEnvelope is the sentiment_analysis envelope of utts as a live
// message carries it: its results are the []SentimentResult list itself
// (a pre-recorded result has it as a JSON string). Utterances in a
// language it does not read fail it.
func (a *Addons) SentimentEnvelope(utts []recognizer.Utterance) *transcript.Envelope {
	return a.envelope("sentiment_analysis", func() (any, bool, error) {
		if err := a.readable("sentiment_analysis", transcriptLanguages(utts, "")); err != nil {
			return nil, true, err
		}
		list := sentimentResults(a.Sentiment.Sentiment(utts))
		return list, len(list) == 0, nil
	})
}

// TranslationUnavailable is the error of a translation asked of an
// appliance without a translation backend (wraps
// recognizer.ErrNotConfigured), nil when there is one.
func (a *Addons) TranslationUnavailable() error {
	if a.Translation == nil {
		return errNotConfigured("translation")
	}
	return nil
}

// TranslateUtterance translates one utterance into target: the translated
// utterance, or the add-on error (the translator failed, panicked or
// answered a wrong count; a cancelled ctx is "session ended"). Call it
// only when TranslationUnavailable is nil.
func (a *Addons) TranslateUtterance(ctx context.Context, u recognizer.Utterance, target string, o llm.TranslationOptions) (out *recognizer.Utterance, aerr *transcript.AddonError) {
	defer func() {
		if r := recover(); r != nil {
			a.log.Error("add-on panicked", "addon", "translation", "panic", r)
			out, aerr = nil, addonError(errAddonPanic)
		}
	}()
	res, err := a.Translation.Translate(ctx, []recognizer.Utterance{u}, target, o)
	switch {
	case err == nil && len(res) != 1:
		err = fmt.Errorf("pipeline: translation returned %d utterances for 1: %w", len(res), llm.ErrMalformed)
	case errors.Is(err, context.Canceled) && ctx.Err() != nil:
		err = fmt.Errorf("translation: session ended before the backend answered: %w", context.Canceled)
	}
	if err != nil {
		if backendDown(err) {
			a.log.Warn("add-on backend failed", "addon", "translation", "error", err)
		}
		return nil, addonError(err)
	}
	return &res[0], nil
}

// SummaryEnvelope is the summarization envelope of utts (post_processing),
// failed when they hold a language it does not read.
func (a *Addons) SummaryEnvelope(ctx context.Context, utts []recognizer.Utterance, typ string) *transcript.Envelope {
	return a.summaryEnvelope(ctx, utts, transcriptLanguages(utts, ""), typ)
}

// ChaptersEnvelope is the chapterization envelope of utts (post_processing),
// failed when they hold a language it does not read.
func (a *Addons) ChaptersEnvelope(ctx context.Context, utts []recognizer.Utterance) *transcript.Envelope {
	return a.chaptersEnvelope(ctx, utts, transcriptLanguages(utts, ""))
}

// ErrorOf is the envelope's AddonError of an add-on failure err.
func ErrorOf(err error) *transcript.AddonError { return addonError(err) }
