package pipeline

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/earshot-dev/earshot/errcode"
	"github.com/earshot-dev/earshot/ingest/media"
	"github.com/earshot-dev/earshot/params"
	"github.com/earshot-dev/earshot/recognizer"
	"github.com/earshot-dev/earshot/recognizer/sphinx"
	"github.com/earshot-dev/earshot/transcript"
)

// Transcriber runs the pre-recorded pipeline on a file: decode, split
// channels, resample, segment, recognise, add-ons, shape the result. The
// daemon's workers and `earshotd transcribe` share it; the daemon's live
// sessions use its Engines and Addons. New builds it.
type Transcriber struct {
	// Engines routes each job to an engine (and falls back to the
	// embedded one when configured).
	Engines *Engines
	Media   media.Options
	// Addons runs the add-ons a job asks for; nil means the built-ins
	// without a language-model backend.
	Addons *Addons
	// Gate, when set, wraps the embedded engines a job decodes with (a
	// live session's batch pass: daemon/live/batchpass_gate.go keeps it below
	// live audio). Set it on a copy of the Transcriber.
	Gate func(recognizer.Engine) recognizer.Engine
	// Record is set for a live session's batch pass: the recording is
	// decoded for the session's record, which the embedded engine's
	// wideband pool does with a cheaper search than a pre-recorded job's
	// (recognizer.StreamOptions.Record). Set it on a copy of the
	// Transcriber.
	Record bool

	embedded *sphinx.Engine  // owned: closed by Close
	live     *sphinx.Engine  // owned: the wideband live pool, nil when none
	tel      *sphinx.Engine  // owned: the telephone-band pool of live calls, nil when none
	telBatch *sphinx.Engine  // owned: the telephone-band pool of whole recordings, nil when none
	cpu      *recognizer.CPU // the process's CPU policy the engines were given (New)
}

// CPU is the process's CPU admission policy the pipeline's engines were
// built with (New), for the live sessions and the batch passes to share.
func (t *Transcriber) CPU() *recognizer.CPU { return t.cpu }

// TranscribeFile runs the pipeline on path with the job's parameters.
// Unreadable audio wraps ErrBadAudio; audio over a bound of t.Media (more
// than 8 channels, longer than MaxDuration, channels times duration over
// MaxDecodedBytes) wraps ErrTooLarge, refused before it is decoded when
// its header tells (ProbeFile checks the same bounds). An add-on's
// failure is reported in its envelope and never fails the job.
func (t *Transcriber) TranscribeFile(ctx context.Context, path string, p *params.PreRecorded) (*Result, *media.Info, error) {
	start := time.Now()
	pcm, err := media.Decode(ctx, path, &t.Media)
	if err != nil {
		if aerr := t.audioError(err); aerr != nil {
			return nil, nil, aerr
		}
		return nil, nil, fmt.Errorf("decode audio: %w", err)
	}
	band := recognizer.BandOf(pcm.Info.SampleRate, pcm.Channels)
	br, notes, err := t.recognise(ctx, pcm.Channels, band, p)
	if err != nil {
		return nil, nil, err
	}
	lang := br.Language
	res := buildResult(br, pcm.Info.Duration, lang)
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
	res.Metadata.TranscriptionTime = transcript.Round3(time.Since(start).Seconds())
	return res, &pcm.Info, nil
}

