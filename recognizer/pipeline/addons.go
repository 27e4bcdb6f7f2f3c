package pipeline

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/earshot-dev/earshot/errcode"
	"github.com/earshot-dev/earshot/recognizer"
	"github.com/earshot-dev/earshot/recognizer/addons/diarization"
	"github.com/earshot-dev/earshot/recognizer/addons/llm"
	"github.com/earshot-dev/earshot/recognizer/addons/ner"
	"github.com/earshot-dev/earshot/recognizer/addons/pii"
	"github.com/earshot-dev/earshot/recognizer/addons/punctuation"
	"github.com/earshot-dev/earshot/recognizer/addons/sentences"
	"github.com/earshot-dev/earshot/recognizer/addons/sentiment"
	"github.com/earshot-dev/earshot/recognizer/addons/spelling"
	"github.com/earshot-dev/earshot/recognizer/addons/subtitles"
	"github.com/earshot-dev/earshot/recognizer/addons/summarize"
	"github.com/earshot-dev/earshot/transcript"
)

// llmClient is the backend's config with a request's own model, when it
// names one.
func llmClient(c llm.Config, model string) llm.Config {
	if model != "" {
		c.Model = model
	}
	return c
}

// The add-on families the daemon consumes. Each has a built-in
// implementation (or, for the language-model ones, the backend's); a site
// can swap any of them in Addons before the daemon uses it.
type (
	// Speller writes the variants of a spelling dictionary as their key
	// (custom_spelling).
	Speller interface {
		Spell(utts []recognizer.Utterance, dict map[string][]string) []recognizer.Utterance
	}
	// Punctuator restores punctuation and capitals (punctuation_enhanced).
	Punctuator interface {
		Punctuate(utts []recognizer.Utterance) []recognizer.Utterance
	}
	// SentenceSplitter cuts a transcript into sentences (sentences).
	SentenceSplitter interface {
		Sentences(utts []recognizer.Utterance) []sentences.Sentence
	}
	// SubtitleWriter builds subtitle files (subtitles).
	SubtitleWriter interface {
		Subtitles(utts []recognizer.Utterance, c subtitles.Config) ([]subtitles.File, error)
	}
	// Diarizer returns a speaker per utterance (diarization); channels is
	// the 16 kHz audio per source channel.
	Diarizer interface {
		Diarize(channels [][]int16, utts []recognizer.Utterance, distinctChannels bool, c diarization.Config) ([]int, error)
	}
	// EntityFinder finds entities of the given types, empty meaning all,
	// and names the types it cannot detect (named_entity_recognition,
	// pii_redaction).
	EntityFinder interface {
		Entities(utts []recognizer.Utterance, types []string) (ents []ner.Entity, unsupported []string)
	}
	// Redactor replaces entities' words (pii_redaction); it returns one
	// utterance per input utterance.
	Redactor interface {
		Redact(utts []recognizer.Utterance, ents []ner.Entity, mode string) []recognizer.Utterance
	}
	// SentimentAnalyzer labels each utterance (sentiment_analysis).
	SentimentAnalyzer interface {
		Sentiment(utts []recognizer.Utterance) []sentiment.Result
	}
	// Summarizer summarises a transcript as general, bullet_points or
	// concise (summarization).
	Summarizer interface {
		Summarize(ctx context.Context, utts []recognizer.Utterance, typ string) (string, error)
	}
	// Chapterizer splits a transcript into chapters (chapterization).
	Chapterizer interface {
		Chapters(ctx context.Context, utts []recognizer.Utterance) ([]summarize.Chapter, error)
	}
	// Translator translates utterances into a target language keeping
	// their times (translation).
	Translator interface {
		Translate(ctx context.Context, utts []recognizer.Utterance, target string, o llm.TranslationOptions) ([]recognizer.Utterance, error)
	}
	// PromptAnswerer answers prompts about a transcript (audio_to_llm);
	// model "" is the backend's default.
	PromptAnswerer interface {
		Answer(ctx context.Context, model, transcript string, prompts []string) ([]llm.PromptAnswer, error)
	}
)

// Addons holds one implementation per add-on family. NewAddons fills every
// field; Translation and Prompts stay nil without an LLM backend, and their
// add-ons then report 501 NotConfigured. Fields may be replaced before the
// value is shared; afterwards it is read-only and safe for concurrent use.
type Addons struct {
	Spelling    Speller
	Punctuation Punctuator
	Sentences   SentenceSplitter
	Subtitles   SubtitleWriter
	Diarization Diarizer
	Entities    EntityFinder
	Redaction   Redactor
	Sentiment   SentimentAnalyzer
	// Summary is extractive (TextRank) without a backend, abstractive with.
	Summary  Summarizer
	Chapters Chapterizer
	// Translation and Prompts are nil without a backend.
	Translation Translator
	Prompts     PromptAnswerer
	// Reads maps an add-on (its envelope's name) to the language codes
	// it reads; one not listed reads any language (languages.go). The
	// built-ins' come from their packages; with a backend, summarization
	// is the model's and is not listed. A site that swaps an
	// implementation sets its entry.
	Reads map[string][]string

	log    *slog.Logger
	client *llm.Client // nil without a backend
}

