package daemon

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/earshot-dev/earshot/ingest/media"
	"github.com/earshot-dev/earshot/params"
	"github.com/earshot-dev/earshot/recognizer"
	"github.com/earshot-dev/earshot/recognizer/addons/diarization"
	"github.com/earshot-dev/earshot/recognizer/addons/llm"
	"github.com/earshot-dev/earshot/recognizer/addons/ner"
	"github.com/earshot-dev/earshot/recognizer/addons/pii"
	"github.com/earshot-dev/earshot/recognizer/addons/sentences"
	"github.com/earshot-dev/earshot/recognizer/addons/sentiment"
	"github.com/earshot-dev/earshot/recognizer/addons/subtitles"
	"github.com/earshot-dev/earshot/recognizer/addons/summarize"
)

// Result is the contract's result object (SPEC 2.5) of a pre-recorded job.
type Result struct {
	Metadata               ResultMetadata `json:"metadata"`
	Transcription          Transcription  `json:"transcription"`
	Translation            *Envelope      `json:"translation,omitempty"`
	Summarization          *Envelope      `json:"summarization,omitempty"`
	NamedEntityRecognition *Envelope      `json:"named_entity_recognition,omitempty"`
	SentimentAnalysis      *Envelope      `json:"sentiment_analysis,omitempty"`
	AudioToLLM             *Envelope      `json:"audio_to_llm,omitempty"`
	Sentences              *Envelope      `json:"sentences,omitempty"`
	Diarization            *Envelope      `json:"diarization,omitempty"`
	Chapterization         *Envelope      `json:"chapterization,omitempty"`
	// PIIRedaction reports pii_redaction (not in SPEC 2.5, which has no
	// place for it): results list what was redacted, {entity_type, start,
	// end, channel}, without the text; types the appliance cannot detect
	// are named in its error.
	PIIRedaction *Envelope `json:"pii_redaction,omitempty"`
	// Messages are the live session's messages, as JSON strings (live only).
	Messages []string `json:"messages,omitempty"`

	// PostSessionMetadata is merged into the job's post_session_metadata
	// (notes such as an add-on that was not applied); not part of result.
	PostSessionMetadata map[string]any `json:"-"`
}

// ResultMetadata is result.metadata; all four fields are required.
type ResultMetadata struct {
	AudioDuration            float64 `json:"audio_duration"`
	NumberOfDistinctChannels int     `json:"number_of_distinct_channels"`
	BillingTime              float64 `json:"billing_time"`
	TranscriptionTime        float64 `json:"transcription_time"`
}

// Transcription is result.transcription.
type Transcription struct {
	FullTranscript string      `json:"full_transcript"`
	Languages      []string    `json:"languages"`
	Utterances     []Utterance `json:"utterances"`
	// Sentences is one sentences envelope when sentences is enabled.
	Sentences []*Envelope `json:"sentences,omitempty"`
	// Subtitles has one file per format when subtitles is enabled.
	Subtitles []Subtitle `json:"subtitles,omitempty"`
}

// Subtitle is one subtitle file of the transcript (or of a translation).
type Subtitle struct {
	Format    string `json:"format"`
	Subtitles string `json:"subtitles"`
}

// Utterance is the contract's Utterance.
type Utterance struct {
	Start      float64 `json:"start"`
	End        float64 `json:"end"`
	Confidence float64 `json:"confidence"`
	Channel    int     `json:"channel"`
	// Speaker is set on every utterance when diarization is enabled.
	Speaker  *int   `json:"speaker,omitempty"`
	Words    []Word `json:"words"`
	Text     string `json:"text"`
	Language string `json:"language"`
}

// Word is the contract's Word.
type Word struct {
	Word       string  `json:"word"`
	Start      float64 `json:"start"`
	End        float64 `json:"end"`
	Confidence float64 `json:"confidence"`
}

// Envelope is the add-on envelope; all five fields are always present.
type Envelope struct {
	Success  bool        `json:"success"`
	IsEmpty  bool        `json:"is_empty"`
	ExecTime float64     `json:"exec_time"`
	Error    *AddonError `json:"error"`
	Results  any         `json:"results"`
}

