package pipeline

import (
	"fmt"

	"github.com/earshot-dev/earshot/recognizer"
)

// acousticModeler is an engine with a named acoustic model (the embedded
// sphinx pools).
type acousticModeler interface{ AcousticModel() string }

// Pools are the embedded engine's pools beside its own (which decodes
// whole recordings of wideband audio), each nil when not loaded.
type Pools struct {
	// Live decodes live streams of wideband audio (the wideband model's
	// live pool).
	Live recognizer.Engine
	// Telephone and TelephoneBatch have the telephone acoustic model,
	// which narrowband audio is routed to: Telephone for live calls,
	// TelephoneBatch for whole recordings (nil: Telephone serves both).
	Telephone, TelephoneBatch recognizer.Engine
}

// SetPools installs the embedded engine's other pools (see forBand). Call
// it before the daemon runs.
func (e *Engines) SetPools(p Pools) {
	if p.TelephoneBatch == nil {
		p.TelephoneBatch = p.Telephone
	}
	e.pools = p
}

// forBand is the engine that decodes audio of band b on route engine en,
// for a whole recording (batch) or a live stream. When en is the embedded
// engine: narrowband audio goes to the telephone pool of its use when one
// is installed, wideband live streams to the live pool when one is;
// everything else, and every other engine, stays on en. notes are
// post_session_metadata: audio_band (what was found and why) and, on the
// embedded engine, acoustic_model. Nil-safe.
func (e *Engines) forBand(en recognizer.Engine, b recognizer.Band, batch bool) (recognizer.Engine, map[string]any) {
	notes := map[string]any{"audio_band": bandNote(b)}
	if e == nil || en != e.embedded || en == nil {
		return en, notes
	}
	var pool recognizer.Engine
	switch {
	case b.Narrowband && batch:
		pool = e.pools.TelephoneBatch
	case b.Narrowband:
		pool = e.pools.Telephone
	case !batch:
		pool = e.pools.Live
	}
	if pool != nil {
		en = pool
	}
	if m, ok := en.(acousticModeler); ok {
		notes["acoustic_model"] = m.AcousticModel()
	}
	return en, notes
}

// bandNote is the audio_band note: {band: "telephone"|"wideband", reason}.
func bandNote(b recognizer.Band) map[string]any {
	n := map[string]any{"band": "wideband"}
	if b.Narrowband {
		n["band"] = "telephone"
	}
	switch {
	case b.ByRate && b.Narrowband:
		n["reason"] = "sample rate below 16 kHz"
	case b.ByRate:
		n["reason"] = "sample rate 16 kHz or more"
	default:
		n["reason"] = fmt.Sprintf("%.4f%% of the energy above 4 kHz (telephone band at most %.2f%%)",
			100*b.HighRatio, 100*recognizer.NarrowbandRatio)
		n["energy_above_4khz"] = round6(b.HighRatio)
	}
	return n
}

func round6(v float64) float64 {
	return float64(int64(v*1e6+0.5)) / 1e6
}
