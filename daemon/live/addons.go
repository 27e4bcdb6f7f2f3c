package live

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/earshot-dev/earshot/ingest"
	"github.com/earshot-dev/earshot/transcript"

	"github.com/earshot-dev/earshot/recognizer"
	"github.com/earshot-dev/earshot/recognizer/addons/llm"
	"github.com/earshot-dev/earshot/recognizer/pipeline"
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
var errTranslationBacklog = fmt.Errorf("translation: %d utterances already waiting for the backend: %w", liveTranslationQueue, ingest.ErrAtCapacity)

// liveAddons is the realtime add-on state of one live session. It is part
// of the session's lifetime (it exists only while the session runs, and its
// worker's context is cancelled when the session finishes). Its fields
// other than mu, ready and wake are used only by the session's goroutine.
//
// Translation needs the backend and may take seconds, so it does not run
// on the session's goroutine: finals are queued to one worker goroutine
// per session, started with the first and waited for in finish. The
// worker never touches the session; it leaves finished messages in ready
// and wakes the session, which sends them (pumpAddons).
type liveAddons struct {
	a      *pipeline.Addons
	queue  chan liveTranslation // nil until the first translation
	ctx    context.Context      // the worker's; cancelled by finish
	cancel context.CancelFunc
	wg     sync.WaitGroup

	mu    sync.Mutex
	ready []*message    // guarded by mu: translation messages not sent yet
	wake  chan struct{} // cap 1: ready has messages

	// kept gathers the realtime results for the result's envelopes;
	// kept.Translated is guarded by mu.
	kept pipeline.LiveKept
}

// liveTranslation is one final utterance to translate.
type liveTranslation struct {
	session, uttID string
	seq            int // the utterance's order in the session
	u              recognizer.Utterance
	targets        []string
	opts           llm.TranslationOptions
}

// addonState returns the session's add-on state, creating it.
func (s *session) addonState() *liveAddons {
	if s.addons == nil {
		s.addons = &liveAddons{a: s.svc.pl.Addons.OrBuiltin(), wake: make(chan struct{}, 1)}
	}
	return s.addons
}

// addonsReady is the channel the session's loop hears finished
// translations on: nil (never ready) without add-ons.
func (s *session) addonsReady() <-chan struct{} {
	if s.addons == nil {
		return nil
	}
	return s.addons.wake
}

// liveUtteranceID is the id of a live utterance in transcript messages.
func liveUtteranceID(session string, id int) string {
	return fmt.Sprintf("%s_%d", session[:min(8, len(session))], id)
}

// spell applies realtime custom spelling to a partial or final utterance
// before it is sent or kept.
func (s *session) spell(u recognizer.Utterance) recognizer.Utterance {
	rt := s.p.RealtimeProcessing
	if !rt.CustomSpelling || rt.CustomSpellingConfig == nil {
		return u
	}
	return s.addonState().a.SpellUtterance(u, rt.CustomSpellingConfig.SpellingDictionary)
}

// realtime sends the realtime add-on messages of one final utterance
// (SPEC 2.7 realtime_processing; shapes in PROTOCOL.md): entities and
// sentiment at once, translation through the backend's worker.
func (s *session) realtime(id int, u recognizer.Utterance) {
	rt := s.p.RealtimeProcessing
	if !rt.NamedEntityRecognition && !rt.SentimentAnalysis && !rt.Translation {
		return
	}
	la := s.addonState()
	uttID := liveUtteranceID(s.id, id)
	cu := pipeline.ContractUtterance(u, u.Language)
	one := []recognizer.Utterance{u}
	if rt.NamedEntityRecognition {
		env := la.a.EntitiesEnvelope(one)
		la.kept.KeepEntities(env)
		s.send(realtimeMsg(typeEntities, s.id, env, uttID, cu))
	}
	if rt.SentimentAnalysis {
		env := la.a.SentimentEnvelope(one)
		la.kept.KeepSentiment(env)
		s.send(realtimeMsg(typeSentiment, s.id, env, uttID, cu))
	}
	if rt.Translation && rt.TranslationConfig != nil {
		c := rt.TranslationConfig
		job := liveTranslation{session: s.id, uttID: uttID, seq: id, u: u, targets: c.TargetLanguages,
			opts: llm.TranslationOptions{Context: c.AdaptationContext(), Informal: c.Informal, MatchOriginalUtterances: c.MatchOriginalUtterances}}
		err := la.a.TranslationUnavailable()
		if err == nil && !la.enqueue(job) {
			err = errTranslationBacklog
		}
		if err != nil {
			aerr := pipeline.ErrorOf(err)
			for _, target := range job.targets {
				la.keepTranslation(pipeline.LiveTranslated{Seq: id, Target: target, Err: aerr})
				s.send(translationMsg(job, target, nil, aerr))
			}
		}
	}
	s.pumpAddons()
}

