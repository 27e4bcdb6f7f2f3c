package daemon

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"golang.org/x/sync/errgroup"

	"github.com/earshot-dev/earshot/config"
	"github.com/earshot-dev/earshot/daemon/params"
	"github.com/earshot-dev/earshot/errcode"
	"github.com/earshot-dev/earshot/recognizer"
	"github.com/earshot-dev/earshot/recognizer/addons/llm"
	"github.com/earshot-dev/earshot/recognizer/remote"
)

// EmbeddedEngine is the name of the embedded PocketSphinx engine in routes,
// metadata and GET /v2/engines.
const EmbeddedEngine = "sphinx"

// EnginesConfig is the engines: section: the remote recognisers beside the
// embedded one, how requests are routed to them, and the fallback policy.
type EnginesConfig struct {
	// Remote lists OpenAI-compatible transcription servers, each an engine
	// named by its name (unique, not "sphinx").
	Remote []remote.Config `yaml:"remote"`
	// Routes maps models and languages to engines (see Engines.Route).
	Routes RoutesConfig `yaml:"routes"`
	// Fallback, when true, re-runs a pre-recorded job on the embedded
	// engine when its remote engine fails and the job's language is one
	// the embedded engine serves, and moves a live session to the
	// embedded engine at its first failed utterance (that utterance
	// included) for the rest of the session; post_session_metadata says
	// so. Default false (the job fails with the remote engine's error; a
	// live session gets an error message per failed utterance).
	Fallback bool `yaml:"fallback"`
}

// RoutesConfig names the engine of each model and language; empty means
// the default order (see Engines.Route).
type RoutesConfig struct {
	// Model1 is the engine of model-1 requests.
	Model1 string `yaml:"model-1"`
	// Model3 is the engine of model-3 requests.
	Model3 string `yaml:"model-3"`
	// Languages maps a language code to the engine that transcribes it,
	// whatever the model; it wins over Model1 and Model3.
	Languages map[string]string `yaml:"languages"`
}

// SetDefaults fills each remote engine's zero fields.
func (c *EnginesConfig) SetDefaults() {
	for i := range c.Remote {
		c.Remote[i].SetDefaults()
	}
}

// Validate checks names and routes without I/O, each problem a
// *config.Problem naming its key (relative to this section); sphinxLang is
// the embedded engine's language.
func (c *EnginesConfig) Validate(sphinxLang string) error {
	var errs []error
	bad := func(key, format string, a ...any) { errs = append(errs, config.Errorf(key, format, a...)) }
	langs := map[string][]string{EmbeddedEngine: {sphinxLang}}
	for i, r := range c.Remote {
		errs = append(errs, config.Under(fmt.Sprintf("remote[%d]", i), r.Validate()))
		if _, dup := langs[r.Name]; dup {
			bad(fmt.Sprintf("remote[%d].name", i), "%q is already an engine's name", r.Name)
		}
		langs[r.Name] = r.Languages
	}
	for key, name := range map[string]string{"routes.model-1": c.Routes.Model1, "routes.model-3": c.Routes.Model3} {
		if _, ok := langs[name]; name != "" && !ok {
			bad(key, "%q names no engine", name)
		}
	}
	for lang, name := range c.Routes.Languages {
		served, ok := langs[name]
		switch {
		case !params.IsLanguage(lang):
			bad("routes.languages", "%q is not a language code", lang)
		case !ok:
			bad("routes.languages."+lang, "%q names no engine", name)
		case !slices.Contains(served, lang):
			bad("routes.languages."+lang, "engine %q does not serve %s", name, lang)
		}
	}
	return config.Sorted(errors.Join(errs...)) // by key: the routes come in map order
}

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

// promptEngine presents a remote engine to the recogniser with a job's
// prompt and a declared language ("" = detect), so recognizer.NewLive
// accepts detection.
type promptEngine struct {
	r      *remote.Engine
	lang   string
	prompt string
}

func (p promptEngine) Name() string        { return p.r.Name() }
func (p promptEngine) Languages() []string { return []string{p.lang} }
func (p promptEngine) NewStream(ctx context.Context, o recognizer.StreamOptions) (recognizer.Stream, error) {
	return p.r.NewStreamPrompt(ctx, recognizer.StreamOptions{Language: o.Language}, p.prompt)
}

