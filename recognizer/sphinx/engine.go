package sphinx

import (
	"context"
	"fmt"
	"log/slog"
	"sync"

	"github.com/earshot-dev/earshot/recognizer"
)

// Engine is a pool of PocketSphinx decoders behind recognizer.Engine.
// NewStream checks a decoder out; Stream.Close returns it. Safe for
// concurrent use.
type Engine struct {
	cfg    Config
	logger *slog.Logger
	idle   chan *decoder // free decoders; capacity cfg.Decoders, so a return never blocks
	done   chan struct{} // closed by Close; wakes waiters in NewStream

	mu     sync.Mutex
	closed bool // guarded by mu
	total  int  // guarded by mu; decoders not yet freed
	busy   int  // guarded by mu; decoders checked out
}

var _ recognizer.Engine = (*Engine)(nil)

// New loads cfg.Decoders decoders, one after another (each reads the
// model: about 40 MB and a fraction of a second). A nil logger keeps the
// engine silent; PocketSphinx's own log output is switched off unless the
// logger is enabled for debug, in which case the C library writes to
// stderr. On error New frees what it had loaded.
func New(cfg Config, logger *slog.Logger) (*Engine, error) {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if !logger.Enabled(context.Background(), slog.LevelDebug) {
		silenceLogs()
	}
	e := &Engine{
		cfg:    cfg,
		logger: logger,
		idle:   make(chan *decoder, cfg.Decoders),
		done:   make(chan struct{}),
	}
	for i := range cfg.Decoders {
		d, err := newDecoder(cfg)
		if err != nil {
			e.Close()
			return nil, fmt.Errorf("load decoder %d of %d: %w", i+1, cfg.Decoders, err)
		}
		e.idle <- d
		e.total++
	}
	logger.Debug("sphinx decoders loaded", "decoders", cfg.Decoders, "hmm", cfg.HMM, "lm", cfg.LM)
	return e, nil
}

// Name returns "sphinx".
func (e *Engine) Name() string { return "sphinx" }

// Languages returns the one language the model serves (Config.Language).
func (e *Engine) Languages() []string { return []string{e.cfg.Language} }

// Stats reports the pool size and how many decoders are checked out. After
// Close, total counts the decoders still held by open streams.
func (e *Engine) Stats() (total, busy int) {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.total, e.busy
}

// NewStream checks out a decoder, waiting for one until ctx ends; then it
// returns an error wrapping recognizer.ErrAtCapacity and the context's
// cause. A language other than Config.Language ("" means it) gives
// recognizer.ErrLanguage; a closed engine recognizer.ErrClosed.
func (e *Engine) NewStream(ctx context.Context, o recognizer.StreamOptions) (recognizer.Stream, error) {
	lang := o.Language
	if lang == "" {
		lang = e.cfg.Language
	}
	if lang != e.cfg.Language {
		return nil, fmt.Errorf("sphinx: language %q (installed: %s): %w", o.Language, e.cfg.Language, recognizer.ErrLanguage)
	}
	if e.isClosed() {
		return nil, recognizer.ErrClosed
	}
	var d *decoder
	select {
	case d = <-e.idle:
	default:
		e.logger.Debug("sphinx pool saturated, waiting", "decoders", e.cfg.Decoders)
		select {
		case d = <-e.idle:
		case <-e.done:
			return nil, recognizer.ErrClosed
		case <-ctx.Done():
			return nil, fmt.Errorf("sphinx: wait for decoder: %w (%w)", recognizer.ErrAtCapacity, context.Cause(ctx))
		}
	}
	e.mu.Lock()
	if e.closed {
		e.freeLocked(d)
		e.mu.Unlock()
		return nil, recognizer.ErrClosed
	}
	e.busy++
	e.mu.Unlock()
	d.reset()
	return &Stream{e: e, d: d, lang: lang}, nil
}

// release takes a decoder back from a closed stream: to the idle pool, or
// freed if the engine was closed meanwhile.
func (e *Engine) release(d *decoder) {
	d.reset()
	e.mu.Lock()
	defer e.mu.Unlock()
	e.busy--
	if e.closed {
		e.freeLocked(d)
		return
	}
	e.idle <- d // never blocks: at most cfg.Decoders decoders exist
}

func (e *Engine) freeLocked(d *decoder) {
	d.free()
	e.total--
}

func (e *Engine) isClosed() bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.closed
}

// Close frees the idle decoders at once and makes NewStream fail with
// recognizer.ErrClosed (waiters included). It does not wait for open
// streams: each one's decoder is freed when that stream is closed, so every
// stream must still be closed. Close is idempotent and returns nil.
func (e *Engine) Close() error {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.closed {
		return nil
	}
	e.closed = true
	close(e.done)
	for {
		select {
		case d := <-e.idle:
			e.freeLocked(d)
		default:
			return nil
		}
	}
}

// errClosedStream wraps recognizer.ErrClosed for stream calls after Close.
var errClosedStream = fmt.Errorf("sphinx: stream: %w", recognizer.ErrClosed)
