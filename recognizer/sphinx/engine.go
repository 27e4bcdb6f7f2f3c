package sphinx

import (
	"context"
	"fmt"
	"log/slog"
	"path/filepath"
	"slices"
	"sync"
	"time"

	"github.com/earshot-dev/earshot/recognizer"
)

// Engine is a pool of PocketSphinx decoders behind recognizer.Engine.
// NewStream checks a decoder out; Stream.Close returns it. Safe for
// concurrent use.
//
// A stream opened with a vocabulary changes its decoder's dictionary and
// language model for good, so such a decoder is kept for that vocabulary:
// NewStream prefers an idle decoder holding the stream's vocabulary, then
// a clean one, and replaces a decoder holding another vocabulary by a
// freshly loaded one (about 0.7 s of model loading), so no stream ever
// sees another's words.
type Engine struct {
	cfg    Config
	logger *slog.Logger
	lex    *lexiconFile // read at the first vocabulary
	dict   []byte       // the decoders' dictionary (searchDictionary)
	// dictPath is dict's in-memory file (dictFile), "" where there is none.
	dictPath string
	cpu      *recognizer.CPU // the process's CPU policy: its live decodes at once (LiveDecode); nil: no limit
	share    *tenantShare    // the decoders one tenant may hold (share.go); nil: no bound
	slots    chan struct{}   // one token per checked-out decoder; capacity cfg.Decoders
	done     chan struct{}   // closed by Close; wakes waiters in NewStream
	warmed   chan struct{}   // closed when the background loading ended (see warm)

	mu     sync.Mutex
	closed bool       // guarded by mu
	idle   []*decoder // guarded by mu; decoders not checked out
	total  int        // guarded by mu; decoders not yet freed
	busy   int        // guarded by mu; decoders checked out
	// pending counts what the background load has still to do: decoders
	// to load and searches to make ahead of need (see warm and Loading);
	// guarded by mu.
	pending int
}

var _ recognizer.Engine = (*Engine)(nil)

// New loads cfg.Decoders decoders, one after another (each reads the
// model: about 80 MB and a fifth of a second; Config.Preload and
// Config.OnDemand load fewer), after reading the dictionary for
// vocabularies and its words of the language model (searchDictionary).
// A nil logger keeps the engine silent; PocketSphinx's own log output is
// switched off unless the logger is enabled for debug, in which case the
// C library writes to stderr. On error New frees what it had loaded.
// cpu is the process's CPU policy, which every engine of the process
// shares (its live decodes run through cpu.LiveDecode; the composition
// root makes it with cfg.LiveDecodes); nil runs them at once.
func New(cfg Config, cpu *recognizer.CPU, logger *slog.Logger) (*Engine, error) {
	return newEngineLike(cfg, nil, cpu, logger)
}

// newEngineLike is New, with the lexicon and dictionary of like when like has
// cfg's dictionary and language model (they are read-only once loaded).
func newEngineLike(cfg Config, like *Engine, cpu *recognizer.CPU, logger *slog.Logger) (*Engine, error) {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if !logger.Enabled(context.Background(), slog.LevelDebug) {
		silenceLogs()
	}
	var lex *lexiconFile
	var dict []byte
	if like != nil && like.cfg.Dict == cfg.Dict && like.cfg.LM == cfg.LM {
		lex, dict = like.lex, like.dict
	} else {
		var err error
		if dict, err = searchDictionary(cfg.Dict, cfg.LM); err != nil {
			return nil, err
		}
		lex = newLexiconFile(cfg.Dict)
	}
	// Every decoder of the pool reads the dictionary from the file made now.
	dictPath, err := dictFile(dict)
	if err != nil {
		return nil, fmt.Errorf("%w: dict: %w", ErrInit, err)
	}
	e := &Engine{
		cfg:      cfg,
		logger:   logger,
		lex:      lex,
		dict:     dict,
		dictPath: dictPath,
		cpu:      cpu,
		share:    newTenantShare(cfg),
		slots:    make(chan struct{}, cfg.Decoders),
		done:     make(chan struct{}),
		warmed:   make(chan struct{}),
	}
	preload := cfg.Decoders
	switch {
	case cfg.OnDemand || cfg.LoadOnDemand:
		preload = 0
	case cfg.Preload > 0:
		preload = min(cfg.Preload, cfg.Decoders)
	}
	for i := range preload {
		d, err := newDecoder(cfg, dict, dictPath)
		if err != nil {
			close(e.warmed) // no background load was started
			e.Close()
			return nil, fmt.Errorf("load decoder %d of %d: %w", i+1, cfg.Decoders, err)
		}
		e.idle = append(e.idle, d)
		e.total++
	}
	logger.Debug("sphinx decoders loaded", "decoders", preload, "pool", cfg.Decoders, "hmm", cfg.HMM, "lm", cfg.LM)
	if cfg.OnDemand || cfg.LoadOnDemand {
		close(e.warmed) // nothing loads ahead of need
		return e, nil
	}
	e.pending = cfg.Decoders - preload
	if cfg.leanMaxHMMs() > 0 {
		e.pending += cfg.Decoders
	}
	go e.warm()
	return e, nil
}

