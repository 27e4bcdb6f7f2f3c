package daemon

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/earshot-dev/earshot/recognizer"
	"github.com/earshot-dev/earshot/recognizer/addons/llm"
)

// Bounds of a live session's realtime translation.
const (
	// liveTranslationQueue bounds the final utterances waiting for the
	// backend; beyond it an utterance's translation message carries a 503
	// error instead of queueing without bound.
	liveTranslationQueue = 32
	// liveTranslationDrain bounds how long the end of a session waits for
	// translations still in flight before cancelling them.
	liveTranslationDrain = 10 * time.Second
)

// errTranslationBacklog is a live translation's error when the queue of
// utterances waiting for the backend is full.
var errTranslationBacklog = fmt.Errorf("translation: %d utterances already waiting for the backend: %w", liveTranslationQueue, ErrAtCapacity)

// liveAddons is the realtime add-on state of one live session. It is part
// of the session's lifetime (it exists only while the session runs, and its
// worker's context is cancelled when the session finishes). Its fields
// other than mu and ready are used only under the session's mu.
//
// Translation needs the backend and may take seconds, so it does not run
// under the session's lock: finals are queued to one worker goroutine per
// session, started with the first and waited for in finish. The worker
// never touches the session; it leaves finished messages in ready, which
// the session sends (pump) when audio arrives and when it finishes.
type liveAddons struct {
	a      *Addons
	queue  chan liveTranslation // nil until the first translation
	ctx    context.Context      // the worker's; cancelled by finish
	cancel context.CancelFunc
	wg     sync.WaitGroup

	mu    sync.Mutex
	ready []map[string]any // guarded by mu: translation messages not sent yet

	// kept gathers the realtime results for the result's envelopes
	// (live_envelopes.go).
	kept liveKept
}

// liveTranslation is one final utterance to translate.
type liveTranslation struct {
	session, uttID string
	seq            int // the utterance's order in the session
	u              recognizer.Utterance
	targets        []string
	opts           llm.TranslationOptions
}

// addonsLocked returns the session's add-on state, creating it.
func (s *liveSession) addonsLocked() *liveAddons {
	if s.addons == nil {
		s.addons = &liveAddons{a: s.d.tr.Addons.orBuiltin()}
	}
	return s.addons
}

// liveUtteranceID is the id of a live utterance in transcript messages.
func liveUtteranceID(session string, id int) string {
	return fmt.Sprintf("%s_%d", session[:min(8, len(session))], id)
}

// spellLocked applies realtime custom spelling to a partial or final
// utterance before it is sent or kept.
func (s *liveSession) spellLocked(u recognizer.Utterance) recognizer.Utterance {
	rt := s.p.RealtimeProcessing
	if !rt.CustomSpelling || rt.CustomSpellingConfig == nil {
		return u
	}
	la := s.addonsLocked()
	out, err := la.a.guard("custom_spelling", []recognizer.Utterance{u}, func(in []recognizer.Utterance) []recognizer.Utterance {
		return la.a.Spelling.Spell(in, rt.CustomSpellingConfig.SpellingDictionary)
	})
	if err != nil {
		return u
	}
	return out[0]
}

// realtimeLocked sends the realtime add-on messages of one final utterance
// (SPEC 2.7 realtime_processing; shapes in PROTOCOL.md): entities and
// sentiment at once, translation through the backend's worker.
func (s *liveSession) realtimeLocked(id int, u recognizer.Utterance) {
	rt := s.p.RealtimeProcessing
	if !rt.NamedEntityRecognition && !rt.SentimentAnalysis && !rt.Translation {
		return
	}
	la := s.addonsLocked()
	uttID := liveUtteranceID(s.id, id)
	cu := contractUtterance(u, u.Language)
	one := []recognizer.Utterance{u}
	if rt.NamedEntityRecognition {
		env := la.a.envelope("named_entity_recognition", func() (any, bool, error) {
			ents, _ := la.a.Entities.Entities(one, nil)
			return entityResults(ents), len(ents) == 0, nil
		})
		la.kept.keepEntities(env)
		s.sendLocked(realtimeMsg("named_entity_recognition", s.id, env, map[string]any{"utterance_id": uttID, "utterance": cu}))
	}
	if rt.SentimentAnalysis {
		env := la.a.envelope("sentiment_analysis", func() (any, bool, error) {
			list := sentimentResults(la.a.Sentiment.Sentiment(one))
			return list, len(list) == 0, nil
		})
		la.kept.keepSentiment(env)
		s.sendLocked(realtimeMsg("sentiment_analysis", s.id, env, map[string]any{"utterance_id": uttID, "utterance": cu}))
	}
	if rt.Translation && rt.TranslationConfig != nil {
		c := rt.TranslationConfig
		job := liveTranslation{session: s.id, uttID: uttID, seq: id, u: u, targets: c.TargetLanguages,
			opts: llm.TranslationOptions{Context: c.AdaptationContext(), Informal: c.Informal, MatchOriginalUtterances: c.MatchOriginalUtterances}}
		var err error
		switch {
		case la.a.Translation == nil:
			err = errNotConfigured("translation")
		case !la.enqueueLocked(job):
			err = errTranslationBacklog
		}
		if err != nil {
			for _, target := range job.targets {
				la.keepTranslation(liveTranslated{seq: id, target: target, err: addonError(err)})
				s.sendLocked(translationMsg(job, target, nil, addonError(err)))
			}
		}
	}
	s.pumpAddonsLocked()
}

// realtimeMsg is a realtime add-on message: data carries results, error
// the add-on's error (null on success).
func realtimeMsg(typ, session string, env *Envelope, data map[string]any) map[string]any {
	data["results"] = env.Results
	m := msg(typ, session, data)
	m["error"] = env.Error
	return m
}