// AddonError is the contract's AddonError.
type AddonError struct {
	StatusCode int    `json:"status_code"`
	Exception  string `json:"exception"`
	Message    string `json:"message"`
}

// notConfigured is the envelope of an add-on that has no backend on this
// appliance (PROTOCOL.md: 501 NotConfigured); the job still succeeds.
func notConfigured(name string) *Envelope {
	return &Envelope{IsEmpty: true, Error: addonError(errNotConfigured(name))}
}

func errNotConfigured(name string) error {
	return fmt.Errorf("%s needs a language-model backend and addons.llm is not configured on this appliance: %w", name, recognizer.ErrNotConfigured)
}

// Transcriber runs the pre-recorded pipeline on a file: decode, split
// channels, resample, segment, recognise, add-ons, shape the result. The
// worker pool and `earshotd transcribe` share it.
type Transcriber struct {
	// Engine transcribes when Engines is nil (earshotd transcribe).
	Engine recognizer.Engine
	// Telephone, when set, is Engine's telephone-band pool: it transcribes
	// narrowband audio when Engines is nil (with Engines, their telephone
	// pool does).
	Telephone recognizer.Engine
	// Engines routes each job to an engine (and falls back to the
	// embedded one when configured); nil means Engine for everything.
	Engines *Engines
	Media   media.Options
	// Addons runs the add-ons a job asks for; nil means the built-ins
	// without a language-model backend.
	Addons *Addons
}

// TranscribeFile runs the pipeline on path with the job's parameters.
// Unreadable audio wraps ErrBadAudio, audio over the duration limit wraps
// ErrTooLarge. An add-on's failure is reported in its envelope and never
// fails the job.
func (t *Transcriber) TranscribeFile(ctx context.Context, path string, p *params.PreRecorded) (*Result, *media.Info, error) {
	start := time.Now()
	pcm, err := media.Decode(ctx, path, &t.Media)
	switch {
	case errors.Is(err, media.ErrTooLong):
		return nil, nil, newError(ErrTooLarge, err, reasonTooLong, t.Media.MaxDuration)
	case errors.Is(err, media.ErrUnsupported), errors.Is(err, media.ErrCorrupt):
		return nil, nil, newError(ErrBadAudio, err, reasonNotAudio)
	case err != nil:
		return nil, nil, fmt.Errorf("decode audio: %w", err)
	}
	band := recognizer.BandOf(pcm.Info.SampleRate, pcm.Channels)
	br, notes, err := t.recognise(ctx, pcm.Channels, band, p)
	if err != nil {
		return nil, nil, err
	}
	lang := br.Language
	res := buildResult(br, pcm.Info.Duration, lang, p)
	_, vocabApplied := notes["custom_vocabulary"]
	engineUsed, _ := notes["engine"].(string)
	t.Addons.orBuiltin().apply(ctx, res, br.Utterances, addonJob{
		p: p, channels: pcm.Channels, distinctChannels: br.DistinctChannels > 1, lang: lang, duration: pcm.Info.Duration,
		vocabularyApplied: vocabApplied, speech: t.Engines.speechTranslator(engineUsed, pcm.Channels, p),
	})
	if len(notes) > 0 && res.PostSessionMetadata == nil {
		res.PostSessionMetadata = map[string]any{}
	}
	for k, v := range notes {
		res.PostSessionMetadata[k] = v
	}
	if len(br.Utterances) > 0 && lang != "" {
		res.Transcription.Languages = detectedLanguages(lang, br.Utterances)
	}
	if err := ctx.Err(); err != nil {
		return nil, nil, err
	}
	res.Metadata.TranscriptionTime = round3(time.Since(start).Seconds())
	return res, &pcm.Info, nil
}

