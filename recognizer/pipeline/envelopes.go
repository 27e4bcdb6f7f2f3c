package pipeline

import (
	"cmp"
	"context"
	"errors"
	"fmt"

	"github.com/earshot-dev/earshot/params"
	"github.com/earshot-dev/earshot/recognizer"
	"github.com/earshot-dev/earshot/recognizer/addons/llm"
	"github.com/earshot-dev/earshot/recognizer/addons/ner"
	"github.com/earshot-dev/earshot/recognizer/addons/sentences"
	"github.com/earshot-dev/earshot/recognizer/addons/sentiment"
	"github.com/earshot-dev/earshot/recognizer/addons/summarize"
	"github.com/earshot-dev/earshot/transcript"
)

// EntityResult is one named_entity_recognition result.
type EntityResult struct {
	EntityType string  `json:"entity_type"`
	Text       string  `json:"text"`
	Start      float64 `json:"start"`
	End        float64 `json:"end"`
}

func entityResults(ents []ner.Entity) []EntityResult {
	out := make([]EntityResult, 0, len(ents))
	for _, e := range ents {
		out = append(out, EntityResult{EntityType: e.Type, Text: e.Text, Start: transcript.Round3(e.Start), End: transcript.Round3(e.End)})
	}
	return out
}

// redactEntities is entityResults with the text of every entity that
// overlaps a redacted one replaced by its type marker.
func redactEntities(ents, redacted []ner.Entity) []EntityResult {
	out := entityResults(ents)
	for i, e := range ents {
		for _, r := range redacted {
			if r.Utterance == e.Utterance && r.FirstWord <= e.LastWord && e.FirstWord <= r.LastWord {
				out[i].Text = "[" + e.Type + "]"
				break
			}
		}
	}
	return out
}

func sentenceTexts(ss []sentences.Sentence) []string {
	out := make([]string, 0, len(ss))
	for _, s := range ss {
		out = append(out, s.Text)
	}
	return out
}

// SentimentResult is one element of the sentiment_analysis list
// (PROTOCOL.md).
type SentimentResult struct {
	Sentiment string  `json:"sentiment"`
	Emotion   string  `json:"emotion"`
	Text      string  `json:"text"`
	Start     float64 `json:"start"`
	End       float64 `json:"end"`
	Channel   int     `json:"channel"`
}

func sentimentResults(rs []sentiment.Result) []SentimentResult {
	out := make([]SentimentResult, 0, len(rs))
	for _, r := range rs {
		out = append(out, SentimentResult{Sentiment: r.Sentiment, Emotion: r.Emotion, Text: r.Text, Start: transcript.Round3(r.Start), End: transcript.Round3(r.End), Channel: r.Channel})
	}
	return out
}

// summaryEnvelope is the summarization envelope: results is the summary
// string; langs are the transcript's languages.
func (a *Addons) summaryEnvelope(ctx context.Context, utts []recognizer.Utterance, langs []string, typ string) *transcript.Envelope {
	return a.envelope("summarization", func() (any, bool, error) {
		if err := a.readable("summarization", langs); err != nil {
			return nil, true, err
		}
		s, err := a.Summary.Summarize(ctx, utts, typ)
		if err != nil {
			return nil, true, err
		}
		return s, s == "", nil
	})
}

// chaptersEnvelope is the chapterization envelope: results is the list of
// chapters (PROTOCOL.md); langs are the transcript's languages.
func (a *Addons) chaptersEnvelope(ctx context.Context, utts []recognizer.Utterance, langs []string) *transcript.Envelope {
	return a.envelope("chapterization", func() (any, bool, error) {
		if err := a.readable("chapterization", langs); err != nil {
			return nil, true, err
		}
		cs, err := a.Chapters.Chapters(ctx, utts)
		if err != nil {
			return nil, true, err
		}
		for i := range cs {
			cs[i].Start, cs[i].End = transcript.Round3(cs[i].Start), transcript.Round3(cs[i].End)
			if cs[i].Keywords == nil {
				cs[i].Keywords = []string{}
			}
		}
		if cs == nil {
			cs = []summarize.Chapter{}
		}
		return cs, len(cs) == 0, nil
	})
}

