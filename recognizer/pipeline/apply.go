package pipeline

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/earshot-dev/earshot/params"
	"github.com/earshot-dev/earshot/recognizer"
	"github.com/earshot-dev/earshot/recognizer/addons/diarization"
	"github.com/earshot-dev/earshot/recognizer/addons/ner"
	"github.com/earshot-dev/earshot/recognizer/addons/pii"
	"github.com/earshot-dev/earshot/recognizer/addons/subtitles"
	"github.com/earshot-dev/earshot/transcript"
)

// addonJob is what the add-ons of one pre-recorded job read besides the
// utterances.
type addonJob struct {
	p *params.PreRecorded
	// channels is the decoded 16 kHz audio, one slice per source channel
	// (diarization by voice reads it).
	channels         [][]int16
	distinctChannels bool
	lang             string
	duration         float64
	// vocabularyApplied is set when the engine took custom_vocabulary
	// (as a remote engine's prompt).
	vocabularyApplied bool
	// speech translates into English from the audio with the remote
	// engine that transcribed the job (its /audio/translations), used
	// when no chat backend is configured; nil when the engine is not
	// remote.
	speech Translator
}

// apply runs the add-ons p asks for on the recogniser's utterances and
// writes them into r: custom spelling, then punctuation, then diarization,
// then entities and redaction, then the rest on the resulting text, so each
// later add-on sees the corrected, punctuated and redacted transcript.
// Every add-on runs guarded; a failure lands in its envelope (or in
// post_session_metadata for those without one) and the others go on. An
// add-on that does not read the transcript's language does not run
// (languages.go).
func (a *Addons) apply(ctx context.Context, r *Result, utts []recognizer.Utterance, j addonJob) {
	p := j.p
	notes := map[string]any{}
	langs := transcriptLanguages(utts, j.lang)
	if p.CustomSpelling && p.CustomSpellingConfig != nil {
		var err error
		dict := p.CustomSpellingConfig.SpellingDictionary
		if utts, err = a.guard("custom_spelling", utts, func(u []recognizer.Utterance) []recognizer.Utterance { return a.Spelling.Spell(u, dict) }); err != nil {
			notes["custom_spelling"] = "not applied: " + addonError(err).Message
		}
	}
	if p.CustomVocabulary != nil && *p.CustomVocabulary && p.CustomVocabularyConfig != nil && !j.vocabularyApplied {
		// The engine that transcribed the job did not take it (the
		// embedded engine re-running a failed remote job, or no item in
		// the job's language).
		notes["custom_vocabulary"] = fmt.Sprintf("not applied: the engine that transcribed the job did not take it (%d vocabulary items ignored)",
			len(p.CustomVocabularyConfig.Vocabulary))
	}
	if p.PunctuationEnhanced {
		err := a.readable("punctuation_enhanced", langs)
		if err == nil {
			utts, err = a.guard("punctuation_enhanced", utts, a.Punctuation.Punctuate)
		}
		if err != nil {
			notes["punctuation_enhanced"] = "not applied: " + addonError(err).Message
		}
	}
	var speakers []int
	if c := p.DiarizationConfig; p.Diarization && j.distinctChannels && c != nil &&
		(c.NumberOfSpeakers != nil || c.MinSpeakers != nil || c.MaxSpeakers != nil) {
		notes["diarization_config"] = "speaker counts not used: the channels carry distinct audio, and each channel is one speaker"
	}
	if p.Diarization {
		r.Diarization = a.envelope("diarization", func() (any, bool, error) {
			c := diarizationConfig(p.DiarizationConfig)
			sp, err := a.Diarization.Diarize(j.channels, utts, j.distinctChannels, c)
			if err != nil {
				return nil, true, err
			}
			if len(sp) != len(utts) {
				return nil, true, fmt.Errorf("pipeline: %d speakers for %d utterances", len(sp), len(utts))
			}
			speakers = sp
			cu, _ := contractUtterances(utts, j.lang, speakers)
			return cu, len(cu) == 0, nil
		})
	}
	var ents []ner.Entity
	if p.NamedEntityRecognition {
		r.NamedEntityRecognition = a.envelope("named_entity_recognition", func() (any, bool, error) {
			if err := a.readable("named_entity_recognition", langs); err != nil {
				return nil, true, err
			}
			found, _ := a.Entities.Entities(utts, nil)
			ents = found
			return entityResults(found), len(found) == 0, nil
		})
	}
	if p.PIIRedaction {
		var redactedEnts []ner.Entity
		r.PIIRedaction = a.envelope("pii_redaction", func() (any, bool, error) {
			if err := a.readable("pii_redaction", langs); err != nil {
				return nil, true, err
			}
			c := p.PIIRedactionConfig
			types, mode := []string{ner.DefaultPreset}, pii.Marker
			if c != nil {
				if len(c.EntityTypes) > 0 {
					types = c.EntityTypes
				}
				if c.ProcessedTextType != "" {
					mode = c.ProcessedTextType
				}
			}
			found, unsupported := a.Entities.Entities(utts, types)
			out, err := a.guard("pii_redaction", utts, func(u []recognizer.Utterance) []recognizer.Utterance { return a.Redaction.Redact(u, found, mode) })
			if err != nil {
				return nil, true, err
			}
			utts, redactedEnts = out, found
			res := piiResults(found)
			return res, len(res) == 0, unsupportedTypes(unsupported)
		})
		if r.NamedEntityRecognition != nil && r.NamedEntityRecognition.Success {
			// Entities inside redacted spans keep their type, not their text.
			r.NamedEntityRecognition.Results = redactEntities(ents, redactedEnts)
		}
		r.RedactedAudio = redactedAudio(p, j.channels, redactedEnts)
	}
	if p.Sentences {
		env := a.envelope("sentences", func() (any, bool, error) {
			if err := a.readable("sentences", langs); err != nil {
				return nil, true, err
			}
			s := sentenceTexts(a.Sentences.Sentences(utts))
			return s, len(s) == 0, nil
		})
		r.Sentences = env
		r.Transcription.Sentences = []*transcript.Envelope{env}
	}
	if p.Subtitles {
		files, err := a.subtitles(utts, p.SubtitlesConfig, j.duration)
		if err != nil {
			notes["subtitles"] = "not built: " + addonError(err).Message
		}
		r.Transcription.Subtitles = files
	}
	if p.SentimentAnalysis {
		r.SentimentAnalysis = a.envelope("sentiment_analysis", func() (any, bool, error) {
			if err := a.readable("sentiment_analysis", langs); err != nil {
				return nil, true, err
			}
			list := sentimentResults(a.Sentiment.Sentiment(utts))
			b, err := json.Marshal(list)
			if err != nil {
				return nil, true, err
			}
			return string(b), len(list) == 0, nil
		})
	}
	if p.Summarization {
		typ := params.SummaryGeneral
		if p.SummarizationConfig != nil && p.SummarizationConfig.Type != "" {
			typ = p.SummarizationConfig.Type
		}
		r.Summarization = a.summaryEnvelope(ctx, utts, langs, typ)
	}
	if p.Translation {
		r.Translation = a.translationEnvelope(ctx, utts, speakers, p, j)
	}
	if p.AudioToLLM {
		r.AudioToLLM = a.promptsEnvelope(ctx, joinText(utts), p.AudioToLLMConfig)
	}
	r.Transcription.Utterances, r.Transcription.FullTranscript = contractUtterances(utts, j.lang, speakers)
	if r.Diarization != nil && r.Diarization.Success {
		// The diarization envelope lists the final utterances (respelled,
		// punctuated, redacted), as the transcription does.
		r.Diarization.Results = r.Transcription.Utterances
	}
	if len(notes) > 0 {
		r.PostSessionMetadata = notes
	}
}

