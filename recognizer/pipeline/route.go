package pipeline

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/earshot-dev/earshot/errcode"
	"github.com/earshot-dev/earshot/params"
	"github.com/earshot-dev/earshot/recognizer"
	"github.com/earshot-dev/earshot/recognizer/remote"
)

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

	// remote is Engine as the registry's remote engine (its slots, its
	// translation endpoint, the fallback policy), nil for the embedded
	// engine; set by Engines.Route.
	remote *remote.Engine
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
	rt, err := e.route(model, langs, codeSwitching)
	rt.remote = e.remoteNamed(rt.Engine)
	return rt, err
}

// route is Route without the remote engine filled in.
func (e *Engines) route(model string, langs []string, codeSwitching bool) (Route, error) {
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
	if me := e.modelEngine(model); e.remoteNamed(me) != nil && serves(me) {
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
	return Route{}, newError(errcode.ErrCannotServe, nil,
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
	return Route{}, newError(errcode.ErrCannotServe, nil, "language_config.languages: %s is not served by this appliance (installed: %s)", lang, e.describe())
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

// remoteNamed is the registry's remote engine that en is, nil when en is
// not one (the embedded engine, its telephone pool, nil).
func (e *Engines) remoteNamed(en recognizer.Engine) *remote.Engine {
	for _, r := range e.remotes {
		if en != nil && recognizer.Engine(r) == en {
			return r
		}
	}
	return nil
}

// fallbackLanguage is the language the embedded engine would transcribe a
// failed remote route in, "" when it cannot serve the route.
func (e *Engines) fallbackLanguage(rt Route, listed []string) string {
	if !e.cfg.Fallback || e.remoteNamed(rt.Engine) == nil {
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
