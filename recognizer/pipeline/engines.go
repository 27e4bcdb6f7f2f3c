package pipeline

import (
	"fmt"
	"log/slog"
	"slices"

	"github.com/earshot-dev/earshot/params"
	"github.com/earshot-dev/earshot/recognizer"
	"github.com/earshot-dev/earshot/recognizer/remote"
	"github.com/earshot-dev/earshot/transcript"
)

// EmbeddedEngine is the name of the embedded PocketSphinx engine in routes,
// metadata and GET /v2/engines.
const EmbeddedEngine = "sphinx"

// Engines is the registry of installed engines: the embedded one and the
// remote ones of the config, in that order, with the routing table.
type Engines struct {
	cfg      EnginesConfig
	embedded recognizer.Engine
	// pools are the embedded engine's other pools (SetPools).
	pools   Pools
	list    []recognizer.Engine // embedded first, then remotes in config order
	remotes []*remote.Engine
	metrics engineMetrics
}

// NewEngines builds the remote engines of c (no I/O) beside embedded.
func NewEngines(embedded recognizer.Engine, c EnginesConfig, logger *slog.Logger) (*Engines, error) {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	e := &Engines{cfg: c, embedded: embedded, list: []recognizer.Engine{embedded}, metrics: newEngineMetrics()}
	for _, rc := range c.Remote {
		r, err := remote.New(rc, logger.With("engine", rc.Name), e.metrics.observe)
		if err != nil {
			e.Close()
			return nil, fmt.Errorf("engine %s: %w", rc.Name, err)
		}
		e.remotes = append(e.remotes, r)
		e.list = append(e.list, r)
	}
	return e, nil
}

// Close closes the remote engines (the embedded one belongs to the caller).
func (e *Engines) Close() error {
	for _, r := range e.remotes {
		r.Close()
	}
	return nil
}

// Languages is the union of the installed engines' languages, the embedded
// engine's first.
func (e *Engines) Languages() []string {
	var out []string
	for _, en := range e.list {
		for _, l := range en.Languages() {
			if !slices.Contains(out, l) {
				out = append(out, l)
			}
		}
	}
	return out
}

// Info lists the installed engines.
func (e *Engines) Info() []transcript.EngineInfo {
	out := make([]transcript.EngineInfo, 0, len(e.list))
	m1, m3 := e.modelEngine(params.Model1), e.modelEngine(params.Model3)
	for i, en := range e.list {
		info := transcript.EngineInfo{Name: en.Name(), Kind: "remote", Languages: en.Languages(), Routes: []string{}}
		if st, ok := en.(stater); ok {
			info.Capacity, info.Busy = st.Stats()
		}
		if i == 0 {
			info.Kind = "embedded"
			info.Pools = e.poolInfo()
		} else {
			info.Model = e.cfg.Remote[i-1].Model
			info.Detects = true
		}
		if m1 == en {
			info.Routes = append(info.Routes, params.Model1)
		}
		if m3 == en {
			info.Routes = append(info.Routes, params.Model3)
		}
		langs := make([]string, 0, len(e.cfg.Routes.Languages))
		for l, name := range e.cfg.Routes.Languages {
			if name == en.Name() {
				langs = append(langs, "language:"+l)
			}
		}
		slices.Sort(langs)
		info.Routes = append(info.Routes, langs...)
		out = append(out, info)
	}
	return out
}

// byName returns the engine named name, nil when none.
func (e *Engines) byName(name string) recognizer.Engine {
	for _, en := range e.list {
		if en.Name() == name {
			return en
		}
	}
	return nil
}

// modelEngine is the engine of a model: its route, else the first remote
// engine, else the embedded one.
func (e *Engines) modelEngine(model string) recognizer.Engine {
	name := e.cfg.Routes.Model1
	if model == params.Model3 {
		name = e.cfg.Routes.Model3
	}
	if en := e.byName(name); en != nil {
		return en
	}
	if len(e.remotes) > 0 {
		return e.remotes[0]
	}
	return e.embedded
}

// Embedded is the embedded engine (its wideband pool).
func (e *Engines) Embedded() recognizer.Engine { return e.embedded }
