package daemon

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"

	"github.com/earshot-dev/earshot/daemon/params"
	"github.com/earshot-dev/earshot/errcode"
	"github.com/earshot-dev/earshot/recognizer"
	"github.com/earshot-dev/earshot/recognizer/remote"
)

// EmbeddedEngine is the name of the embedded PocketSphinx engine in routes,
// metadata and GET /v2/engines.
const EmbeddedEngine = "sphinx"

// ErrEngineUnavailable is returned (wrapped in an *Error naming the engine)
// when a job's remote engine cannot be reached, times out or keeps
// failing: status 503.
var ErrEngineUnavailable = errcode.ErrEngineUnavailable.Sub("daemon: engine unavailable", "")

// ErrEngineFailed is returned (wrapped in an *Error naming the engine) when
// a job's remote engine answers something that is not a transcription
// (malformed JSON, a 4xx): status 500 with that message.
var ErrEngineFailed = errcode.ErrEngineFailed.Sub("daemon: engine failed", "")

// isEngineError reports whether err is a remote engine's failure
// (ErrEngineUnavailable or ErrEngineFailed).
func isEngineError(err error) bool {
	return errors.Is(err, ErrEngineUnavailable) || errors.Is(err, ErrEngineFailed)
}

// Engines is the registry of installed engines: the embedded one and the
// remote ones of the config, in that order, with the routing table.
type Engines struct {
	cfg      EnginesConfig
	embedded recognizer.Engine
	// telephone is the embedded engine's telephone-band pool, nil when
	// none (SetTelephone).
	telephone recognizer.Engine
	list      []recognizer.Engine // embedded first, then remotes in config order
	remotes   []*remote.Engine
	metrics   engineMetrics
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

// EngineInfo describes one installed engine (GET /v2/engines).
type EngineInfo struct {
	Name      string   `json:"name"`
	Kind      string   `json:"kind"` // "embedded" or "remote"
	Model     string   `json:"model,omitempty"`
	Languages []string `json:"languages"`
	Detects   bool     `json:"language_detection"`
	Capacity  int      `json:"capacity"`
	Busy      int      `json:"busy"`
	// Routes lists what is routed to this engine: "model-1", "model-3",
	// "language:fr" ... (explicit routes and the defaults).
	Routes []string `json:"routes"`
}

// Info lists the installed engines.
func (e *Engines) Info() []EngineInfo {
	out := make([]EngineInfo, 0, len(e.list))
	m1, m3 := e.modelEngine(params.Model1), e.modelEngine(params.Model3)
	for i, en := range e.list {
		info := EngineInfo{Name: en.Name(), Kind: "remote", Languages: en.Languages(), Routes: []string{}}
		if st, ok := en.(interface{ Stats() (int, int) }); ok {
			info.Capacity, info.Busy = st.Stats()
		}
		if i == 0 {
			info.Kind = "embedded"
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

// Route is the engine a request runs on and how.
type Route struct {
	// Engine transcribes the request.
	Engine recognizer.Engine
	// Language is the language to transcribe in; "" asks the engine to
	// detect it (remote engines only).
	Language string
	// PerUtterance is set with Language "" when code_switching asked for
	// a language per utterance; otherwise one language (the one detected
	// on most of the audio) is reported for the whole file.
	PerUtterance bool
}

// Route picks the engine of a request (the routing table of README.md):
//
//   - one language L: Routes.Languages[L]; else the model's engine
//     (Routes.Model1 / Routes.Model3, default the first remote engine, else
//     the embedded one) when it serves L; else the first installed engine
//     serving L (embedded first).
//   - several languages, or none: the model's engine when it detects
//     (remote) and serves every language listed; else the first remote
//     engine that does; detection then runs on that engine, per utterance
//     when codeSwitching. With no such engine, when the candidate
//     languages (those listed, or all installed) are exactly one, that
//     language is routed as above.
//
// Anything else wraps ErrCannotServe with a message listing what is
// installed (422). A model other than model-3 (unset, or a name params
// would have rejected) is routed as model-1.
func (e *Engines) Route(model string, langs []string, codeSwitching bool) (Route, error) {
	if model == "" {
		model = params.Model1
	}
	if len(langs) == 1 {
		return e.routeOne(model, langs[0])
	}
	serves := func(en recognizer.Engine) bool {
		have := en.Languages()
		for _, l := range langs {
			if !slices.Contains(have, l) {
				return false
			}
		}
		return true
	}
	if me := e.modelEngine(model); isRemote(me) && serves(me) {
		return Route{Engine: me, PerUtterance: codeSwitching}, nil
	}
	for _, r := range e.remotes {
		if serves(r) {
			return Route{Engine: r, PerUtterance: codeSwitching}, nil
		}
	}
	cands := langs
	if len(cands) == 0 {
		cands = e.Languages()
	}
	if len(cands) == 1 {
		return e.routeOne(model, cands[0])
	}
	return Route{}, newError(ErrCannotServe, nil,
		"language_config.languages: detecting the language among %s needs a remote engine serving them all (installed: %s)",
		orAll(langs), e.describe())
}

// routeOne routes a single language.
func (e *Engines) routeOne(model, lang string) (Route, error) {
	if en := e.byName(e.cfg.Routes.Languages[lang]); en != nil && slices.Contains(en.Languages(), lang) {
		return Route{Engine: en, Language: lang}, nil
	}
	if me := e.modelEngine(model); slices.Contains(me.Languages(), lang) {
		return Route{Engine: me, Language: lang}, nil
	}
	for _, en := range e.list {
		if slices.Contains(en.Languages(), lang) {
			return Route{Engine: en, Language: lang}, nil
		}
	}
	return Route{}, newError(ErrCannotServe, nil, "language_config.languages: %s is not served by this appliance (installed: %s)", lang, e.describe())
}

// describe lists the engines and their languages for 422 messages.
func (e *Engines) describe() string {
	parts := make([]string, 0, len(e.list))
	for _, en := range e.list {
		l := en.Languages()
		s := strings.Join(l, " ")
		if len(l) > 8 {
			s = fmt.Sprintf("%d languages", len(l))
		}
		parts = append(parts, fmt.Sprintf("%s [%s]", en.Name(), s))
	}
	return strings.Join(parts, ", ")
}

func orAll(langs []string) string {
	if len(langs) == 0 {
		return "all languages"
	}
	return strings.Join(langs, ", ")
}

func isRemote(en recognizer.Engine) bool {
	_, ok := en.(*remote.Engine)
	return ok
}

// fallbackLanguage is the language the embedded engine would transcribe a
// failed remote route in, "" when it cannot serve the route.
func (e *Engines) fallbackLanguage(rt Route, listed []string) string {
	if !e.cfg.Fallback || !isRemote(rt.Engine) {
		return ""
	}
	own := e.embedded.Languages()
	if rt.Language != "" {
		if slices.Contains(own, rt.Language) {
			return rt.Language
		}
		return ""
	}
	if len(own) == 1 && (len(listed) == 0 || slices.Contains(listed, own[0])) {
		return own[0]
	}
	return ""
}

// engineError turns a remote engine's failure into the job's error.
func engineError(name string, err error) error {
	switch {
	case errors.Is(err, remote.ErrUnavailable), errors.Is(err, remote.ErrTimeout):
		return newError(ErrEngineUnavailable, err, "transcription engine %s unavailable", name)
	case errors.Is(err, remote.ErrBadResponse):
		return newError(ErrEngineFailed, err, "transcription engine %s returned a bad response", name)
	}
	return err
}

// transcribe runs a batch job on a route. A fixed language goes through
// recognizer.Transcribe; detection segments the audio the same way and
// keeps each segment's detected language.
func transcribeRoute(ctx context.Context, rt Route, channels [][]int16, prompt string) (*recognizer.BatchResult, error) {
	eng := rt.streamEngine(prompt)
	if rt.Language != "" || !isRemote(rt.Engine) {
		return recognizer.Transcribe(ctx, eng, channels, recognizer.BatchOptions{Language: rt.Language})
	}
	slots, _ := rt.Engine.(*remote.Engine).Stats()
	br, err := recognizer.Transcribe(ctx, eng, channels, recognizer.BatchOptions{Detect: true, Concurrency: max(slots, 1)})
	if err != nil {
		return nil, err
	}
	br.Language = mainLanguage(br.Utterances)
	if rt.PerUtterance {
		return br, nil
	}
	// Without code switching the language detected on the first utterance
	// is kept (SPEC 2.6): when others were heard as another language, the
	// whole job is decoded again in the first one (relabelling them would
	// keep text decoded in the other language). A first language the
	// engine does not list keeps the detected labels.
	first := ""
	if i := slices.IndexFunc(br.Utterances, func(u recognizer.Utterance) bool { return u.Language != "" }); i >= 0 {
		first = br.Utterances[i].Language
	}
	mixed := slices.ContainsFunc(br.Utterances, func(u recognizer.Utterance) bool { return u.Language != "" && u.Language != first })
	if first == "" || !mixed || !slices.Contains(rt.Engine.Languages(), first) {
		return br, nil
	}
	rt.Language = first
	return recognizer.Transcribe(ctx, rt.streamEngine(prompt), channels, recognizer.BatchOptions{Language: first, Concurrency: max(slots, 1)})
}

// mainLanguage is the language detected on most speech ("" when none).
func mainLanguage(utts []recognizer.Utterance) string {
	dur := map[string]float64{}
	best := ""
	for _, u := range utts {
		if u.Language == "" {
			continue
		}
		dur[u.Language] += u.End - u.Start
		if best == "" || dur[u.Language] > dur[best] {
			best = u.Language
		}
	}
	return best
}

// detectedLanguages lists the utterances' languages in order of first
// appearance, main first.
func detectedLanguages(main string, utts []recognizer.Utterance) []string {
	out := []string{main}
	for _, u := range utts {
		if u.Language != "" && !slices.Contains(out, u.Language) {
			out = append(out, u.Language)
		}
	}
	return out
}