// streamEngine is the engine a route hands to the recogniser.
func (rt Route) streamEngine(prompt string) recognizer.Engine {
	if r, ok := rt.Engine.(*remote.Engine); ok {
		return promptEngine{r: r, lang: rt.Language, prompt: prompt}
	}
	return rt.Engine
}

// vocabularyPrompt is custom_vocabulary as a prompt: the values joined by
// commas.
func vocabularyPrompt(c *params.VocabularyConfig) string {
	if c == nil {
		return ""
	}
	vals := make([]string, 0, len(c.Vocabulary))
	for _, v := range c.Vocabulary {
		vals = append(vals, v.Value)
	}
	return strings.Join(vals, ", ")
}

// DefaultVocabularyIntensity is the intensity of a custom_vocabulary item
// with neither its own intensity nor default_intensity (SPEC gives none):
// for the embedded engine, a listed word is then at least as likely as an
// everyday content word (see recognizer/sphinx, floorLog10).
const DefaultVocabularyIntensity = 0.5

// vocabularyEngine opens every stream of a non-remote engine with a job's
// custom_vocabulary.
type vocabularyEngine struct {
	recognizer.Engine
	words []recognizer.VocabularyWord
}

func (v vocabularyEngine) NewStream(ctx context.Context, o recognizer.StreamOptions) (recognizer.Stream, error) {
	o.Vocabulary = v.words
	return v.Engine.NewStream(ctx, o)
}

// withVocabulary gives the embedded engine en a job's custom_vocabulary
// (items in another language than lang are left out) and returns the
// post_session_metadata note saying so, with what the engine left out;
// en itself and "" when nothing applies.
func withVocabulary(en recognizer.Engine, lang string, c *params.VocabularyConfig) (recognizer.Engine, string) {
	if c == nil || isRemote(en) {
		return en, ""
	}
	def := DefaultVocabularyIntensity
	if c.DefaultIntensity != nil {
		def = *c.DefaultIntensity
	}
	var words []recognizer.VocabularyWord
	for _, it := range c.Vocabulary {
		if it.Language != "" && lang != "" && it.Language != lang {
			continue
		}
		w := recognizer.VocabularyWord{Value: it.Value, Intensity: def, Pronunciations: it.Pronunciations}
		if it.Intensity != nil {
			w.Intensity = *it.Intensity
		}
		words = append(words, w)
	}
	if len(words) == 0 {
		return en, ""
	}
	note := fmt.Sprintf("added to engine %s's dictionary and language model (%d items)", en.Name(), len(words))
	if ch, ok := en.(interface {
		CheckVocabulary([]recognizer.VocabularyWord) []error
	}); ok {
		if probs := ch.CheckVocabulary(words); len(probs) > 0 {
			msgs := make([]string, len(probs))
			for i, p := range probs {
				msgs[i] = p.Error()
			}
			note += "; left out: " + strings.Join(msgs, "; ")
		}
	}
	return vocabularyEngine{Engine: en, words: words}, note
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

// liveEngine presents a remote route to a live session's recogniser. Its
// streams map the remote engine's failures to the job errors of
// engineError (so the session's error messages say "transcription engine
// NAME unavailable"), and, when the fallback policy allows it (fallback
// language set), replay a failed utterance on the embedded engine and
// keep the whole session there from then on. The session's Live runs
// under the session's lock, so the streams are used by one goroutine at a
// time; the switch is read at the end through liveEngine.notes.
type liveEngine struct {
	primary  promptEngine
	embedded recognizer.Engine
	// fallbackLang is the embedded engine's language for this session,
	// "" when the session may not fall back.
	fallbackLang string
	// wait bounds the wait for an embedded decoder at the switch.
	wait time.Duration
	// notify sends the client an error message (the switch); called from
	// within the recogniser, under the session's lock.
	notify    func(string)
	fallbacks prometheus.Counter

	mu       sync.Mutex
	from     string // guarded by mu: the remote engine left, "" before a switch
	reason   string // guarded by mu: why
	failures int    // guarded by mu: utterances lost to engine failures
	lastErr  string // guarded by mu: the last of those failures
}

var _ recognizer.Engine = (*liveEngine)(nil)

// liveEngine returns the engine a live session's recogniser runs on for
// rt: rt's engine itself when it is not remote, else a *liveEngine. listed
// is language_config.languages, wait the session's decoder wait, notify
// sends the client an error message.
func (e *Engines) liveEngine(rt Route, prompt string, listed []string, wait time.Duration, notify func(string)) recognizer.Engine {
	r, ok := rt.Engine.(*remote.Engine)
	if !ok {
		return rt.Engine
	}
	return &liveEngine{
		primary:      promptEngine{r: r, lang: rt.Language, prompt: prompt},
		embedded:     e.embedded,
		fallbackLang: e.fallbackLanguage(rt, listed),
		wait:         wait,
		notify:       notify,
		fallbacks:    e.metrics.fallbacks.WithLabelValues(r.Name(), "live"),
	}
}

func (l *liveEngine) Name() string        { return l.primary.Name() }
func (l *liveEngine) Languages() []string { return l.primary.Languages() }

// NewStream opens a remote stream, or an embedded one once the session
// has switched.
func (l *liveEngine) NewStream(ctx context.Context, o recognizer.StreamOptions) (recognizer.Stream, error) {
	if l.switched() {
		return l.embedded.NewStream(ctx, recognizer.StreamOptions{Language: l.fallbackLang})
	}
	st, err := l.primary.NewStream(ctx, o)
	if err != nil {
		return nil, err
	}
	return &liveStream{l: l, cur: st, remote: true}, nil
}

func (l *liveEngine) switched() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.from != ""
}

