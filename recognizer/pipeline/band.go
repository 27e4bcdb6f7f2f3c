package pipeline

import (
	"fmt"

	"github.com/earshot-dev/earshot/recognizer"
)

// acousticModeler is an engine with a named acoustic model (the embedded
// sphinx pools).
type acousticModeler interface{ AcousticModel() string }

// SetTelephone installs the embedded engine's telephone-band pools: the
// embedded engine with the telephone acoustic model, which narrowband audio
// is routed to (see forBand), live for live calls and batch for whole
// recordings (a nil batch: live serves both). Call it before the daemon
// runs.
func (e *Engines) SetTelephone(live, batch recognizer.Engine) {
	if batch == nil {
		batch = live
	}
	e.telephone, e.telephoneBatch = live, batch
}

// forBand is the engine that decodes audio of band b on route engine en:
// the telephone pool (the batch one for a whole recording) when en is the
// embedded engine, b is narrowband and the pool is installed; en
// otherwise. notes are post_session_metadata: audio_band (what was found
// and why) and, on the embedded engine, acoustic_model. Nil-safe.
func (e *Engines) forBand(en recognizer.Engine, b recognizer.Band, batch bool) (recognizer.Engine, map[string]any) {
	var embedded, tel recognizer.Engine
	if e != nil {
		embedded, tel = e.embedded, e.telephone
		if batch {
			tel = e.telephoneBatch
		}
	}
	return bandEngine(en, embedded, tel, b)
}

// bandEngine is forBand for a given embedded engine and telephone pool
// (tel nil: none).
func bandEngine(en, embedded, tel recognizer.Engine, b recognizer.Band) (recognizer.Engine, map[string]any) {
	notes := map[string]any{"audio_band": bandNote(b)}
	if en != embedded || embedded == nil {
		return en, notes
	}
	if b.Narrowband && tel != nil {
		en = tel
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