// recognise runs the recogniser on a job's channels: on the routed engine,
// falling back to the embedded one when the routed remote engine fails and
// the policy allows it. notes are post_session_metadata: the engine used,
// the fallback and its reason, custom_vocabulary when sent as a prompt,
// the audio band and the embedded engine's acoustic model (band decides
// between the wideband and the telephone-band pool).
func (t *Transcriber) recognise(ctx context.Context, channels [][]int16, band recognizer.Band, p *params.PreRecorded) (*recognizer.BatchResult, map[string]any, error) {
	if t.Engines == nil {
		lang := p.Language()
		if lang == "" {
			lang = t.Engine.Languages()[0]
		}
		eng, notes := bandEngine(t.Engine, t.Engine, t.Telephone, band)
		br, err := recognizer.Transcribe(ctx, eng, channels, recognizer.BatchOptions{Language: lang})
		if err != nil {
			return nil, nil, fmt.Errorf("transcribe: %w", err)
		}
		notes["engine"] = eng.Name()
		return br, notes, nil
	}
	rt, err := t.Engines.Route(p.Model, p.LanguageConfig.Languages, p.LanguageConfig.CodeSwitching)
	if err != nil {
		return nil, nil, err
	}
	var notes map[string]any
	rt.Engine, notes = t.Engines.forBand(rt.Engine, band)
	notes["engine"] = rt.Engine.Name()
	prompt := ""
	if isRemote(rt.Engine) && p.CustomVocabulary != nil && *p.CustomVocabulary {
		if prompt = vocabularyPrompt(p.CustomVocabularyConfig); prompt != "" {
			notes["custom_vocabulary"] = "sent to engine " + rt.Engine.Name() + " as its prompt"
		}
	} else if p.CustomVocabulary != nil && *p.CustomVocabulary {
		var note string
		if rt.Engine, note = withVocabulary(rt.Engine, rt.Language, p.CustomVocabularyConfig); note != "" {
			notes["custom_vocabulary"] = note
		}
	}
	br, err := transcribeRoute(ctx, rt, channels, prompt)
	if err == nil {
		return br, notes, nil
	}
	if ctx.Err() != nil {
		return nil, nil, context.Cause(ctx)
	}
	jerr := engineError(rt.Engine.Name(), err)
	if !isRemote(rt.Engine) {
		return nil, nil, fmt.Errorf("transcribe: %w", err)
	}
	fl := t.Engines.fallbackLanguage(rt, p.LanguageConfig.Languages)
	if fl == "" {
		return nil, nil, jerr
	}
	fen, bnotes := t.Engines.forBand(t.Engines.embedded, band)
	br, ferr := transcribeRoute(ctx, Route{Engine: fen, Language: fl}, channels, "")
	if ferr != nil {
		return nil, nil, fmt.Errorf("transcribe (fallback after %v): %w", jerr, ferr)
	}
	delete(notes, "custom_vocabulary")
	t.Engines.countFallback(rt.Engine.Name())
	for k, v := range bnotes {
		notes[k] = v
	}
	notes["engine"] = t.Engines.embedded.Name()
	notes["fallback"] = map[string]any{"from": rt.Engine.Name(), "reason": Message(jerr) + ": " + err.Error()}
	return br, notes, nil
}

// buildResult shapes the recogniser's output without add-ons (the live
// session's result, and the base of a pre-recorded one; add-ons are run by
// Addons.apply, so p is not read here).
func buildResult(br *recognizer.BatchResult, duration float64, lang string, _ *params.PreRecorded) *Result {
	r := &Result{
		Metadata: ResultMetadata{
			AudioDuration:            round3(duration),
			NumberOfDistinctChannels: max(br.DistinctChannels, 1),
		},
		Transcription: Transcription{Languages: []string{lang}},
	}
	r.Metadata.BillingTime = round3(duration * float64(r.Metadata.NumberOfDistinctChannels))
	r.Transcription.Utterances, r.Transcription.FullTranscript = contractUtterances(br.Utterances, lang, nil)
	return r
}