// notes is the engine part of the session's post_session_metadata: the
// engine that transcribed last, the fallback {from, reason} when there
// was one, and engine_errors {count, last} when utterances were lost to
// engine failures. Nil-safe: a nil *liveEngine has no notes to add.
func (l *liveEngine) notes() map[string]any {
	if l == nil {
		return nil
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	n := map[string]any{}
	if l.from != "" {
		n["engine"] = l.embedded.Name()
		n["fallback"] = map[string]any{"from": l.from, "reason": l.reason}
	}
	if l.failures > 0 {
		n["engine_errors"] = map[string]any{"count": l.failures, "last": l.lastErr}
	}
	return n
}

// liveStream is one channel's stream of a liveEngine.
type liveStream struct {
	l      *liveEngine
	cur    recognizer.Stream
	remote bool    // cur is the remote engine's stream
	utt    []int16 // the utterance so far while remote and fallback is allowed, to replay
}

// Write feeds the current stream, keeping a copy of the utterance while it
// may have to be replayed on the embedded engine.
func (s *liveStream) Write(pcm []int16) error {
	if s.remote && s.l.fallbackLang != "" {
		s.utt = append(s.utt, pcm...)
	}
	return s.cur.Write(pcm)
}

func (s *liveStream) Partial() (recognizer.Hypothesis, bool) { return s.cur.Partial() }

// Finish ends the utterance on the current stream; a remote failure is
// mapped by engineError and, when allowed, the utterance is decoded again
// on the embedded engine.
func (s *liveStream) Finish() (recognizer.Utterance, error) {
	if !s.remote {
		return s.cur.Finish()
	}
	utt := s.utt
	s.utt = s.utt[:0]
	if s.l.switched() { // another channel's failure moved the session
		return s.fallBack(utt, nil)
	}
	u, err := s.cur.Finish()
	if err == nil {
		return u, nil
	}
	return s.fallBack(utt, err)
}

// Decode transcribes a whole utterance (recognizer.Live with
// OnePassFinals: narrowband sessions), with the same failure handling.
func (s *liveStream) Decode(pcm []int16) (recognizer.Utterance, error) {
	if !s.remote {
		return decodeOnce(s.cur, pcm)
	}
	s.utt = s.utt[:0]
	if s.l.switched() {
		return s.fallBack(pcm, nil)
	}
	u, err := decodeOnce(s.cur, pcm)
	if err == nil {
		return u, nil
	}
	return s.fallBack(pcm, err)
}

func (s *liveStream) Close() error { return s.cur.Close() }

// decodeOnce decodes pcm as one utterance on st: in one pass when st can.
func decodeOnce(st recognizer.Stream, pcm []int16) (recognizer.Utterance, error) {
	if o, ok := st.(interface {
		Decode([]int16) (recognizer.Utterance, error)
	}); ok {
		return o.Decode(pcm)
	}
	if err := st.Write(pcm); err != nil {
		return recognizer.Utterance{}, err
	}
	return st.Finish()
}

// fallBack handles a failed remote utterance (err; nil when the session
// has already switched): without a fallback it returns the job error and
// counts the loss; with one it moves this stream, and the session, to the
// embedded engine and decodes pcm there.
func (s *liveStream) fallBack(pcm []int16, err error) (recognizer.Utterance, error) {
	l := s.l
	name := l.primary.Name()
	var jerr error
	if err != nil {
		jerr = engineError(name, err)
		if !isEngineError(jerr) {
			return recognizer.Utterance{}, err // cancelled or closed: not the server's fault
		}
		if l.fallbackLang == "" {
			l.lost(jerr)
			return recognizer.Utterance{}, jerr
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), l.wait)
	st, nerr := l.embedded.NewStream(ctx, recognizer.StreamOptions{Language: l.fallbackLang})
	cancel()
	if nerr != nil {
		if jerr == nil {
			jerr = fmt.Errorf("fallback to %s: %w", l.embedded.Name(), nerr)
		} else {
			jerr = fmt.Errorf("%w (fallback to %s: %v)", jerr, l.embedded.Name(), nerr)
		}
		l.lost(jerr)
		return recognizer.Utterance{}, jerr
	}
	s.cur.Close()
	s.cur, s.remote = st, false
	if jerr != nil && l.switchOnce(name, Message(jerr)+": "+err.Error()) {
		l.fallbacks.Inc()
		l.notify(fmt.Sprintf("%s; the session continues on engine %s", Message(jerr), l.embedded.Name()))
	}
	return decodeOnce(st, pcm)
}

// switchOnce records the switch; false when it had already happened.
func (l *liveEngine) switchOnce(from, reason string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.from != "" {
		return false
	}
	l.from, l.reason = from, reason
	return true
}

// lost counts an utterance lost to an engine failure.
func (l *liveEngine) lost(err error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.failures++
	l.lastErr = Message(err)
}

// speechTranslator is the translation add-on of a job transcribed by a
// remote engine when no chat backend is configured: each utterance's
// audio goes to the engine's /audio/translations, which translates speech
// into English only. Translated utterances keep the original ones' start,
// end and channel; their words are placed inside that span.
type speechTranslator struct {
	r        *remote.Engine
	channels [][]int16
	// redacted is set when the job asked for pii_redaction: translating
	// the audio again would bring back the words it removed.
	redacted bool
}

var _ Translator = speechTranslator{}

// translatePad is audio kept around an utterance's words when it is sent
// for translation, so the first and last words are not cut.
const translatePad = 0.2

// speechTranslator returns the translator for a job whose post_session
// metadata names engine, nil when that engine is not remote (nil-safe).
func (e *Engines) speechTranslator(engine string, channels [][]int16, p *params.PreRecorded) Translator {
	if e == nil {
		return nil
	}
	r, ok := e.byName(engine).(*remote.Engine)
	if !ok {
		return nil
	}
	return speechTranslator{r: r, channels: channels, redacted: p.PIIRedaction}
}

// Translate sends each utterance's audio to the engine's translation
// endpoint, as many at once as the engine has slots.
func (t speechTranslator) Translate(ctx context.Context, utts []recognizer.Utterance, target string, _ llm.TranslationOptions) ([]recognizer.Utterance, error) {
	name := t.r.Name()
	if target != "en" {
		return nil, fmt.Errorf("translation to %s needs addons.llm (engine %s translates speech into en only): %w", target, name, recognizer.ErrNotConfigured)
	}
	if t.redacted {
		return nil, fmt.Errorf("translation with pii_redaction needs addons.llm (engine %s would translate the redacted words again): %w", name, recognizer.ErrNotConfigured)
	}
	out := make([]recognizer.Utterance, len(utts))
	slots, _ := t.r.Stats()
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(max(slots, 1))
	for i, u := range utts {
		g.Go(func() error {
			tu, err := t.one(gctx, u)
			if err != nil {
				return engineError(name, err)
			}
			out[i] = tu
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return nil, err
	}
	return out, nil
}

// one translates one utterance.
func (t speechTranslator) one(ctx context.Context, u recognizer.Utterance) (recognizer.Utterance, error) {
	res := recognizer.Utterance{Start: u.Start, End: u.End, Channel: u.Channel, Language: "en"}
	ch := min(max(u.Channel, 0), len(t.channels)-1)
	if ch < 0 {
		return res, nil
	}
	pcm := t.channels[ch]
	from := min(max(int((u.Start-translatePad)*recognizer.SampleRate), 0), len(pcm))
	to := min(max(int((u.End+translatePad)*recognizer.SampleRate), from), len(pcm))
	tu, err := t.r.Translate(ctx, pcm[from:to], "")
	if err != nil {
		return res, err
	}
	off := float64(from) / recognizer.SampleRate
	for _, w := range tu.Words {
		w.Start = min(max(w.Start+off, u.Start), u.End)
		w.End = min(max(w.End+off, w.Start), u.End)
		res.Words = append(res.Words, w)
	}
	res.Text, res.Confidence = tu.Text, tu.Confidence
	return res, nil
}

// engineMetrics are the remote engines' series; Engines.collectors hands
// them to the daemon's registry.
type engineMetrics struct {
	requests  *prometheus.CounterVec
	latency   *prometheus.HistogramVec
	fallbacks *prometheus.CounterVec
}

func newEngineMetrics() engineMetrics {
	return engineMetrics{
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "earshot_remote_requests_total",
			Help: "Requests to remote engines (retries included) by engine, action (transcribe, partial, translate) and outcome (ok, unavailable, timeout, bad_response, circuit_open, cancelled).",
		}, []string{"engine", "action", "outcome"}),
		latency: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "earshot_remote_request_seconds",
			Help:    "Time of remote engine requests that reached the server, retries included, by engine and action.",
			Buckets: []float64{0.05, 0.1, 0.25, 0.5, 1, 2, 5, 10, 30, 60, 120},
		}, []string{"engine", "action"}),
		fallbacks: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "earshot_engine_fallbacks_total",
			Help: "Jobs moved from a failing remote engine to the embedded one, by remote engine and kind (pre-recorded, live).",
		}, []string{"engine", "kind"}),
	}
}