// warm loads the decoders New did not (Config.Preload) in the background,
// one at a time, until the pool is full or the engine is closed. A call
// that arrives on a just-started daemon then finds its decoder loaded
// instead of waiting most of a second (several seconds when calls arrive
// together) for its model load; before, the first finals of the 5th to
// 8th concurrent call came 4 to 7 s late (livebench, issue 14). A stream
// that finds no idle decoder still loads one itself (NewStream); release
// frees a decoder that would take the pool past Config.Decoders.
func (e *Engine) warm() {
	defer close(e.warmed)
	defer func() {
		e.mu.Lock()
		e.pending = 0
		e.mu.Unlock()
	}()
	for {
		e.mu.Lock()
		if e.closed || e.total >= e.cfg.Decoders {
			e.mu.Unlock()
			break
		}
		e.total++ // reserved: NewStream does not load past the pool for it
		e.mu.Unlock()
		start := time.Now()
		d, err := newDecoder(e.cfg, e.dict, e.dictPath)
		e.mu.Lock()
		switch {
		case err != nil:
			e.total--
			e.mu.Unlock()
			e.logger.Warn("sphinx background decoder load failed", "err", err)
			return
		case e.closed:
			e.freeLocked(d)
			e.mu.Unlock()
			return
		}
		e.idle = append(e.idle, d)
		e.pending--
		e.mu.Unlock()
		e.logger.Debug("sphinx decoder loaded in the background", "elapsed_ms", time.Since(start).Milliseconds())
	}
	if e.cfg.leanMaxHMMs() > 0 {
		e.prepareSearches()
	}
}

// prepareSearches makes, one decoder at a time, the lean search
// (Config.OverloadMaxHMMsPerFrame) of each idle decoder ahead of need. The
// decoder is taken out of the pool meanwhile (a stream that finds no idle
// decoder then loads one of its own, as while the pool loads). It ends
// when every idle decoder has it, a search could not be made, or the
// engine is closed.
func (e *Engine) prepareSearches() {
	needs := func(d *decoder) bool { return d.vocab == "" && !d.hasLean }
	for {
		e.mu.Lock()
		i := slices.IndexFunc(e.idle, needs)
		if e.closed || i < 0 {
			e.mu.Unlock()
			return
		}
		d := e.idle[i]
		e.idle = slices.Delete(e.idle, i, i+1)
		e.mu.Unlock()
		start := time.Now()
		ok := d.makeLean()
		e.mu.Lock()
		if e.closed {
			e.freeLocked(d)
		} else {
			e.idle = append(e.idle, d)
			e.pending--
		}
		e.mu.Unlock()
		if !ok {
			e.logger.Warn("sphinx lean search could not be made in the background")
			return
		}
		e.logger.Debug("sphinx lean search made in the background", "elapsed_ms", time.Since(start).Milliseconds())
	}
}

