package remote

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"time"

	"github.com/earshot-dev/earshot/recognizer"
	"github.com/earshot-dev/earshot/recognizer/openai"
)

// minSamples is the least audio worth a request (0.1 s): Finish returns an
// empty utterance for less without asking the server.
const minSamples = recognizer.SampleRate / 10

// maxSamples is MaxAudio in samples.
const maxSamples = int(MaxAudio/time.Second) * recognizer.SampleRate

// Engine sends audio to an OpenAI-compatible transcription server. It is a
// pool of Config.Capacity request slots: each Stream holds one from
// NewStream to Close, each Translate call for its duration. Safe for
// concurrent use.
//
// The Engine is a lifetime: Close cancels the requests in flight.
type Engine struct {
	cfg     Config
	logger  *slog.Logger
	client  *openai.Client // the server, with the one retry rule
	breaker *breaker
	slots   chan struct{} // one token per open stream or Translate call; capacity cfg.Capacity
	// observer is told about every finished request; nil when none.
	observer func(RequestStat)

	life context.Context    // cancelled by Close; parent of every request
	stop context.CancelFunc // cancels life
}

var _ recognizer.Engine = (*Engine)(nil)

// New fills c's zero fields with defaults (SetDefaults), validates it and
// returns an engine. It makes no connection and starts no goroutine; the
// server is first contacted by the first Finish, Partial or Translate. A
// nil logger keeps the engine silent. observe, when not nil, is called
// after every request (from the goroutine that made it, partial requests
// included, so it must be safe for concurrent use and must not block): it
// feeds metrics.
//
// Requests go through an openai.Client (one retry rule for every
// OpenAI-compatible backend) that keeps up to Capacity idle connections.
func New(c Config, logger *slog.Logger, observe func(RequestStat)) (*Engine, error) {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	c.Languages = slices.Clone(c.Languages)
	c.SetDefaults()
	if err := c.Validate(); err != nil {
		return nil, err
	}
	life, stop := context.WithCancel(context.Background())
	return &Engine{
		cfg:      c,
		logger:   logger,
		client:   openai.NewClient(c.Endpoint, openai.Options{MaxIdleConns: c.Capacity, MaxResponseBytes: maxResponseBytes}),
		breaker:  newBreaker(c.BreakerFailures, c.BreakerCooldown),
		slots:    make(chan struct{}, c.Capacity),
		observer: observe,
		life:     life,
		stop:     stop,
	}, nil
}

// Name returns Config.Name.
func (e *Engine) Name() string { return e.cfg.Name }

// Languages returns Config.Languages (every SPEC.md §2.6 code when it was
// empty, in that list's order).
func (e *Engine) Languages() []string { return slices.Clone(e.cfg.Languages) }

// Stats reports the slots: how many exist and how many are taken.
func (e *Engine) Stats() (total, busy int) { return cap(e.slots), len(e.slots) }

// NewStream takes a request slot, waiting for one until ctx ends; then it
// returns an error wrapping recognizer.ErrAtCapacity and the context's
// cause. o.Language must be one of Languages, or "" to let the server
// detect the language (unlike engines with one language, "" does not mean
// the first of Languages); other languages give recognizer.ErrLanguage, a
// closed engine recognizer.ErrClosed. The stream's requests carry
// Config.Prompt.
//
// o.Prompt (custom vocabulary of one job) is appended to Config.Prompt,
// separated by a space; the whole is cut to MaxPromptBytes. o.Vocabulary
// is not read: the caller words it as the prompt.
func (e *Engine) NewStream(ctx context.Context, o recognizer.StreamOptions) (recognizer.Stream, error) {
	if o.Language != "" && !slices.Contains(e.cfg.Languages, o.Language) {
		return nil, fmt.Errorf("remote: language %q (served: %s): %w", o.Language,
			strings.Join(e.cfg.Languages, " "), recognizer.ErrLanguage)
	}
	if err := e.acquire(ctx); err != nil {
		return nil, err
	}
	return &Stream{e: e, lang: o.Language, prompt: e.prompt(o.Prompt)}, nil
}

// Translate sends pcm (16 kHz mono) to {URL}/audio/translations and
// returns its English translation as one utterance (Language "en"), with
// times in seconds from pcm's first sample. It takes a request slot like
// NewStream (ErrAtCapacity when ctx ends first) and retries like
// Stream.Finish. prompt (English text guiding style or spelling) is
// appended to Config.Prompt. Less than 0.1 s of audio gives an empty
// utterance without a request; more than MaxAudio wraps ErrTooLong.
//
// OpenAI's translation endpoint has no word timestamps, so unless the
// server sends words anyway, word times are spread over each segment in
// proportion to word length.
func (e *Engine) Translate(ctx context.Context, pcm []int16, prompt string) (recognizer.Utterance, error) {
	empty := recognizer.Utterance{Language: "en"}
	if len(pcm) > maxSamples {
		return empty, fmt.Errorf("remote: translate %d samples > limit %d (%v): %w", len(pcm), maxSamples, MaxAudio, ErrTooLong)
	}
	if err := e.acquire(ctx); err != nil {
		return empty, err
	}
	defer e.release()
	if len(pcm) < minSamples {
		return empty, nil
	}
	rctx, cancel := e.requestContext(ctx)
	defer cancel()
	res, err := e.send(rctx, request{action: "translate", path: "/audio/translations", pcm: pcm, prompt: e.prompt(prompt)}, false)
	if err != nil {
		return empty, err
	}
	u := toUtterance(res, float64(len(pcm))/recognizer.SampleRate, "en")
	u.Language = "en"
	return u, nil
}

// Close cancels the requests in flight (their callers get errors), makes
// NewStream and Translate fail with recognizer.ErrClosed and drops idle
// connections. Streams still open must be closed by their owners; Close
// does not wait for them. Idempotent; returns nil.
func (e *Engine) Close() error {
	e.stop()
	e.client.Close()
	return nil
}

// acquire takes a slot, waiting until ctx ends or the engine closes.
func (e *Engine) acquire(ctx context.Context) error {
	if e.life.Err() != nil {
		return fmt.Errorf("remote: %w", recognizer.ErrClosed)
	}
	select {
	case e.slots <- struct{}{}:
		return nil
	default:
	}
	e.logger.Debug("remote slots taken, waiting", "capacity", cap(e.slots))
	select {
	case e.slots <- struct{}{}:
		return nil
	case <-e.life.Done():
		return fmt.Errorf("remote: %w", recognizer.ErrClosed)
	case <-ctx.Done():
		return fmt.Errorf("remote: wait for a request slot: %w (%w)", recognizer.ErrAtCapacity, context.Cause(ctx))
	}
}

func (e *Engine) release() { <-e.slots }

// requestContext returns a context that ends with ctx or with the engine.
func (e *Engine) requestContext(ctx context.Context) (context.Context, context.CancelFunc) {
	rctx, cancel := context.WithCancelCause(ctx)
	stop := context.AfterFunc(e.life, func() { cancel(fmt.Errorf("remote: engine %w", recognizer.ErrClosed)) })
	return rctx, func() {
		stop()
		cancel(context.Canceled)
	}
}

// prompt joins Config.Prompt and extra, cut to MaxPromptBytes at a rune
// boundary.
func (e *Engine) prompt(extra string) string {
	p := strings.TrimSpace(strings.Join([]string{e.cfg.Prompt, strings.TrimSpace(extra)}, " "))
	if len(p) <= MaxPromptBytes {
		return p
	}
	cut := MaxPromptBytes
	for cut > 0 && !isRuneStart(p[cut]) {
		cut--
	}
	return p[:cut]
}