// realtimeMsg is a realtime add-on message: data carries results, error
// the add-on's error (null on success).
func realtimeMsg(typ, session string, env *transcript.Envelope, uttID string, cu transcript.Utterance) *message {
	return msg(typ, session, realtimeData{Results: env.Results, UtteranceID: uttID, Utterance: cu}).withError(env.Error)
}

// translationMsg is one `translation` message (PROTOCOL.md); out is nil on
// error.
func translationMsg(j liveTranslation, target string, out *recognizer.Utterance, aerr *transcript.AddonError) *message {
	var tu any
	if out != nil {
		tu = pipeline.ContractUtterance(*out, target)
	}
	return msg(typeTranslation, j.session, translationData{
		UtteranceID: j.uttID, Utterance: pipeline.ContractUtterance(j.u, j.u.Language),
		OriginalLanguage: j.u.Language, TargetLanguage: target, TranslatedUtterance: tu,
	}).withError(aerr)
}

// enqueue queues a final for translation, starting the worker with the
// first; false when the queue is full.
func (la *liveAddons) enqueue(j liveTranslation) bool {
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
			start := time.Now()
			out, aerr := la.a.TranslateUtterance(la.ctx, j.u, target, j.opts)
			done := pipeline.LiveTranslated{Seq: j.seq, Target: target, Out: out, Err: aerr, Exec: time.Since(start).Seconds()}
			m := translationMsg(j, target, out, aerr)
			la.mu.Lock()
			la.ready = append(la.ready, m)
			la.kept.Translated = append(la.kept.Translated, done)
			la.mu.Unlock()
			select {
			case la.wake <- struct{}{}:
			default:
			}
		}
	}
}

// keepTranslation records a translation outcome for the result.
func (la *liveAddons) keepTranslation(t pipeline.LiveTranslated) {
	la.mu.Lock()
	la.kept.Translated = append(la.kept.Translated, t)
	la.mu.Unlock()
}

// pumpAddons sends the translation messages the worker finished.
func (s *session) pumpAddons() {
	if s.addons == nil {
		return
	}
	la := s.addons
	la.mu.Lock()
	ready := la.ready
	la.ready = nil
	la.mu.Unlock()
	for _, m := range ready {
		s.send(m)
	}
}

// finish stops the worker: it lets queued translations finish for up to
// drain or until ctx ends (a shutdown), then cancels the rest, and waits
// for the worker to exit.
func (la *liveAddons) finish(ctx context.Context, drain time.Duration) {
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

// postProcess runs at the end of a live session, after post_transcript:
// it delivers the last realtime translations, then the post_processing
// add-ons (summarization, chapterization), each as its message and its
// envelope in the result.
func (s *session) postProcess(ctx context.Context, res *pipeline.Result) {
	if s.addons != nil {
		s.addons.finish(ctx, liveTranslationDrain)
		s.pumpAddons()
	}
	if rt := s.p.RealtimeProcessing; rt.NamedEntityRecognition || rt.SentimentAnalysis || rt.Translation {
		la := s.addonState()
		var targets []string
		if rt.Translation && rt.TranslationConfig != nil {
			targets = rt.TranslationConfig.TargetLanguages
		}
		la.mu.Lock() // the worker has stopped; the lock orders its writes before this read
		translated := la.kept.Translated
		la.mu.Unlock()
		la.kept.Fill(res, rt.NamedEntityRecognition, rt.SentimentAnalysis, targets, translated)
	}
	pp := s.p.PostProcessing
	if !pp.Summarization && !pp.Chapterization {
		return
	}
	a := s.addonState().a
	if pp.Summarization {
		typ := pp.SummarizationConfig.Type
		if typ == "" {
			typ = "general"
		}
		res.Summarization = a.SummaryEnvelope(ctx, s.finals, typ)
		s.send(postMsg(typePostSummarization, s.id, res.Summarization))
	}
	if pp.Chapterization {
		res.Chapterization = a.ChaptersEnvelope(ctx, s.finals)
		s.send(postMsg(typePostChapterization, s.id, res.Chapterization))
	}
}

// postMsg is a post-processing message {error, data: {results}}.
func postMsg(typ, session string, env *transcript.Envelope) *message {
	return msg(typ, session, resultsData{Results: env.Results}).withError(env.Error)
}
