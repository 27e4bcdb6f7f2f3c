package pipeline

import (
	"fmt"
	"slices"

	"github.com/earshot-dev/earshot/recognizer"
	"github.com/earshot-dev/earshot/transcript"
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

// The embedded engine's pools as metrics (earshot_decoders) and GET
// /v2/engines name them.
const (
	PoolWideband       = "wideband"        // the engine's own: whole recordings of wideband audio
	PoolLive           = "live"            // Pools.Live
	PoolTelephone      = "telephone"       // Pools.Telephone
	PoolTelephoneBatch = "telephone_batch" // Pools.TelephoneBatch
)

// poolInfo lists the embedded engine's loaded pools, its own first; a
// pool that serves as another (TelephoneBatch without a batch pool of
// its own) is listed once.
func (e *Engines) poolInfo() []transcript.PoolInfo {
	var out []transcript.PoolInfo
	var seen []recognizer.Engine
	for _, p := range e.pools.named(e.embedded) {
		if p.en == nil || slices.Contains(seen, p.en) {
			continue
		}
		seen = append(seen, p.en)
		info := transcript.PoolInfo{Name: p.name}
		if m, ok := p.en.(acousticModeler); ok {
			info.AcousticModel = m.AcousticModel()
		}
		if st, ok := p.en.(stater); ok {
			info.Decoders, info.Busy = st.Stats()
		}
		out = append(out, info)
	}
	return out
}

// poolEngine is one pool by its metric name.
type poolEngine struct {
	name string
	en   recognizer.Engine // nil when not loaded
}

// named is the one list of the embedded engine's pools by their metric
// names, own (the engine's own, wideband whole recordings) first: GET
// /v2/engines and earshot_decoders (poolInfo), and the Transcriber's
// per-pool settings and Close, go through it.
func (p Pools) named(own recognizer.Engine) []poolEngine {
	return []poolEngine{{PoolWideband, own}, {PoolLive, p.Live}, {PoolTelephone, p.Telephone}, {PoolTelephoneBatch, p.TelephoneBatch}}
}

// stater is an engine that counts its decoders (the sphinx pools) or
// request slots (remote engines): loaded and busy.
type stater interface{ Stats() (total, busy int) }

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