// NewAddons wires the add-ons from cfg (after SetDefaults and Validate). It
// does no I/O; logger may be nil (silent). Close releases the backend's
// connections.
func NewAddons(cfg AddonsConfig, logger *slog.Logger) (*Addons, error) {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	a := builtinAddons()
	a.log = logger
	if cfg.LLM.Configured() {
		c, err := llm.New(cfg.LLM)
		if err != nil {
			return nil, fmt.Errorf("addons: llm backend: %w", err)
		}
		b := &backend{c: c, cfg: cfg.LLM}
		a.client = c
		a.Summary, a.Translation, a.Prompts = b, b, b
		delete(a.Reads, "summarization") // the model's summary reads what the model reads
	}
	return a, nil
}

// builtinAddons is every built-in, no backend, silent.
func builtinAddons() *Addons {
	var b builtin
	return &Addons{
		Spelling: b, Punctuation: b, Sentences: b, Subtitles: b, Diarization: b,
		Entities: b, Redaction: b, Sentiment: b, Summary: b, Chapters: b,
		Reads: builtinReads(),
		log:   slog.New(slog.DiscardHandler),
	}
}

// Close releases the backend's idle connections. Idempotent; nil-safe.
func (a *Addons) Close() error {
	if a == nil || a.client == nil {
		return nil
	}
	return a.client.Close()
}

// builtin implements every family that needs no backend with the packages
// under recognizer/addons.
type builtin struct{}

var (
	_ Speller           = builtin{}
	_ Punctuator        = builtin{}
	_ SentenceSplitter  = builtin{}
	_ SubtitleWriter    = builtin{}
	_ Diarizer          = builtin{}
	_ EntityFinder      = builtin{}
	_ Redactor          = builtin{}
	_ SentimentAnalyzer = builtin{}
	_ Summarizer        = builtin{}
	_ Chapterizer       = builtin{}
)

func (builtin) Spell(utts []recognizer.Utterance, dict map[string][]string) []recognizer.Utterance {
	return spelling.Apply(utts, dict)
}

func (builtin) Punctuate(utts []recognizer.Utterance) []recognizer.Utterance {
	return punctuation.Restore(utts)
}

func (builtin) Sentences(utts []recognizer.Utterance) []sentences.Sentence {
	return sentences.Split(utts)
}

func (builtin) Subtitles(utts []recognizer.Utterance, c subtitles.Config) ([]subtitles.File, error) {
	return subtitles.Build(utts, c)
}

func (builtin) Diarize(channels [][]int16, utts []recognizer.Utterance, distinct bool, c diarization.Config) ([]int, error) {
	return diarization.Diarize(channels, utts, distinct, c)
}

func (builtin) Entities(utts []recognizer.Utterance, types []string) ([]ner.Entity, []string) {
	return ner.Find(utts, types)
}

func (builtin) Redact(utts []recognizer.Utterance, ents []ner.Entity, mode string) []recognizer.Utterance {
	return pii.Redact(utts, ents, mode)
}

func (builtin) Sentiment(utts []recognizer.Utterance) []sentiment.Result {
	return sentiment.Analyze(utts)
}

// Summarize is the extractive summary.
func (builtin) Summarize(_ context.Context, utts []recognizer.Utterance, typ string) (string, error) {
	return summarize.Summarize(utts, typ), nil
}

func (builtin) Chapters(_ context.Context, utts []recognizer.Utterance) ([]summarize.Chapter, error) {
	return summarize.Chapters(utts), nil
}

// backend implements the families that need a language model with the
// configured chat-completions server.
type backend struct {
	c   *llm.Client
	cfg llm.Config
}

var (
	_ Summarizer     = (*backend)(nil)
	_ Translator     = (*backend)(nil)
	_ PromptAnswerer = (*backend)(nil)
)

// Summarize is the abstractive summary of the transcript's text.
func (b *backend) Summarize(ctx context.Context, utts []recognizer.Utterance, typ string) (string, error) {
	return llm.AbstractiveSummary(ctx, b.c, joinText(utts), typ)
}

func (b *backend) Translate(ctx context.Context, utts []recognizer.Utterance, target string, o llm.TranslationOptions) ([]recognizer.Utterance, error) {
	return llm.Translate(ctx, b.c, utts, target, o)
}

// Answer uses the configured model, or a request's own model through a
// client made for this call.
func (b *backend) Answer(ctx context.Context, model, transcript string, prompts []string) ([]llm.PromptAnswer, error) {
	c := b.c
	if model != "" && model != b.cfg.Model {
		var err error
		if c, err = llm.New(llmClient(b.cfg, model)); err != nil {
			return nil, err
		}
		defer c.Close()
	}
	return llm.AnswerPrompts(ctx, c, transcript, prompts)
}

