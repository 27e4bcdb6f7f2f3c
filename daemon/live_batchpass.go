package daemon

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"runtime"
	"runtime/debug"
	"sync"
	"time"

	"github.com/earshot-dev/earshot/callback"
	"github.com/earshot-dev/earshot/params"
	"github.com/earshot-dev/earshot/recognizer"
	"github.com/earshot-dev/earshot/recognizer/pipeline"
	"github.com/earshot-dev/earshot/store"
)

// The batch pass: a live session's record is made as good as a
// pre-recorded job's on the same audio.
//
// When a session ends it stores its live result at once (status done, so
// a client polling GET /v2/live/{id} has a result as promptly as before)
// and queues a batch pass in the store's durable queue (store.BatchPass;
// it survives a restart). A worker runs it: the pre-recorded pipeline
// (TranscribeFile, the same engines, routing and add-ons as POST
// /v2/pre-recorded) over the whole recording, with the session's options
// mapped to their pre-recorded twins (batchParams). Its result replaces
// the stored one in one transaction, together with the callback's final
// messages, which the session held back (holdsForBatchPass) so that a
// callback receives one final record. post_session_metadata says which
// pass produced the result (transcription_pass) and where the batch pass
// stands (batch_pass). A pass that fails keeps the live result, says why
// in batch_pass_error, and sends the held messages with the live result.

// Values of post_session_metadata.transcription_pass and .batch_pass.
const (
	passLive         = "live"    // the result is the live finals
	passBatch        = "batch"   // the result is the batch pass's
	batchPassPending = "pending" // queued or running
	batchPassDone    = "done"
	batchPassFailed  = "failed"
	batchPassOff     = "off" // live.batch_pass is false, or nothing was recorded
)

// gatePoll is how often a batch pass waiting for decoders looks again at
// the live sessions (sessions come and go without telling it).
const gatePoll = 100 * time.Millisecond

// batchGate keeps batch passes below live audio in priority. A batch pass
// checks a decoder out (one VAD segment at a time) only when every channel
// of every live session (connected or still to connect) could hold a
// decoder at the same time as the passes do, counted against the smallest
// embedded pool; while any live session exists, at most one segment of
// batch passes decodes at a time (one core for live audio on a 2-core
// box). Remote engines are not gated: their capacity is not ours.
type batchGate struct {
	d *Daemon

	mu   sync.Mutex
	held int           // guarded by mu: decoders held by batch passes
	wake chan struct{} // guarded by mu: closed and replaced when held drops
}

func newBatchGate(d *Daemon) *batchGate { return &batchGate{d: d, wake: make(chan struct{})} }

// liveChannels is how many decoders the live sessions could need at once.
func (g *batchGate) liveChannels() int {
	g.d.liveMu.Lock()
	defer g.d.liveMu.Unlock()
	n := 0
	for _, s := range g.d.sessions {
		n += s.p.Channels
	}
	return n
}

// capacity is the smallest embedded decoder pool.
func (g *batchGate) capacity() int {
	c := g.d.cfg.Sphinx.Decoders
	if g.d.pl.TelephoneModel() != "" {
		c = min(c, g.d.cfg.Sphinx.TelephoneDecoders)
	}
	return c
}

// openLocked reports whether a batch pass may take one more decoder with
// live channels running.
func (g *batchGate) openLocked(live int) bool {
	limit := runtime.NumCPU()
	if live > 0 {
		limit = 1
	}
	return g.held < limit && g.held+live < g.capacity()
}

// open reports whether a batch pass could start decoding now (workers
// claim a pass only then, so a closed gate does not hold a worker that a
// pre-recorded job could use).
func (g *batchGate) open() bool {
	live := g.liveChannels()
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.openLocked(live)
}

// acquire waits until the gate lets one more decoder go to a batch pass.
func (g *batchGate) acquire(ctx context.Context) error {
	tick := time.NewTicker(gatePoll)
	defer tick.Stop()
	for {
		live := g.liveChannels()
		g.mu.Lock()
		if g.openLocked(live) {
			g.held++
			g.mu.Unlock()
			return nil
		}
		wake := g.wake
		g.mu.Unlock()
		select {
		case <-ctx.Done():
			return context.Cause(ctx)
		case <-wake:
		case <-tick.C:
		}
	}
}

