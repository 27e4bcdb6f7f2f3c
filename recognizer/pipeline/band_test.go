package pipeline

import (
	"strings"
	"testing"

	"github.com/earshot-dev/earshot/params"
	"github.com/earshot-dev/earshot/recognizer"
	"github.com/earshot-dev/earshot/recognizer/remote"
)

// fakePool stands in for one of the embedded engine's sphinx pools.
type fakePool struct {
	fakeEmbedded
	model string
}

func (p fakePool) AcousticModel() string { return p.model }

// TestPools: narrowband audio on the embedded engine goes to the
// telephone model's batch pool for a whole recording and to its live pool
// for a live call; a wideband live stream goes to the wideband live pool
// and a wideband recording stays on the embedded engine; remote routes
// stay where they are. Without a telephone batch pool the telephone live
// one serves both; without a telephone model, a live call decodes on the
// embedded engine. Before, wideband live streams stayed on the embedded
// engine's pool (2 decoders on a 2-CPU box).
func TestPools(t *testing.T) {
	embedded := fakePool{model: "en-us"}
	wideLive := fakePool{model: "en-us, live pool"}
	live, batch := fakePool{model: "telephone, live pool"}, fakePool{model: "telephone, batch pool"}
	e := &Engines{embedded: embedded}
	e.SetPools(Pools{Live: wideLive, Telephone: live, TelephoneBatch: batch})
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
		{"wideband live call", recognizer.Band{ByRate: true}, false, wideLive},
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
	e.SetPools(Pools{Live: wideLive, Telephone: live})
	if got, _ := e.forBand(embedded, narrow, true); got != live {
		t.Errorf("no batch pool: a recording went to %v, want the live pool", got)
	}
	e.SetPools(Pools{Live: wideLive})
	if got, _ := e.forBand(embedded, narrow, false); got != embedded {
		t.Errorf("no telephone model: a live call went to %v, want the embedded engine", got)
	}
}

// TestPoolInfo: GET /v2/engines lists each loaded pool of the embedded
// engine once, its own first, with its acoustic model: the telephone pool
// that also serves whole recordings (no batch pool of its own) is not
// listed again as telephone_batch.
func TestPoolInfo(t *testing.T) {
	e := &Engines{embedded: fakePool{model: "en-us"}}
	e.SetPools(Pools{Live: fakePool{model: "en-us, live"}, Telephone: fakePool{model: "telephone"}})
	var got []string
	for _, p := range e.poolInfo() {
		got = append(got, p.Name+" "+p.AcousticModel)
	}
	if want := "wideband en-us, live en-us, live, telephone telephone"; strings.Join(got, ", ") != want {
		t.Errorf("pools %q, want %q", strings.Join(got, ", "), want)
	}
	e.SetPools(Pools{Telephone: fakePool{model: "telephone"}, TelephoneBatch: fakePool{model: "telephone batch"}})
	got = got[:0]
	for _, p := range e.poolInfo() {
		got = append(got, p.Name)
	}
	if want := "wideband telephone telephone_batch"; strings.Join(got, " ") != want {
		t.Errorf("pools %q, want %q", strings.Join(got, " "), want)
	}
}

// TestLiveRouteBatchEngine: a live session on the embedded engine names
// the pool that decodes whole recordings of its band (a revised final
// decodes a live segment on it): the telephone batch pool for a call, the
// embedded engine's own for wideband audio; on a remote route, none.
func TestLiveRouteBatchEngine(t *testing.T) {
	live, batch := fakePool{model: "telephone, live pool"}, fakePool{model: "telephone, batch pool"}
	e := testEngines(t, EnginesConfig{Remote: []remote.Config{remoteCfg("gpu", "en")},
		Routes: RoutesConfig{Model1: EmbeddedEngine, Model3: "gpu"}})
	e.SetPools(Pools{Live: fakePool{model: "en-us, live pool"}, Telephone: live, TelephoneBatch: batch})
	for _, c := range []struct {
		name   string
		o      LiveOptions
		engine recognizer.Engine
		batch  recognizer.Engine
	}{
		{"call", LiveOptions{Model: params.Model1, Languages: []string{"en"}, Narrowband: true}, live, batch},
		{"wideband", LiveOptions{Model: params.Model1, Languages: []string{"en"}}, fakePool{model: "en-us, live pool"}, e.Embedded()},
		{"remote", LiveOptions{Model: params.Model3, Narrowband: true}, nil, nil},
	} {
		rt, err := e.Live(c.o)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if c.engine != nil && rt.Engine != c.engine {
			t.Errorf("%s: live engine %v, want %v", c.name, rt.Engine, c.engine)
		}
		if got := rt.BatchEngine(); got != c.batch {
			t.Errorf("%s: batch engine %v, want %v", c.name, got, c.batch)
		}
	}
}
