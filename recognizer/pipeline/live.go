package pipeline

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/earshot-dev/earshot/errcode"
	"github.com/earshot-dev/earshot/params"
	"github.com/earshot-dev/earshot/recognizer"
	"github.com/earshot-dev/earshot/recognizer/remote"
)

// LiveOptions is what a live session asks of the engines (SPEC 2.3, 2.6,
// 2.7 realtime custom_vocabulary).
type LiveOptions struct {
	// Model, Languages and CodeSwitching route the session as Route does.
	Model         string
	Languages     []string
	CodeSwitching bool
	// Narrowband is set for audio below 16 kHz (a call): the embedded
	// engine then decodes with its telephone-band pool.
	Narrowband bool
	// Vocabulary is realtime custom_vocabulary_config, nil when
	// custom_vocabulary is off.
	Vocabulary *params.VocabularyConfig
	// DecoderWait bounds the wait for an embedded decoder when a failing
	// remote engine hands the session over.
	DecoderWait time.Duration
	// Notify sends the client an error message (the fallback switch); it
	// is called from within the recogniser.
	Notify func(string)
}

// LiveRoute is the engine a live session's recogniser runs on and what its
// result says about it.
type LiveRoute struct {
	// Engine is what recognizer.NewLive takes: the routed engine, behind
	// the fallback of a remote route and the language keeper of a
	// detecting session without code switching.
	Engine recognizer.Engine
	// Language is the language to decode, "" when the engine detects it.
	Language string

	vocab     []recognizer.VocabularyWord // the embedded engine's words
	prompt    string                      // a remote engine's prompt
	route     Route
	bandNotes map[string]any
	vocabNote string
	remote    *liveEngine       // the remote route's engine (errors, fallback), nil otherwise
	batch     recognizer.Engine // the embedded engine's batch pool for the band, nil on a remote route
}

// Live routes a live session (Route), picks the band's engine, gives it
// the session's vocabulary (a remote engine's prompt, or the embedded
// engine's words) and wraps a remote route in the fallback policy.
func (e *Engines) Live(o LiveOptions) (*LiveRoute, error) {
	rt, err := e.Route(o.Model, o.Languages, o.CodeSwitching)
	if err != nil {
		return nil, err
	}
	lr := &LiveRoute{}
	band := recognizer.Band{Narrowband: o.Narrowband, ByRate: true}
	if rt.remote == nil {
		lr.batch, _ = e.forBand(rt.Engine, band, true)
	}
	rt.Engine, lr.bandNotes = e.forBand(rt.Engine, band, false)
	if o.Vocabulary != nil && rt.remote != nil {
		lr.prompt = vocabularyPrompt(o.Vocabulary)
	} else if o.Vocabulary != nil {
		lr.vocab, lr.vocabNote = vocabularyWords(rt.Engine, rt.Language, o.Vocabulary)
	}
	lr.route, lr.Language = rt, rt.Language
	eng := e.liveEngine(rt, band, o.Languages, o.DecoderWait, o.Notify)
	lr.remote, _ = eng.(*liveEngine)
	if rt.Language == "" && !rt.PerUtterance {
		eng = keepLanguage(eng) // no code switching: the first language detected is kept
	}
	lr.Engine = eng
	return lr, nil
}

// Configure sets what the recogniser passes to the engine's streams: the
// language (or detection) and the session's vocabulary.
func (l *LiveRoute) Configure(c *recognizer.LiveConfig) {
	c.Language, c.Detect = l.Language, l.Language == ""
	c.Vocabulary, c.Prompt = l.vocab, l.prompt
}

// BatchEngine is the pool that decodes whole recordings of the session's
// band on its embedded route (a revised final decodes a live segment again
// on it, daemon/live/revise.go), nil on a remote route.
func (l *LiveRoute) BatchEngine() recognizer.Engine { return l.batch }

// Remote reports whether the session runs on a remote engine (whose
// requests wait on the network, not on this machine's CPU).
func (l *LiveRoute) Remote() bool { return l.remote != nil }

// Notes is the engine part of the session's post_session_metadata: the
// engine, the audio band and acoustic model, custom_vocabulary, and the
// fallback and engine errors of a remote route.
func (l *LiveRoute) Notes() map[string]any {
	n := map[string]any{"engine": l.route.Engine.Name()}
	for k, v := range l.bandNotes {
		n[k] = v
	}
	if l.vocabNote != "" {
		n["custom_vocabulary"] = l.vocabNote
	}
	for k, v := range l.remote.notes() { // fallback, engine errors
		n[k] = v
	}
	return n
}

// DefaultLanguage is the session's language when nothing was detected:
// the route's, else the routed engine's first ("" when it lists none).
func (l *LiveRoute) DefaultLanguage() string {
	if l.route.Language != "" {
		return l.route.Language
	}
	if langs := l.route.Engine.Languages(); len(langs) > 0 {
		return langs[0]
	}
	return ""
}

// LiveResult is a live session's result (without add-ons) from its
// finals: in lang, or, when detecting, in the language heard on most of
// the speech; channels is the session's channel count.
func LiveResult(finals []recognizer.Utterance, duration float64, channels int, lang string, detecting bool) *Result {
	if detecting {
		if main := mainLanguage(finals); main != "" {
			lang = main
		}
	}
	br := &recognizer.BatchResult{Utterances: finals, DistinctChannels: channels, Language: lang}
	r := buildResult(br, duration, lang)
	if len(finals) > 0 {
		r.Transcription.Languages = detectedLanguages(lang, finals)
	}
	return r
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
	primary *remote.Engine
	// embedded is the embedded engine's pool for the session's band
	// (forBand), narrow whether the band is the telephone band.
	embedded recognizer.Engine
	narrow   bool
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
// rt: rt's engine itself when it is not remote, else a *liveEngine. band
// is the session's audio band, listed is language_config.languages, wait
// the session's decoder wait, notify sends the client an error message.
func (e *Engines) liveEngine(rt Route, band recognizer.Band, listed []string, wait time.Duration, notify func(string)) recognizer.Engine {
	r := rt.remote
	if r == nil {
		return rt.Engine
	}
	embedded, _ := e.forBand(e.embedded, band, false)
	return &liveEngine{
		primary:      r,
		embedded:     embedded,
		narrow:       band.Narrowband,
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
		return l.embedded.NewStream(ctx, recognizer.StreamOptions{Language: l.fallbackLang, Narrowband: l.narrow, Tenant: o.Tenant})
	}
	st, err := l.primary.NewStream(ctx, o)
	if err != nil {
		return nil, err
	}
	return &liveStream{l: l, cur: st, remote: true, tenant: o.Tenant}, nil
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
	tenant string  // StreamOptions.Tenant, for the embedded stream of a fallback
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
	st, nerr := l.embedded.NewStream(ctx, recognizer.StreamOptions{Language: l.fallbackLang, Narrowband: l.narrow, Tenant: s.tenant})
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
	if jerr != nil && l.switchOnce(name, errcode.Message(jerr)+": "+err.Error()) {
		l.fallbacks.Inc()
		l.notify(fmt.Sprintf("%s; the session continues on engine %s", errcode.Message(jerr), l.embedded.Name()))
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
	l.lastErr = errcode.Message(err)
}
