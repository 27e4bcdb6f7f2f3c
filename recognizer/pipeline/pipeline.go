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
	// Sphinx is the embedded engine and its telephone-band pool.
	Sphinx sphinx.Config
	// Engines are the remote engines, the routes and the fallback policy.
	Engines EnginesConfig
	// Addons is the add-ons' language-model backend.
	Addons AddonsConfig
	// Media bounds and decodes the files TranscribeFile reads.
	Media media.Options
	// Live: the pipeline serves live sessions too (the daemon; not
	// `earshotd transcribe`), so the wideband pool readies its decoders
	// for them in the background (sphinx.Config.PrepareFirstPass) and the
	// telephone model's live pool is loaded (without it, none is).
	Live bool
}

// New loads the pipeline of cfg: the embedded engine, its telephone-band
// pool, the engine registry and the add-ons, wired into one Transcriber.
// It starts no goroutine; on error it releases what it had loaded. Close
// releases it all.
func New(cfg Config, logger *slog.Logger) (*Transcriber, error) {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	wide := cfg.Sphinx
	wide.PrepareFirstPass = cfg.Live
	eng, err := sphinx.New(wide, logger.With("component", "recognizer"))
	if err != nil {
		return nil, fmt.Errorf("load engine: %w", err)
	}
	tlog := logger.With("component", "recognizer", "model", "telephone")
	var tel *sphinx.Engine
	if cfg.Live {
		// Only live calls use the telephone live pool.
		if tel, err = eng.Telephone(false, tlog); err != nil {
			eng.Close()
			return nil, fmt.Errorf("load engine: %w", err)
		}
	}
	telBatch, err := eng.Telephone(true, tlog.With("pool", "batch"))
	if err != nil {
		tel.Close()
		eng.Close()
		return nil, fmt.Errorf("load engine: %w", err)
	}
	engines, err := NewEngines(eng, cfg.Engines, logger.With("component", "recognizer"))
	if err != nil {
		telBatch.Close()
		tel.Close()
		eng.Close()
		return nil, fmt.Errorf("load engines: %w", err)
	}
	if telBatch != nil {
		var live recognizer.Engine // a nil interface, not a nil *sphinx.Engine
		if tel != nil {
			live = tel
		}
		engines.SetTelephone(live, telBatch)
	}
	addons, err := NewAddons(cfg.Addons, logger.With("component", "addons"))
	if err != nil {
		engines.Close()
		telBatch.Close()
		tel.Close()
		eng.Close()
		return nil, fmt.Errorf("wire add-ons: %w", err)
	}
	return &Transcriber{Engines: engines, Addons: addons, Media: cfg.Media, embedded: eng, tel: tel, telBatch: telBatch}, nil
}

// Close releases the engines and the add-ons New loaded. Call it once
// nothing transcribes any more (after the daemon's Run returned).
func (t *Transcriber) Close() error {
	return errors.Join(t.Engines.Close(), t.embedded.Close(), t.tel.Close(), t.telBatch.Close(), t.Addons.Close())
}

// Stats is the embedded engine's decoder pool: decoders loaded and busy.
func (t *Transcriber) Stats() (total, busy int) { return t.embedded.Stats() }

// Loading is how many decoders the embedded engine's pools (wideband,
// telephone live and telephone batch) have still to load in the
// background after New (sphinx.Engine.Loading).
func (t *Transcriber) Loading() int {
	return t.embedded.Loading() + t.tel.Loading() + t.telBatch.Loading()
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