// recognise runs the recogniser on a job's channels: on the routed engine,
// falling back to the embedded one when the routed remote engine fails and
// the policy allows it. notes are post_session_metadata: the engine used,
// the fallback and its reason, custom_vocabulary when sent as a prompt,
// the audio band and the embedded engine's acoustic model (band decides
// between the wideband and the telephone-band pool).
func (t *Transcriber) recognise(ctx context.Context, channels [][]int16, band recognizer.Band, p *params.PreRecorded) (*recognizer.BatchResult, map[string]any, error) {
	rt, err := t.Engines.Route(p.Model, p.LanguageConfig.Languages, p.LanguageConfig.CodeSwitching)
	if err != nil {
		return nil, nil, err
	}
	var notes map[string]any
	rt.Engine, notes = t.Engines.forBand(rt.Engine, band, true)
	notes["engine"] = rt.Engine.Name()
	// The engine reads the job's vocabulary from its stream options: a
	// remote engine as its prompt, the embedded one as words.
	var vocab recognizer.BatchOptions
	if rt.remote != nil && p.CustomVocabulary != nil && *p.CustomVocabulary {
		if vocab.Prompt = vocabularyPrompt(p.CustomVocabularyConfig); vocab.Prompt != "" {
			notes["custom_vocabulary"] = "sent to engine " + rt.Engine.Name() + " as its prompt"
		}
	} else if p.CustomVocabulary != nil && *p.CustomVocabulary {
		var note string
		if vocab.Vocabulary, note = vocabularyWords(rt.Engine, rt.Language, p.CustomVocabularyConfig); note != "" {
			notes["custom_vocabulary"] = note
		}
	}
	if t.Gate != nil && rt.remote == nil {
		rt.Engine = t.Gate(rt.Engine)
	}
	vocab.Record = t.Record
	br, err := transcribeRoute(ctx, rt, channels, vocab)
	if err == nil {
		return br, notes, nil
	}
	if ctx.Err() != nil {
		return nil, nil, context.Cause(ctx)
	}
	jerr := engineError(rt.Engine.Name(), err)
	if rt.remote == nil {
		return nil, nil, fmt.Errorf("transcribe: %w", err)
	}
	fl := t.Engines.fallbackLanguage(rt, p.LanguageConfig.Languages)
	if fl == "" {
		return nil, nil, jerr
	}
	fen, bnotes := t.Engines.forBand(t.Engines.embedded, band, true)
	if t.Gate != nil {
		fen = t.Gate(fen)
	}
	br, ferr := transcribeRoute(ctx, Route{Engine: fen, Language: fl}, channels, recognizer.BatchOptions{Record: t.Record})
	if ferr != nil {
		return nil, nil, fmt.Errorf("transcribe (fallback after %v): %w", jerr, ferr)
	}
	delete(notes, "custom_vocabulary")
	t.Engines.countFallback(rt.Engine.Name())
	for k, v := range bnotes {
		notes[k] = v
	}
	notes["engine"] = t.Engines.embedded.Name()
	notes["fallback"] = map[string]any{"from": rt.Engine.Name(), "reason": errcode.Message(jerr) + ": " + err.Error()}
	return br, notes, nil
}

// transcribeRoute runs a batch job on a route; o carries the job's
// vocabulary (Vocabulary, Prompt) for the streams. A fixed language goes
// through recognizer.Transcribe; detection segments the audio the same
// way and keeps each segment's detected language.
func transcribeRoute(ctx context.Context, rt Route, channels [][]int16, o recognizer.BatchOptions) (*recognizer.BatchResult, error) {
	if rt.Language != "" || rt.remote == nil {
		o.Language = rt.Language
		return recognizer.Transcribe(ctx, rt.Engine, channels, o)
	}
	slots, _ := rt.remote.Stats()
	o.Detect, o.Concurrency = true, max(slots, 1)
	br, err := recognizer.Transcribe(ctx, rt.Engine, channels, o)
	if err != nil {
		return nil, err
	}
	br.Language = mainLanguage(br.Utterances)
	if rt.PerUtterance {
		return br, nil
	}
	// Without code switching the language detected on the first utterance
	// is kept (SPEC 2.6): when others were heard as another language, the
	// whole job is decoded again in the first one (relabelling them would
	// keep text decoded in the other language). A first language the
	// engine does not list keeps the detected labels.
	first := ""
	if i := slices.IndexFunc(br.Utterances, func(u recognizer.Utterance) bool { return u.Language != "" }); i >= 0 {
		first = br.Utterances[i].Language
	}
	mixed := slices.ContainsFunc(br.Utterances, func(u recognizer.Utterance) bool { return u.Language != "" && u.Language != first })
	if first == "" || !mixed || !slices.Contains(rt.Engine.Languages(), first) {
		return br, nil
	}
	o.Language, o.Detect = first, false
	return recognizer.Transcribe(ctx, rt.Engine, channels, o)
}

// mainLanguage is the language detected on most speech ("" when none).
func mainLanguage(utts []recognizer.Utterance) string {
	dur := map[string]float64{}
	best := ""
	for _, u := range utts {
		if u.Language == "" {
			continue
		}
		dur[u.Language] += u.End - u.Start
		if best == "" || dur[u.Language] > dur[best] {
			best = u.Language
		}
	}
	return best
}

// detectedLanguages lists the utterances' languages in order of first
// appearance, main first.
func detectedLanguages(main string, utts []recognizer.Utterance) []string {
	out := []string{main}
	for _, u := range utts {
		if u.Language != "" && !slices.Contains(out, u.Language) {
			out = append(out, u.Language)
		}
	}
	return out
}