// addonError maps an add-on failure to the envelope's AddonError. Messages
// carry no transcript and no credential (the llm package's errors do not).
func addonError(err error) *transcript.AddonError {
	var be *llm.BackendError
	var le *languageError
	switch {
	case errors.As(err, &le):
		return &transcript.AddonError{StatusCode: 422, Exception: "UnsupportedLanguage", Message: le.Error()}
	case errors.Is(err, recognizer.ErrNotConfigured):
		return &transcript.AddonError{StatusCode: 501, Exception: "NotConfigured", Message: err.Error()}
	// The backend's address, its answers and the network error stay in the
	// log (Addons.envelope logs them): tenants get the class only.
	case errors.As(err, &be):
		return &transcript.AddonError{StatusCode: 502, Exception: "BackendError", Message: "the language-model backend answered an error"}
	case errors.Is(err, llm.ErrUnavailable):
		return &transcript.AddonError{StatusCode: 503, Exception: "BackendUnavailable", Message: "the language-model backend is unreachable"}
	case errors.Is(err, llm.ErrTimeout), errors.Is(err, context.DeadlineExceeded):
		return &transcript.AddonError{StatusCode: 504, Exception: "Timeout", Message: "the language-model backend did not answer in time"}
	case errors.Is(err, llm.ErrMalformed):
		return &transcript.AddonError{StatusCode: 502, Exception: "MalformedResponse", Message: "the language-model backend sent an unusable answer"}
	case errors.Is(err, llm.ErrTooLarge):
		return &transcript.AddonError{StatusCode: 413, Exception: "InputTooLarge", Message: err.Error()}
	case errors.Is(err, subtitles.ErrInvalidConfig), errors.Is(err, diarization.ErrConfig):
		return &transcript.AddonError{StatusCode: 400, Exception: "InvalidConfig", Message: err.Error()}
	case errors.Is(err, context.Canceled):
		return &transcript.AddonError{StatusCode: 499, Exception: "Cancelled", Message: err.Error()}
	case errors.Is(err, errcode.ErrAtCapacity):
		return &transcript.AddonError{StatusCode: 503, Exception: "AtCapacity", Message: err.Error()}
	case errors.Is(err, ErrEngineUnavailable): // a remote engine's speech translation
		return &transcript.AddonError{StatusCode: 503, Exception: "EngineUnavailable", Message: errcode.Message(err)}
	case errors.Is(err, ErrEngineFailed):
		return &transcript.AddonError{StatusCode: 502, Exception: "BackendError", Message: errcode.Message(err)}
	case errors.Is(err, errUnsupportedTypes):
		return &transcript.AddonError{StatusCode: 422, Exception: "UnsupportedEntityType", Message: err.Error()}
	case errors.Is(err, errAddonPanic):
		return &transcript.AddonError{StatusCode: 500, Exception: "InternalError", Message: "internal error"}
	}
	return &transcript.AddonError{StatusCode: 500, Exception: "InternalError", Message: "internal error"}
}

// backendDown reports whether err means the LLM backend failed (worth a
// warning to the operator) rather than the request.
func backendDown(err error) bool {
	var be *llm.BackendError
	return errors.As(err, &be) || errors.Is(err, llm.ErrUnavailable) || errors.Is(err, llm.ErrTimeout) || errors.Is(err, llm.ErrMalformed)
}

// envelope runs one add-on with a panic guard and timing and shapes its
// outcome: f returns the results, whether they are empty, and an error
// (results may still be set with an error, e.g. a partial translation).
func (a *Addons) envelope(name string, f func() (any, bool, error)) (env *transcript.Envelope) {
	start := time.Now()
	defer func() {
		if r := recover(); r != nil {
			a.log.Error("add-on panicked", "addon", name, "panic", r)
			env = &transcript.Envelope{IsEmpty: true, Error: addonError(errAddonPanic)}
		}
		env.ExecTime = transcript.Round3(time.Since(start).Seconds())
	}()
	results, empty, err := f()
	env = &transcript.Envelope{Success: err == nil, IsEmpty: empty, Results: results}
	if err != nil {
		env.Error = addonError(err)
		if backendDown(err) {
			a.log.Warn("add-on backend failed", "addon", name, "error", err)
		} else if env.Error.StatusCode == 500 {
			a.log.Error("add-on failed", "addon", name, "error", err)
		}
	}
	return env
}

// guard runs a transforming add-on that has no envelope (spelling,
// punctuation, redaction), keeping in on a panic or a result of the wrong
// length; the failure is returned for post_session_metadata.
func (a *Addons) guard(name string, in []recognizer.Utterance, f func([]recognizer.Utterance) []recognizer.Utterance) (out []recognizer.Utterance, err error) {
	defer func() {
		if r := recover(); r != nil {
			a.log.Error("add-on panicked", "addon", name, "panic", r)
			out, err = in, errAddonPanic
		}
	}()
	out = f(in)
	if len(out) != len(in) {
		return in, fmt.Errorf("pipeline: %s returned %d utterances for %d", name, len(out), len(in))
	}
	return out, nil
}

// orBuiltin returns a, or the built-ins without a backend when a is nil.
func (a *Addons) orBuiltin() *Addons {
	if a == nil {
		return builtinAddons()
	}
	return a
}
