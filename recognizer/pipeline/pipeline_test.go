package pipeline

import (
	"testing"

	"github.com/earshot-dev/earshot/recognizer"
)

// TestNewLivePools: only a pipeline that serves live sessions (the daemon)
// loads the live pools, the wideband model's and the telephone model's;
// `earshotd transcribe` (Live false) has the telephone batch pool only,
// for 8 kHz files, and still names the model. Before, transcribe loaded 8
// live decoders it never used.
func TestNewLivePools(t *testing.T) {
	for _, live := range []bool{false, true} {
		var cfg Config
		cfg.Live = live
		cfg.Sphinx.SetDefaults()
		cfg.Sphinx.Decoders = 1
		cfg.Sphinx.TelephoneDecoders = 1
		cfg.Sphinx.LiveDecoders = 1
		cfg.Sphinx.TelephoneHMM = "../../model/en-us-telephone"
		cfg.Engines.SetDefaults()
		cfg.Media.SetDefaults()
		tr, err := New(cfg, recognizer.NewCPU(cfg.Sphinx.LiveDecodes), nil)
		if err != nil {
			t.Fatal(err)
		}
		if (tr.tel != nil) != live || tr.telBatch == nil || (tr.live != nil) != live {
			t.Errorf("Live %v: telephone live pool loaded %v, batch pool loaded %v, wideband live pool loaded %v",
				live, tr.tel != nil, tr.telBatch != nil, tr.live != nil)
		}
		if got := tr.TelephoneModel(); got != "en-us-telephone" {
			t.Errorf("Live %v: TelephoneModel %q", live, got)
		}
		p := tr.Engines.pools
		if (p.Telephone != nil) != live || p.TelephoneBatch == nil || (p.Live != nil) != live {
			t.Errorf("Live %v: routes to a telephone live engine %v, batch %v, wideband live %v",
				live, p.Telephone != nil, p.TelephoneBatch != nil, p.Live != nil)
		}
		if err := tr.Close(); err != nil {
			t.Fatal(err)
		}
	}
}