func (g *batchGate) release() {
	g.mu.Lock()
	g.held--
	close(g.wake)
	g.wake = make(chan struct{})
	g.mu.Unlock()
}

// wrap gates e's streams; the pipeline calls it on embedded engines only
// (pipeline.Transcriber.Gate), remote ones are not ours to gate.
func (g *batchGate) wrap(e recognizer.Engine) recognizer.Engine {
	return gatedEngine{Engine: e, g: g}
}

type gatedEngine struct {
	recognizer.Engine
	g *batchGate
}

func (e gatedEngine) NewStream(ctx context.Context, o recognizer.StreamOptions) (recognizer.Stream, error) {
	if err := e.g.acquire(ctx); err != nil {
		return nil, fmt.Errorf("batch pass: wait for a decoder: %w", err)
	}
	st, err := e.Engine.NewStream(ctx, o)
	if err != nil {
		e.g.release()
		return nil, err
	}
	gs := &gatedStream{Stream: st, g: e.g}
	if wd, ok := st.(interface {
		Decode([]int16) (recognizer.Utterance, error)
	}); ok {
		return gatedWholeStream{gatedStream: gs, decode: wd.Decode}, nil
	}
	return gs, nil
}

// gatedStream returns its gate share on Close.
type gatedStream struct {
	recognizer.Stream
	g    *batchGate
	once sync.Once
}

func (s *gatedStream) Close() error {
	err := s.Stream.Close()
	s.once.Do(s.g.release)
	return err
}

// gatedWholeStream keeps the one-pass Decode of the stream it wraps
// (recognizer.Transcribe prefers it).
type gatedWholeStream struct {
	*gatedStream
	decode func([]int16) (recognizer.Utterance, error)
}

func (s gatedWholeStream) Decode(pcm []int16) (recognizer.Utterance, error) { return s.decode(pcm) }

// batchParams maps a live session's options to the pre-recorded request
// the batch pass runs: language, model, custom vocabulary and spelling,
// and the add-ons whose results derive from the transcript.
func batchParams(lp *params.Live) *params.PreRecorded {
	p := &params.PreRecorded{Model: lp.Model, LanguageConfig: lp.LanguageConfig}
	rt := lp.RealtimeProcessing
	if rt.CustomVocabulary {
		on := true
		p.CustomVocabulary, p.CustomVocabularyConfig = &on, rt.CustomVocabularyConfig
	}
	if rt.CustomSpelling {
		p.CustomSpelling, p.CustomSpellingConfig = true, rt.CustomSpellingConfig
	}
	if rt.Translation {
		p.Translation, p.TranslationConfig = true, rt.TranslationConfig
	}
	p.NamedEntityRecognition = rt.NamedEntityRecognition
	p.SentimentAnalysis = rt.SentimentAnalysis
	if lp.PostProcessing.Summarization {
		sc := lp.PostProcessing.SummarizationConfig
		p.Summarization, p.SummarizationConfig = true, &sc
	}
	return p
}

// batchPassWanted reports whether the session's end queues a batch pass:
// configured on, and audio was recorded.
func (s *liveSession) batchPassWanted() bool {
	return s.d.cfg.Live.batchPass() && s.audio > 0
}

// labelPassLocked marks the stored live result with the pass that made it
// and queues the batch pass when there is to be one (inside the
// UpdateJob that stores the result).
func (s *liveSession) labelPassLocked(j *store.Job) {
	if j.PostSessionMetadata == nil {
		j.PostSessionMetadata = map[string]any{}
	}
	j.PostSessionMetadata["transcription_pass"] = passLive
	j.PostSessionMetadata["batch_pass"] = batchPassOff
	if s.batchPass {
		j.PostSessionMetadata["batch_pass"] = batchPassPending
		j.BatchPass = store.BatchPassQueued
	}
}

// holdsForBatchPass reports whether a message of type typ goes to the
// callback only after the batch pass (the final ones, so that the
// callback gets one final record).
func (s *liveSession) holdsForBatchPass(typ string) bool {
	if !s.batchPass {
		return false
	}
	switch typ {
	case "post_transcript", "post_summarization", "post_chapterization", "post_final_transcript", "end_session":
		return true
	}
	return false
}