// Loading is how many decoders the background load (see warm) has still
// to load, plus the lean searches it has still to make ahead of need
// (prepareSearches): 0 once it has ended (the pool is full, a load
// failed or the engine was closed). Until then the decoders it loads take
// CPU from whatever else runs, so a benchmark waits for 0 before it
// measures (the earshot_decoders_loading gauge). A nil engine loads
// nothing.
func (e *Engine) Loading() int {
	if e == nil {
		return 0
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.pending
}

// Name returns "sphinx".
func (e *Engine) Name() string { return "sphinx" }

// Languages returns the one language the model serves (Config.Language).
func (e *Engine) Languages() []string { return []string{e.cfg.Language} }

// Ready reports whether the pool can serve: a decoder is loaded, or the
// pool loads its decoders when first needed (Config.LoadOnDemand,
// Config.OnDemand), having read its dictionary and language model's words
// at New. Until 2026-11-30 a daemon that loads on demand still loaded
// decoders at start, and readiness was "a decoder loaded".
func (e *Engine) Ready() bool {
	if e.cfg.LoadOnDemand || e.cfg.OnDemand {
		return true
	}
	total, _ := e.Stats()
	return total > 0
}

// Stats reports the pool size and how many decoders are checked out. After
// Close, total counts the decoders still held by open streams.
func (e *Engine) Stats() (total, busy int) {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.total, e.busy
}

// NewStream checks out a decoder, waiting for one until ctx ends; then it
// returns an error wrapping recognizer.ErrAtCapacity and the context's
// cause. A stream of a tenant (o.Tenant) that holds its share of the
// pool (Config.TenantShare) waits likewise, even with decoders idle. A
// language other than Config.Language ("" means it) gives
// recognizer.ErrLanguage; a closed engine recognizer.ErrClosed.
//
// With o.Vocabulary the stream's decoder knows those words (see
// CheckVocabulary for what is left out); putting them on a decoder costs
// a few milliseconds, or a model load when the decoder first has to be
// replaced (see Engine). A decoder that refuses them is freed and the
// error wraps ErrVocabulary.
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
	var voc *vocabulary
	if len(o.Vocabulary) > 0 {
		lx, err := e.lex.get()
		if err != nil {
			return nil, fmt.Errorf("%w: %w", ErrVocabulary, err)
		}
		voc = lx.resolveVocabulary(o.Vocabulary)
	}
	key := ""
	if voc != nil {
		key = voc.key
	}
	// The tenant's share first: a tenant at it waits without taking a
	// slot another tenant's stream could have.
	if err := e.share.take(ctx, o.Tenant, e.done); err != nil {
		return nil, err
	}
	select {
	case e.slots <- struct{}{}:
	default:
		e.logger.Debug("sphinx pool saturated, waiting", "decoders", e.cfg.Decoders)
		select {
		case e.slots <- struct{}{}:
		case <-e.done:
			e.share.give(o.Tenant)
			return nil, recognizer.ErrClosed
		case <-ctx.Done():
			e.share.give(o.Tenant)
			return nil, fmt.Errorf("sphinx: wait for decoder: %w (%w)", recognizer.ErrAtCapacity, context.Cause(ctx))
		}
	}
	e.mu.Lock()
	if e.closed {
		e.mu.Unlock()
		<-e.slots
		e.share.give(o.Tenant)
		return nil, recognizer.ErrClosed
	}
	d := e.takeLocked(key)
	e.busy++
	if d != nil && d.vocab != key && d.vocab != "" {
		e.freeLocked(d) // it holds another stream's words
		d = nil
	}
	e.mu.Unlock()
	d, err := e.prepare(d, voc)
	if err != nil {
		e.mu.Lock()
		e.busy--
		e.mu.Unlock()
		<-e.slots
		e.share.give(o.Tenant)
		return nil, err
	}
	d.reset()
	if o.Record {
		d.useRecord()
	}
	return &Stream{e: e, d: d, lang: lang, tenant: o.Tenant, record: o.Record}, nil
}

// takeLocked removes and returns the idle decoder best suited to a
// stream with vocabulary key: one holding key, else a clean one, else any;
// nil when none is idle (a replaced decoder is loaded when next needed).
func (e *Engine) takeLocked(key string) *decoder {
	best := -1
	for i, d := range e.idle {
		if d.vocab == key {
			best = i
			break
		}
		if best < 0 || d.vocab == "" && e.idle[best].vocab != "" {
			best = i
		}
	}
	if best < 0 {
		return nil
	}
	d := e.idle[best]
	e.idle = slices.Delete(e.idle, best, best+1)
	return d
}

// prepare loads a decoder when d is nil and applies voc when d does not
// hold it yet. On error nothing is left allocated.
func (e *Engine) prepare(d *decoder, voc *vocabulary) (*decoder, error) {
	if d == nil {
		start := time.Now()
		nd, err := newDecoder(e.cfg, e.dict, e.dictPath)
		if err != nil {
			return nil, err
		}
		e.logger.Debug("sphinx decoder loaded", "elapsed_ms", time.Since(start).Milliseconds())
		e.mu.Lock()
		e.total++
		e.mu.Unlock()
		d = nd
	}
	if voc == nil || d.vocab == voc.key {
		return d, nil
	}
	start := time.Now()
	if err := d.applyVocabulary(e.dict, voc.key, voc.dictionaryEntries(d.knows), voc.arpa(d.lw())); err != nil {
		e.mu.Lock()
		e.freeLocked(d)
		e.mu.Unlock()
		return nil, err
	}
	e.logger.Debug("sphinx vocabulary applied", "words", len(voc.add), "boosted", len(voc.boost),
		"elapsed_ms", time.Since(start).Milliseconds())
	return d, nil
}