// observe is the remote engines' request observer.
func (m engineMetrics) observe(s remote.RequestStat) {
	m.requests.WithLabelValues(s.Engine, s.Action, s.Outcome).Inc()
	if s.Attempts > 0 {
		m.latency.WithLabelValues(s.Engine, s.Action).Observe(s.Elapsed.Seconds())
	}
}

// countFallback counts a pre-recorded job re-run on the embedded engine.
func (e *Engines) countFallback(from string) {
	e.metrics.fallbacks.WithLabelValues(from, "pre-recorded").Inc()
}

// collectors are the engines' series for the daemon's registry: the
// request counter and latency, the fallbacks, and each remote engine's
// breaker state, read at scrape time.
func (e *Engines) collectors() []prometheus.Collector {
	return []prometheus.Collector{e.metrics.requests, e.metrics.latency, e.metrics.fallbacks, breakerCollector{e.remotes}}
}

// breakerCollector reports earshot_remote_breaker_state{engine,state}: 1
// for each remote engine's current state, 0 for the others.
type breakerCollector struct{ remotes []*remote.Engine }

var descBreaker = prometheus.NewDesc("earshot_remote_breaker_state",
	"Circuit breaker state of each remote engine: 1 for the current state (closed, open, half-open), 0 for the others.",
	[]string{"engine", "state"}, nil)

func (c breakerCollector) Describe(ch chan<- *prometheus.Desc) { ch <- descBreaker }

func (c breakerCollector) Collect(ch chan<- prometheus.Metric) {
	for _, r := range c.remotes {
		cur := r.BreakerState()
		for _, st := range []string{"closed", "open", "half-open"} {
			v := 0.0
			if st == cur {
				v = 1
			}
			ch <- prometheus.MustNewConstMetric(descBreaker, prometheus.GaugeValue, v, r.Name(), st)
		}
	}
}
