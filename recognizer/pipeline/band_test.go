package pipeline

import (
	"testing"

	"github.com/earshot-dev/earshot/recognizer"
)

// fakePool stands in for one of the embedded engine's sphinx pools.
type fakePool struct {
	fakeEmbedded
	model string
}

func (p fakePool) AcousticModel() string { return p.model }

// TestTelephonePools: narrowband audio on the embedded engine goes to the
// telephone model's batch pool for a whole recording and to its live pool
// for a live call; wideband audio and remote routes stay where they are,
// and without a batch pool the live one serves both.
func TestTelephonePools(t *testing.T) {
	embedded := fakePool{model: "en-us"}
	live, batch := fakePool{model: "telephone, live pool"}, fakePool{model: "telephone, batch pool"}
	e := &Engines{embedded: embedded}
	e.SetTelephone(live, batch)
	narrow := recognizer.Band{Narrowband: true, ByRate: true}
	for _, c := range []struct {
		name  string
		band  recognizer.Band
		batch bool
		want  recognizer.Engine
	}{
		{"narrowband recording", narrow, true, batch},
		{"narrowband live call", narrow, false, live},
		{"wideband recording", recognizer.Band{ByRate: true}, true, embedded},
		{"wideband live call", recognizer.Band{ByRate: true}, false, embedded},
	} {
		got, notes := e.forBand(embedded, c.band, c.batch)
		if got != c.want {
			t.Errorf("%s: engine %v, want %v", c.name, got, c.want)
		}
		if notes["acoustic_model"] != c.want.(fakePool).model {
			t.Errorf("%s: notes %v", c.name, notes)
		}
	}
	remote := fakePool{model: "remote"}
	if got, _ := e.forBand(remote, narrow, true); got != remote {
		t.Errorf("a remote route was moved to %v", got)
	}
	e.SetTelephone(live, nil)
	if got, _ := e.forBand(embedded, narrow, true); got != live {
		t.Errorf("no batch pool: a recording went to %v, want the live pool", got)
	}
}