// CheckVocabulary resolves v as NewStream does and returns what it leaves
// out and why (a pronunciation with a phone the model lacks, a word with
// nothing to pronounce), one error per problem; nil when everything is
// used. It needs no decoder.
func (e *Engine) CheckVocabulary(v []recognizer.VocabularyWord) []error {
	lx, err := e.lex.get()
	if err != nil {
		// Its problems reach the client (a result's note): the file and
		// the system's error stay in the log.
		e.logger.Warn("sphinx lexicon not read", "dict", e.cfg.Dict, "err", err)
		return []error{fmt.Errorf("%w: the pronunciation dictionary could not be read", ErrVocabulary)}
	}
	if voc := lx.resolveVocabulary(v); voc != nil {
		return voc.problems
	}
	var errs []error
	for _, it := range v {
		if len(splitWords(it.Value)) == 0 {
			errs = append(errs, fmt.Errorf("sphinx: vocabulary %q: no word in it", it.Value))
		}
	}
	return errs
}

// release takes a decoder back from a closed stream of tenant: to the
// idle pool, or freed if the engine was closed meanwhile.
func (e *Engine) release(d *decoder, tenant string) {
	d.reset()
	e.mu.Lock()
	e.busy--
	if e.closed || e.total > e.cfg.Decoders {
		e.freeLocked(d)
	} else {
		e.idle = append(e.idle, d)
	}
	e.mu.Unlock()
	<-e.slots
	e.share.give(tenant)
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
// recognizer.ErrClosed (waiters included). It waits for a background load
// in progress (see warm) to end, not for open streams: each one's decoder
// is freed when that stream is closed, so every stream must still be
// closed. Close is idempotent and returns nil.
func (e *Engine) Close() error {
	if e == nil {
		return nil
	}
	e.mu.Lock()
	if e.closed {
		e.mu.Unlock()
		return nil
	}
	e.closed = true
	close(e.done)
	for _, d := range e.idle {
		e.freeLocked(d)
	}
	e.idle = nil
	e.mu.Unlock()
	<-e.warmed
	return nil
}

// errClosedStream wraps recognizer.ErrClosed for stream calls after Close.
var errClosedStream = fmt.Errorf("sphinx: stream: %w", recognizer.ErrClosed)

// NewLive loads the wideband model's live pool of cfg (see Config.Live):
// the decoders of live streams of wideband audio.
func NewLive(cfg Config, cpu *recognizer.CPU, logger *slog.Logger) (*Engine, error) {
	return newLive(cfg, nil, cpu, logger)
}

// Live is NewLive on e's configuration, beside e, whose decoders then
// serve whole recordings only. The pool shares e's lexicon and
// dictionary text.
func (e *Engine) Live(logger *slog.Logger) (*Engine, error) {
	return newLive(e.cfg, e, e.cpu, logger)
}

func newLive(cfg Config, like *Engine, cpu *recognizer.CPU, logger *slog.Logger) (*Engine, error) {
	l, err := newEngineLike(cfg.Live(), like, cpu, logger)
	if err != nil {
		return nil, fmt.Errorf("live pool: %w", err)
	}
	return l, nil
}

// NewTelephone loads the telephone-band pool of cfg for live calls (see
// Config.Telephone), or with batch its batch pool (Config.TelephoneBatch):
// nil and no error when cfg has no telephone model.
func NewTelephone(cfg Config, batch bool, cpu *recognizer.CPU, logger *slog.Logger) (*Engine, error) {
	return newTelephone(cfg, batch, nil, cpu, logger)
}

// SetTenantShare turns the pool's per-tenant bound (Config.TenantShare,
// share.go) on or off: the daemon has it on while more than one account can
// open live sessions. Nil-safe, and a no-op on a pool without the bound.
func (e *Engine) SetTenantShare(on bool) {
	if e != nil {
		e.share.setActive(on)
	}
}

// Telephone is NewTelephone on e's configuration. The pool shares e's
// lexicon and dictionary text instead of reading its own (about 15 MB of
// heap each).
func (e *Engine) Telephone(batch bool, logger *slog.Logger) (*Engine, error) {
	return newTelephone(e.cfg, batch, e, e.cpu, logger)
}

func newTelephone(cfg Config, batch bool, like *Engine, cpu *recognizer.CPU, logger *slog.Logger) (*Engine, error) {
	tc, ok := cfg.Telephone()
	if batch {
		tc, ok = cfg.TelephoneBatch()
	}
	if !ok {
		return nil, nil
	}
	e, err := newEngineLike(tc, like, cpu, logger)
	if err != nil {
		return nil, fmt.Errorf("telephone model %s: %w", tc.HMM, err)
	}
	return e, nil
}

// AcousticModel names the engine's acoustic model: its directory's base
// name ("en-us", "en-us-telephone").
func (e *Engine) AcousticModel() string { return filepath.Base(e.cfg.HMM) }