func diarizationConfig(c *params.DiarizationConfig) diarization.Config {
	var d diarization.Config
	if c == nil {
		return d
	}
	if c.NumberOfSpeakers != nil {
		d.NumberOfSpeakers = *c.NumberOfSpeakers
	}
	if c.MinSpeakers != nil {
		d.MinSpeakers = *c.MinSpeakers
	}
	if c.MaxSpeakers != nil {
		d.MaxSpeakers = *c.MaxSpeakers
	}
	return d
}

// subtitlesConfig maps subtitles_config onto the subtitles package. Values
// below what the package builds are refused by params (422); a duration
// given alone moves the other's default out of its way (maximum_duration
// 0.6 alone shortens the 0.7 s minimum to 0.6, minimum_duration 8 alone
// lengthens the 6 s maximum to 8) rather than failing the subtitles.
func subtitlesConfig(c *params.SubtitlesConfig, duration float64) subtitles.Config {
	s := subtitles.Config{AudioDuration: duration}
	if c == nil {
		return s
	}
	def := subtitles.Config{}
	def.SetDefaults()
	s.Formats, s.Style = c.Formats, c.Style
	switch {
	case c.MinimumDuration != nil && c.MaximumDuration != nil:
		s.MinimumDuration, s.MaximumDuration = *c.MinimumDuration, *c.MaximumDuration
	case c.MinimumDuration != nil:
		s.MinimumDuration, s.MaximumDuration = *c.MinimumDuration, max(def.MaximumDuration, *c.MinimumDuration)
	case c.MaximumDuration != nil:
		s.MinimumDuration, s.MaximumDuration = min(def.MinimumDuration, *c.MaximumDuration), *c.MaximumDuration
	}
	if c.MaximumCharactersPerRow != nil {
		s.MaximumCharactersPerRow = *c.MaximumCharactersPerRow
	}
	if c.MaximumRowsPerCaption != nil {
		s.MaximumRowsPerCaption = *c.MaximumRowsPerCaption
	}
	return s
}

// subtitles builds the subtitle files of utts.
func (a *Addons) subtitles(utts []recognizer.Utterance, c *params.SubtitlesConfig, duration float64) (out []transcript.Subtitle, err error) {
	defer func() {
		if r := recover(); r != nil {
			a.log.Error("add-on panicked", "addon", "subtitles", "panic", r)
			out, err = nil, errAddonPanic
		}
	}()
	files, err := a.Subtitles.Subtitles(utts, subtitlesConfig(c, duration))
	if err != nil {
		return nil, err
	}
	out = make([]transcript.Subtitle, 0, len(files))
	for _, f := range files {
		out = append(out, transcript.Subtitle{Format: f.Format, Subtitles: f.Subtitles})
	}
	return out, nil
}