// translationEnvelope translates utts into every target language. A
// language that fails carries its error in its result; the envelope fails
// only when every language failed.
func (a *Addons) translationEnvelope(ctx context.Context, utts []recognizer.Utterance, speakers []int, p *params.PreRecorded, j addonJob) *transcript.Envelope {
	translator := a.Translation
	if translator == nil {
		translator = j.speech // English only, from the audio
	}
	if translator == nil {
		return notConfigured("translation")
	}
	c := p.TranslationConfig
	if c == nil || len(c.TargetLanguages) == 0 {
		return a.envelope("translation", func() (any, bool, error) {
			return nil, true, errors.New("translation: translation_config.target_languages is empty")
		})
	}
	opts := llm.TranslationOptions{Context: c.AdaptationContext(), Informal: c.Informal, MatchOriginalUtterances: c.MatchOriginalUtterances}
	return a.envelope("translation", func() (any, bool, error) {
		results := make([]transcript.TranslationResult, 0, len(c.TargetLanguages))
		var firstErr error
		ok := 0
		for _, target := range c.TargetLanguages {
			tr := transcript.TranslationResult{Languages: []string{target}, Utterances: []transcript.Utterance{}, Sentences: []*transcript.Envelope{}, Subtitles: []transcript.Subtitle{}}
			out, err := translator.Translate(ctx, utts, target, opts)
			if err != nil {
				tr.Error = addonError(err)
				if backendDown(err) {
					a.log.Warn("add-on backend failed", "addon", "translation", "error", err)
				}
				firstErr = cmp.Or(firstErr, err)
				results = append(results, tr)
				continue
			}
			ok++
			var sp []int
			if len(out) == len(speakers) {
				sp = speakers
			}
			tr.Utterances, tr.FullTranscript = contractUtterances(out, target, sp)
			if p.Sentences {
				tr.Sentences = []*transcript.Envelope{a.envelope("sentences", func() (any, bool, error) {
					if err := a.readable("sentences", []string{target}); err != nil {
						return nil, true, err
					}
					s := sentenceTexts(a.Sentences.Sentences(out))
					return s, len(s) == 0, nil
				})}
			}
			if p.Subtitles {
				files, err := a.subtitles(out, p.SubtitlesConfig, j.duration)
				if err != nil {
					tr.Error = addonError(err)
				}
				if files != nil {
					tr.Subtitles = files
				}
			}
			results = append(results, tr)
		}
		if ok == 0 {
			return results, true, firstErr
		}
		return results, false, nil
	})
}

// promptEnvelope is one audio_to_llm answer (PROTOCOL.md).
type promptResult struct {
	Prompt   string `json:"prompt"`
	Response string `json:"response"`
}

// promptsEnvelope answers each prompt: results is one envelope per prompt.
// The outer envelope fails only when every prompt failed.
func (a *Addons) promptsEnvelope(ctx context.Context, text string, c *params.AudioToLLMConfig) *transcript.Envelope {
	if a.Prompts == nil {
		return notConfigured("audio_to_llm")
	}
	var prompts []string
	model := ""
	if c != nil {
		prompts, model = c.Prompts, c.Model
	}
	return a.envelope("audio_to_llm", func() (any, bool, error) {
		answers, err := a.Prompts.Answer(ctx, model, text, prompts)
		if len(answers) != len(prompts) {
			return nil, true, cmp.Or(err, fmt.Errorf("pipeline: %d answers for %d prompts", len(answers), len(prompts)))
		}
		envs := make([]*transcript.Envelope, 0, len(answers))
		ok := 0
		for _, ans := range answers {
			e := &transcript.Envelope{Success: ans.Err == nil, IsEmpty: ans.Response == "", Results: promptResult{Prompt: ans.Prompt, Response: ans.Response}}
			if ans.Err != nil {
				e.Error = addonError(ans.Err)
			} else {
				ok++
			}
			envs = append(envs, e)
		}
		if ok == 0 && len(prompts) > 0 {
			return envs, true, cmp.Or(err, errors.New("audio_to_llm: every prompt failed"))
		}
		return envs, len(envs) == 0, nil
	})
}