// runBatchPass runs a claimed batch pass and stores its outcome. A pass
// interrupted by shutdown goes back to the queue.
func (d *Daemon) runBatchPass(ctx context.Context, log *slog.Logger, job *store.Job) {
	log = log.With("job_id", job.ID, "pass", passBatch)
	jctx, cancel := context.WithCancel(ctx)
	d.mu.Lock()
	d.running[job.ID] = cancel // DELETE cancels it
	d.mu.Unlock()
	defer func() {
		d.mu.Lock()
		delete(d.running, job.ID)
		d.mu.Unlock()
		cancel()
	}()
	if job.Attempts > d.cfg.Limits.MaxAttempts {
		d.endBatchPass(ctx, log, job.ID, nil, fmt.Errorf("batch pass started %d times without finishing; giving up", job.Attempts-1), 0)
		return
	}
	start := time.Now()
	res, err := d.batchTranscribe(jctx, job)
	switch {
	case ctx.Err() != nil:
		_, uerr := d.db.UpdateJob(job.ID, func(j *store.Job) ([]*store.Delivery, error) {
			if j.BatchPass == store.BatchPassRunning {
				j.BatchPass = store.BatchPassQueued
			}
			return nil, nil
		})
		if uerr != nil && !errors.Is(uerr, store.ErrNotFound) {
			log.Error("requeue batch pass", "error", uerr)
		}
		return
	case jctx.Err() != nil:
		return // deleted while running
	}
	d.endBatchPass(ctx, log, job.ID, res, err, time.Since(start))
}

// batchTranscribe runs the pre-recorded pipeline over a live job's
// recording with the session's options, its decoders gated below live
// audio. Panics are confined to the pass.
func (d *Daemon) batchTranscribe(ctx context.Context, job *store.Job) (res *pipeline.Result, err error) {
	defer func() {
		if r := recover(); r != nil {
			d.log.Error("batch pass panicked", "job_id", job.ID, "panic", r, "stack", string(debug.Stack()))
			res, err = nil, errors.New("internal error")
		}
	}()
	var lp params.Live
	if err := json.Unmarshal(job.Params, &lp); err != nil {
		return nil, fmt.Errorf("decode stored params: %w", err)
	}
	if job.Blob == "" {
		return nil, errors.New("no recording")
	}
	p := batchParams(&lp)
	tr := *d.pl
	tr.Gate = d.gate.wrap
	path, release, err := d.blobFile(job.Blob)
	if err != nil {
		return nil, err
	}
	defer release()
	res, _, err = tr.TranscribeFile(ctx, path, p)
	if err != nil {
		return nil, err
	}
	if lp.PostProcessing.Chapterization {
		res.Chapterization = tr.Addons.OrBuiltin().ChaptersEnvelope(ctx, recognizerUtterances(res.Transcription.Utterances))
	}
	return res, nil
}

// recognizerUtterances turns contract utterances back into the
// recogniser's, for the add-ons that take those.
func recognizerUtterances(us []pipeline.Utterance) []recognizer.Utterance {
	out := make([]recognizer.Utterance, 0, len(us))
	for _, u := range us {
		ru := recognizer.Utterance{Start: u.Start, End: u.End, Confidence: u.Confidence, Channel: u.Channel, Text: u.Text, Language: u.Language}
		for _, w := range u.Words {
			ru.Words = append(ru.Words, recognizer.Word{Word: w.Word, Start: w.Start, End: w.End, Confidence: w.Confidence})
		}
		out = append(out, ru)
	}
	return out
}

