package pipeline

import (
	"errors"
	"fmt"
	"log/slog"

	"github.com/earshot-dev/earshot/ingest/media"
	"github.com/earshot-dev/earshot/recognizer"
	"github.com/earshot-dev/earshot/recognizer/sphinx"
)

// Config is what New loads: the sections of the daemon's configuration
// the pipeline reads (sphinx, engines, addons, and the media limits),
// each after its SetDefaults and Validate.
type Config struct {
	// Sphinx is the embedded engine and its live and telephone-band pools.
	Sphinx sphinx.Config
	// Engines are the remote engines, the routes and the fallback policy.
	Engines EnginesConfig
	// Addons is the add-ons' language-model backend.
	Addons AddonsConfig
	// Media bounds and decodes the files TranscribeFile reads.
	Media media.Options
	// Live: the pipeline serves live sessions too (the daemon; not
	// `earshotd transcribe`), so the live pools are loaded: the wideband
	// model's (Engine.Live) and the telephone model's (without Live,
	// neither is).
	Live bool
}

// New loads the pipeline of cfg: the embedded engine, its live and
// telephone-band pools, the engine registry and the add-ons, wired into
// one Transcriber. It starts no goroutine; on error it releases what it
// had loaded. Close releases it all.
//
// cpu is the process's CPU admission policy (recognizer.CPU), which the
// embedded engine and its pools share; nil admits every decode at once.
func New(cfg Config, cpu *recognizer.CPU, logger *slog.Logger) (*Transcriber, error) {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	rlog := logger.With("component", "recognizer")
	t := &Transcriber{Media: cfg.Media, cpu: cpu}
	fail := func(what string, err error) (*Transcriber, error) {
		t.Close()
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	var err error
	if t.embedded, err = sphinx.New(cfg.Sphinx, cpu, rlog); err != nil {
		return fail("load engine", err)
	}
	tlog := rlog.With("model", "telephone")
	if cfg.Live {
		// Only live sessions use the live pools.
		if t.live, err = t.embedded.Live(rlog.With("pool", "live")); err != nil {
			return fail("load engine", err)
		}
		if t.tel, err = t.embedded.Telephone(false, tlog); err != nil {
			return fail("load engine", err)
		}
	}
	if t.telBatch, err = t.embedded.Telephone(true, tlog.With("pool", "batch")); err != nil {
		return fail("load engine", err)
	}
	if t.Engines, err = NewEngines(t.embedded, cfg.Engines, rlog); err != nil {
		return fail("load engines", err)
	}
	t.Engines.SetPools(t.poolSet())
	if t.Addons, err = NewAddons(cfg.Addons, logger.With("component", "addons")); err != nil {
		return fail("wire add-ons", err)
	}
	return t, nil
}

// poolSet is the embedded engine's pools beside its own, as loaded.
func (t *Transcriber) poolSet() Pools {
	return Pools{Live: engine(t.live), Telephone: engine(t.tel), TelephoneBatch: engine(t.telBatch)}
}

// engine is e as a recognizer.Engine: a nil interface for a nil pool, not
// a nil *sphinx.Engine.
func engine(e *sphinx.Engine) recognizer.Engine {
	if e == nil {
		return nil
	}
	return e
}

// Close releases the engines and the add-ons New loaded. Call it once
// nothing transcribes any more (after the daemon's Run returned). It
// releases a partly loaded Transcriber too (New's failures).
func (t *Transcriber) Close() error {
	var errs []error
	if t.Engines != nil {
		errs = append(errs, t.Engines.Close())
	}
	for _, e := range t.pools() {
		errs = append(errs, e.Close())
	}
	return errors.Join(append(errs, t.Addons.Close())...)
}

// pools are the embedded engine's loaded pools (Pools.named, the one
// list): "wideband" (whole recordings), "live" (wideband live streams),
// "telephone" (live calls) and "telephone_batch" (whole telephone-band
// recordings).
func (t *Transcriber) pools() []*sphinx.Engine {
	var out []*sphinx.Engine
	for _, n := range t.poolSet().named(engine(t.embedded)) {
		if e, ok := n.en.(*sphinx.Engine); ok {
			out = append(out, e)
		}
	}
	return out
}

// Ready reports whether the embedded engine can serve (sphinx.Engine.Ready).
func (t *Transcriber) Ready() bool { return t.embedded.Ready() }

// Stats is the embedded engine's decoder pool: decoders loaded and busy.
func (t *Transcriber) Stats() (total, busy int) { return t.embedded.Stats() }

// EachPool calls fn with the name, decoders loaded and decoders busy of
// each loaded pool of the embedded engine: the pools GET /v2/engines lists
// (Engines.poolInfo), so the metric and the listing agree.
func (t *Transcriber) EachPool(fn func(pool string, total, busy int)) {
	for _, p := range t.Engines.poolInfo() {
		fn(p.Name, p.Decoders, p.Busy)
	}
}

// SetTenantShare turns each pool's per-account bound (live.decoder_share)
// on or off (sphinx.Engine.SetTenantShare).
func (t *Transcriber) SetTenantShare(on bool) {
	for _, e := range t.pools() {
		e.SetTenantShare(on)
	}
}

// Loading is how many decoders the embedded engine's pools have still to
// load in the background after New (sphinx.Engine.Loading).
func (t *Transcriber) Loading() int {
	n := 0
	for _, e := range t.pools() {
		n += e.Loading()
	}
	return n
}

// TelephoneModel names the telephone-band pool's acoustic model, "" when
// none is installed.
func (t *Transcriber) TelephoneModel() string {
	switch {
	case t.tel != nil:
		return t.tel.AcousticModel()
	case t.telBatch != nil:
		return t.telBatch.AcousticModel()
	}
	return ""
}