// translationMsg is one `translation` message (PROTOCOL.md); out is nil on
// error.
func translationMsg(j liveTranslation, target string, out *recognizer.Utterance, aerr *AddonError) map[string]any {
	var tu any
	if out != nil {
		tu = contractUtterance(*out, target)
	}
	m := msg("translation", j.session, map[string]any{
		"utterance_id": j.uttID, "utterance": contractUtterance(j.u, j.u.Language),
		"original_language": j.u.Language, "target_language": target, "translated_utterance": tu,
	})
	m["error"] = aerr
	return m
}

// enqueueLocked queues a final for translation, starting the worker with
// the first; false when the queue is full.
func (la *liveAddons) enqueueLocked(j liveTranslation) bool {
	if la.queue == nil {
		la.ctx, la.cancel = context.WithCancel(context.Background())
		la.queue = make(chan liveTranslation, liveTranslationQueue)
		la.wg.Go(la.translate)
	}
	select {
	case la.queue <- j:
		return true
	default:
		return false
	}
}

// translate is the worker: it translates queued finals until the queue is
// closed, leaving one message per target language in ready.
func (la *liveAddons) translate() {
	for j := range la.queue {
		for _, target := range j.targets {
			var m map[string]any
			done := liveTranslated{seq: j.seq, target: target}
			start := time.Now()
			func() {
				defer func() {
					if r := recover(); r != nil {
						la.a.log.Error("add-on panicked", "addon", "translation", "panic", r)
						done.err = addonError(errAddonPanic)
						m = translationMsg(j, target, nil, done.err)
					}
				}()
				out, err := la.a.Translation.Translate(la.ctx, []recognizer.Utterance{j.u}, target, j.opts)
				switch {
				case err == nil && len(out) != 1:
					err = fmt.Errorf("daemon: translation returned %d utterances for 1: %w", len(out), llm.ErrMalformed)
				case errors.Is(err, context.Canceled) && la.ctx.Err() != nil:
					err = fmt.Errorf("translation: session ended before the backend answered: %w", context.Canceled)
				}
				if err != nil {
					if backendDown(err) {
						la.a.log.Warn("add-on backend failed", "addon", "translation", "error", err)
					}
					done.err = addonError(err)
					m = translationMsg(j, target, nil, done.err)
					return
				}
				done.out = &out[0]
				m = translationMsg(j, target, &out[0], nil)
			}()
			done.exec = time.Since(start).Seconds()
			la.mu.Lock()
			la.ready = append(la.ready, m)
			la.kept.translated = append(la.kept.translated, done)
			la.mu.Unlock()
		}
	}
}

// keepTranslation records a translation outcome for the result.
func (la *liveAddons) keepTranslation(t liveTranslated) {
	la.mu.Lock()
	la.kept.translated = append(la.kept.translated, t)
	la.mu.Unlock()
}

// pumpAddonsLocked sends the translation messages the worker finished.
func (s *liveSession) pumpAddonsLocked() {
	if s.addons == nil {
		return
	}
	la := s.addons
	la.mu.Lock()
	ready := la.ready
	la.ready = nil
	la.mu.Unlock()
	for _, m := range ready {
		s.sendLocked(m)
	}
}

// finishLocked stops the worker: it lets queued translations finish for
// up to drain or until ctx ends (a shutdown), then cancels the rest, and
// waits for the worker to exit.
func (la *liveAddons) finishLocked(ctx context.Context, drain time.Duration) {
	if la.queue == nil {
		return
	}
	close(la.queue)
	t := time.AfterFunc(drain, la.cancel)
	stop := context.AfterFunc(ctx, la.cancel)
	la.wg.Wait()
	t.Stop()
	stop()
	la.cancel()
	la.queue = nil
}

// postProcessLocked runs at the end of a live session, after
// post_transcript: it delivers the last realtime translations, then the
// post_processing add-ons (summarization, chapterization), each as its
// message and its envelope in the result.
func (s *liveSession) postProcessLocked(ctx context.Context, res *Result) {
	if s.addons != nil {
		s.addons.finishLocked(ctx, liveTranslationDrain)
		s.pumpAddonsLocked()
	}
	if rt := s.p.RealtimeProcessing; rt.NamedEntityRecognition || rt.SentimentAnalysis || rt.Translation {
		la := s.addonsLocked()
		var targets []string
		if rt.Translation && rt.TranslationConfig != nil {
			targets = rt.TranslationConfig.TargetLanguages
		}
		la.mu.Lock() // the worker has stopped; the lock orders its writes before this read
		translated := la.kept.translated
		la.mu.Unlock()
		la.kept.fill(res, rt.NamedEntityRecognition, rt.SentimentAnalysis, targets, translated)
	}
	pp := s.p.PostProcessing
	if !pp.Summarization && !pp.Chapterization {
		return
	}
	a := s.addonsLocked().a
	if pp.Summarization {
		typ := pp.SummarizationConfig.Type
		if typ == "" {
			typ = "general"
		}
		res.Summarization = a.summaryEnvelope(ctx, s.finals, typ)
		s.sendLocked(postMsg("post_summarization", s.id, res.Summarization))
	}
	if pp.Chapterization {
		res.Chapterization = a.chaptersEnvelope(ctx, s.finals)
		s.sendLocked(postMsg("post_chapterization", s.id, res.Chapterization))
	}
}

// postMsg is a post-processing message {error, data: {results}}.
func postMsg(typ, session string, env *Envelope) map[string]any {
	m := msg(typ, session, map[string]any{"results": env.Results})
	m["error"] = env.Error
	return m
}