// contractUtterances shapes utterances for the contract, with their
// speakers when speakers is not nil, and joins their text.
func contractUtterances(utts []recognizer.Utterance, lang string, speakers []int) ([]Utterance, string) {
	out := make([]Utterance, 0, len(utts))
	for i, u := range utts {
		ul := u.Language
		if ul == "" {
			ul = lang
		}
		cu := contractUtterance(u, ul)
		if i < len(speakers) {
			sp := speakers[i]
			cu.Speaker = &sp
		}
		out = append(out, cu)
	}
	return out, joinText(utts)
}

// joinText is the full transcript: the utterances' texts joined by spaces.
func joinText(utts []recognizer.Utterance) string {
	texts := make([]string, 0, len(utts))
	for _, u := range utts {
		texts = append(texts, strings.TrimSpace(u.Text))
	}
	return strings.Join(slices.DeleteFunc(texts, func(s string) bool { return s == "" }), " ")
}

func round3(f float64) float64 { return math.Round(f*1000) / 1000 }

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
// post_session_metadata for those without one) and the others go on.
func (a *Addons) apply(ctx context.Context, r *Result, utts []recognizer.Utterance, j addonJob) {
	p := j.p
	notes := map[string]any{}
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
		var err error
		if utts, err = a.guard("punctuation_enhanced", utts, a.Punctuation.Punctuate); err != nil {
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
				return nil, true, fmt.Errorf("daemon: %d speakers for %d utterances", len(sp), len(utts))
			}
			speakers = sp
			cu, _ := contractUtterances(utts, j.lang, speakers)
			return cu, len(cu) == 0, nil
		})
	}
	var ents []ner.Entity
	if p.NamedEntityRecognition {
		r.NamedEntityRecognition = a.envelope("named_entity_recognition", func() (any, bool, error) {
			found, _ := a.Entities.Entities(utts, nil)
			ents = found
			return entityResults(found), len(found) == 0, nil
		})
	}
	if p.PIIRedaction {
		var redactedEnts []ner.Entity
		r.PIIRedaction = a.envelope("pii_redaction", func() (any, bool, error) {
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
			res := make([]map[string]any, 0, len(found))
			for _, e := range found {
				res = append(res, map[string]any{"entity_type": e.Type, "start": round3(e.Start), "end": round3(e.End), "channel": e.Channel})
			}
			if len(unsupported) > 0 {
				return res, len(res) == 0, fmt.Errorf("%w: %s (the supported types found were redacted)", errUnsupportedTypes, strings.Join(unsupported, ", "))
			}
			return res, len(res) == 0, nil
		})
		if r.NamedEntityRecognition != nil && r.NamedEntityRecognition.Success {
			// Entities inside redacted spans keep their type, not their text.
			r.NamedEntityRecognition.Results = redactEntities(ents, redactedEnts)
		}
	}
	if p.Sentences {
		env := a.envelope("sentences", func() (any, bool, error) {
			s := sentenceTexts(a.Sentences.Sentences(utts))
			return s, len(s) == 0, nil
		})
		r.Sentences = env
		r.Transcription.Sentences = []*Envelope{env}
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
		r.Summarization = a.summaryEnvelope(ctx, utts, typ)
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

// errUnsupportedTypes is pii_redaction's error for entity types the
// appliance cannot detect (accepted, reported, not rejected: PROTOCOL.md).
var errUnsupportedTypes = errors.New("pii_redaction: entity types this appliance cannot detect")

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
func (a *Addons) subtitles(utts []recognizer.Utterance, c *params.SubtitlesConfig, duration float64) (out []Subtitle, err error) {
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
	out = make([]Subtitle, 0, len(files))
	for _, f := range files {
		out = append(out, Subtitle{Format: f.Format, Subtitles: f.Subtitles})
	}
	return out, nil
}

// entityResult is one named_entity_recognition result.
type entityResult struct {
	EntityType string  `json:"entity_type"`
	Text       string  `json:"text"`
	Start      float64 `json:"start"`
	End        float64 `json:"end"`
}

func entityResults(ents []ner.Entity) []entityResult {
	out := make([]entityResult, 0, len(ents))
	for _, e := range ents {
		out = append(out, entityResult{EntityType: e.Type, Text: e.Text, Start: round3(e.Start), End: round3(e.End)})
	}
	return out
}

// redactEntities is entityResults with the text of every entity that
// overlaps a redacted one replaced by its type marker.
func redactEntities(ents, redacted []ner.Entity) []entityResult {
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

// sentimentResult is one element of the sentiment_analysis list
// (PROTOCOL.md).
type sentimentResult struct {
	Sentiment string  `json:"sentiment"`
	Emotion   string  `json:"emotion"`
	Text      string  `json:"text"`
	Start     float64 `json:"start"`
	End       float64 `json:"end"`
	Channel   int     `json:"channel"`
}

func sentimentResults(rs []sentiment.Result) []sentimentResult {
	out := make([]sentimentResult, 0, len(rs))
	for _, r := range rs {
		out = append(out, sentimentResult{Sentiment: r.Sentiment, Emotion: r.Emotion, Text: r.Text, Start: round3(r.Start), End: round3(r.End), Channel: r.Channel})
	}
	return out
}

// summaryEnvelope is the summarization envelope: results is the summary
// string.
func (a *Addons) summaryEnvelope(ctx context.Context, utts []recognizer.Utterance, typ string) *Envelope {
	return a.envelope("summarization", func() (any, bool, error) {
		s, err := a.Summary.Summarize(ctx, utts, typ)
		if err != nil {
			return nil, true, err
		}
		return s, s == "", nil
	})
}

// chaptersEnvelope is the chapterization envelope: results is the list of
// chapters (PROTOCOL.md).
func (a *Addons) chaptersEnvelope(ctx context.Context, utts []recognizer.Utterance) *Envelope {
	return a.envelope("chapterization", func() (any, bool, error) {
		cs, err := a.Chapters.Chapters(ctx, utts)
		if err != nil {
			return nil, true, err
		}
		for i := range cs {
			cs[i].Start, cs[i].End = round3(cs[i].Start), round3(cs[i].End)
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

// TranslationResult is one target language's result in the translation
// envelope (SPEC 2.5).
type TranslationResult struct {
	Error          *AddonError `json:"error"`
	FullTranscript string      `json:"full_transcript"`
	Languages      []string    `json:"languages"`
	Utterances     []Utterance `json:"utterances"`
	Sentences      []*Envelope `json:"sentences"`
	Subtitles      []Subtitle  `json:"subtitles"`
}

// translationEnvelope translates utts into every target language. A
// language that fails carries its error in its result; the envelope fails
// only when every language failed.
func (a *Addons) translationEnvelope(ctx context.Context, utts []recognizer.Utterance, speakers []int, p *params.PreRecorded, j addonJob) *Envelope {
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
		results := make([]TranslationResult, 0, len(c.TargetLanguages))
		var firstErr error
		ok := 0
		for _, target := range c.TargetLanguages {
			tr := TranslationResult{Languages: []string{target}, Utterances: []Utterance{}, Sentences: []*Envelope{}, Subtitles: []Subtitle{}}
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
				tr.Sentences = []*Envelope{a.envelope("sentences", func() (any, bool, error) {
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
func (a *Addons) promptsEnvelope(ctx context.Context, transcript string, c *params.AudioToLLMConfig) *Envelope {
	if a.Prompts == nil {
		return notConfigured("audio_to_llm")
	}
	var prompts []string
	model := ""
	if c != nil {
		prompts, model = c.Prompts, c.Model
	}
	return a.envelope("audio_to_llm", func() (any, bool, error) {
		answers, err := a.Prompts.Answer(ctx, model, transcript, prompts)
		if len(answers) != len(prompts) {
			return nil, true, cmp.Or(err, fmt.Errorf("daemon: %d answers for %d prompts", len(answers), len(prompts)))
		}
		envs := make([]*Envelope, 0, len(answers))
		ok := 0
		for _, ans := range answers {
			e := &Envelope{Success: ans.Err == nil, IsEmpty: ans.Response == "", Results: promptResult{Prompt: ans.Prompt, Response: ans.Response}}
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