// endBatchPass stores a batch pass's outcome: res replaces the live result
// (keeping result.messages, what the session sent), or cause keeps it and
// is noted; either way the callback's held final messages are queued in
// the same transaction. A disk too full for that is retried with backoff
// until ctx ends (the pass then stays running, and Recover queues it
// again).
func (d *Daemon) endBatchPass(ctx context.Context, log *slog.Logger, id string, res *pipeline.Result, cause error, took time.Duration) {
	wait := 100 * time.Millisecond
	for {
		_, err := d.db.UpdateJob(id, func(j *store.Job) ([]*store.Delivery, error) {
			return d.fillBatchPass(j, res, cause, took)
		})
		switch {
		case errors.Is(err, store.ErrNotFound), errors.Is(err, errNoBatchPass):
			return
		case errors.Is(err, store.ErrNoSpace):
			select {
			case <-ctx.Done():
				return
			case <-time.After(wait):
			}
			wait = min(2*wait, 5*time.Second)
			continue
		case err != nil:
			log.Error("store batch pass", "error", err)
			return
		}
		d.outbox.Wake()
		if cause != nil {
			log.Warn("batch pass failed; the live result stays", "error", cause)
		} else {
			log.Info("batch pass done", "elapsed_ms", took.Milliseconds())
		}
		return
	}
}

// errNoBatchPass aborts storing a pass whose job no longer waits for one.
var errNoBatchPass = errors.New("daemon: no batch pass running")

// fillBatchPass is endBatchPass's change to the job record.
func (d *Daemon) fillBatchPass(j *store.Job, res *pipeline.Result, cause error, took time.Duration) ([]*store.Delivery, error) {
	if j.BatchPass != store.BatchPassRunning || j.Status != store.StatusDone {
		return nil, errNoBatchPass
	}
	j.BatchPass = ""
	if j.PostSessionMetadata == nil {
		j.PostSessionMetadata = map[string]any{}
	}
	md := j.PostSessionMetadata
	var live pipeline.Result
	if len(j.Result) > 0 {
		if err := json.Unmarshal(j.Result, &live); err != nil {
			return nil, fmt.Errorf("decode live result: %w", err)
		}
	}
	final := &live
	if cause == nil && res != nil {
		res.Messages = live.Messages
		body, err := json.Marshal(res)
		if err != nil {
			return nil, fmt.Errorf("encode batch result: %w", err)
		}
		j.Result = body
		final = res
		for k, v := range res.PostSessionMetadata { // engine, band, add-on notes of this pass
			md[k] = v
		}
		md["transcription_pass"] = passBatch
		md["batch_pass"] = batchPassDone
		md["batch_pass_seconds"] = pipeline.Round3(took.Seconds())
	} else {
		md["batch_pass"] = batchPassFailed
		md["batch_pass_error"] = Message(cause)
	}
	return d.heldCallbacks(j, final)
}

// heldCallbacks are the callback deliveries of the final messages the
// session held back, made from the final result (built in the protocol's
// order; the outbox sends deliveries independently).
func (d *Daemon) heldCallbacks(j *store.Job, res *pipeline.Result) ([]*store.Delivery, error) {
	var lp params.Live
	if err := json.Unmarshal(j.Params, &lp); err != nil {
		return nil, fmt.Errorf("decode stored params: %w", err)
	}
	url, method, ok := lp.CallbackTarget()
	if !ok {
		return nil, nil
	}
	final := *res
	final.Messages = nil
	msgs := []map[string]any{msg("post_transcript", j.ID, final.Transcription)}
	if lp.PostProcessing.Summarization && final.Summarization != nil {
		msgs = append(msgs, postMsg("post_summarization", j.ID, final.Summarization))
	}
	if lp.PostProcessing.Chapterization && final.Chapterization != nil {
		msgs = append(msgs, postMsg("post_chapterization", j.ID, final.Chapterization))
	}
	msgs = append(msgs, msg("post_final_transcript", j.ID, &final), msg("end_session", j.ID, nil))
	var out []*store.Delivery
	for _, m := range msgs {
		if !switchFor(lp.CallbackConfig.MessageSwitches, m) {
			continue
		}
		b, err := json.Marshal(m)
		if err != nil {
			return nil, err
		}
		body, err := json.Marshal(callback.Body{ID: j.ID, Event: "live." + m["type"].(string), Payload: json.RawMessage(b)})
		if err != nil {
			return nil, err
		}
		out = append(out, &store.Delivery{JobID: j.ID, Account: j.Account, URL: url, Method: method, Body: body})
	}
	return out, nil
}
