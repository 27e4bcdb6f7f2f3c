package live

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"runtime/debug"
	"time"

	"github.com/earshot-dev/earshot/errcode"
	"github.com/earshot-dev/earshot/params"
	"github.com/earshot-dev/earshot/recognizer"
	"github.com/earshot-dev/earshot/recognizer/pipeline"
	"github.com/earshot-dev/earshot/store"
	"github.com/earshot-dev/earshot/transcript"
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
	return piiParams(p, lp)
}

// labelPass marks the stored live result with the pass that made it and
// queues the batch pass when there is to be one (inside the UpdateJob
// that stores the result).
func (s *session) labelPass(j *store.Job) {
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
func (s *session) holdsForBatchPass(typ string) bool {
	if !s.batchPass {
		return false
	}
	switch typ {
	case typePostTranscript, typePostSummarization, typePostChapterization, typePostFinalTranscript, typeEndSession:
		return true
	}
	return false
}

// RunBatchPass runs a batch pass a worker claimed and stores its outcome:
// ctx is the worker's (its end puts the pass back in the queue), jctx the
// job's own (DELETE cancels it); a pass started more than maxAttempts
// times gives up.
func (s *Service) RunBatchPass(ctx, jctx context.Context, log *slog.Logger, job *store.Job, maxAttempts int) {
	log = log.With("job_id", job.ID, "pass", passBatch)
	if job.Attempts > maxAttempts {
		s.endBatchPass(ctx, log, job.ID, nil, fmt.Errorf("batch pass started %d times without finishing; giving up", job.Attempts-1), 0)
		return
	}
	start := time.Now()
	res, err := s.batchTranscribe(jctx, job)
	switch {
	case ctx.Err() != nil:
		_, uerr := s.db.UpdateJob(job.ID, func(j *store.Job) ([]*store.Delivery, error) {
			if j.BatchPass == store.BatchPassRunning {
				j.BatchPass = store.BatchPassQueued
			}
			return nil, nil
		})
		switch {
		case errors.Is(uerr, store.ErrClosed):
			// The shutdown did not wait for this pass's decoder call (a
			// niced thread can be starved on a loaded box): the store
			// puts a pass left running back in the queue at the next
			// start.
			log.Info("batch pass left to the next start", "elapsed_ms", time.Since(start).Milliseconds())
		case uerr != nil && !errors.Is(uerr, store.ErrNotFound):
			log.Error("requeue batch pass", "error", uerr)
		case uerr == nil:
			log.Info("batch pass requeued", "elapsed_ms", time.Since(start).Milliseconds())
		}
		return
	case jctx.Err() != nil:
		return // deleted while running
	}
	s.endBatchPass(ctx, log, job.ID, res, err, time.Since(start))
}

// batchTranscribe runs the pre-recorded pipeline over a live job's
// recording with the session's options, its decoders gated below live
// audio. Panics are confined to the pass.
func (s *Service) batchTranscribe(ctx context.Context, job *store.Job) (res *pipeline.Result, err error) {
	defer func() {
		if r := recover(); r != nil {
			s.log.Error("batch pass panicked", "job_id", job.ID, "panic", r, "stack", string(debug.Stack()))
			res, err = nil, errors.New("internal error")
		}
	}()
	lp, err := params.StoredLive(job.Params)
	if err != nil {
		return nil, err
	}
	if job.Blob == "" {
		return nil, errors.New("no recording")
	}
	p := batchParams(lp)
	tr := *s.pl
	tr.Gate, tr.Record = s.gate.wrap, true
	path, release, err := s.deps.Recordings.BlobFile(job.Blob)
	if err != nil {
		return nil, err
	}
	defer release()
	res, _, err = tr.TranscribeFile(ctx, path, p)
	if err != nil {
		return nil, err
	}
	// The words the pass redacted leave the recording before its result
	// is stored (redact.go).
	if err := s.blankStored(job.Blob, path, res); err != nil {
		return nil, fmt.Errorf("%w: %w", errUnredacted, err)
	}
	s.combineRecord(ctx, &tr, job, path, p, res)
	if lp.PostProcessing.Chapterization {
		res.Chapterization = tr.Addons.OrBuiltin().ChaptersEnvelope(ctx, recognizerUtterances(res.Transcription.Utterances))
	}
	return res, nil
}

// recognizerUtterances turns contract utterances back into the
// recogniser's, for the add-ons that take those.
func recognizerUtterances(us []transcript.Utterance) []recognizer.Utterance {
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
func (s *Service) endBatchPass(ctx context.Context, log *slog.Logger, id string, res *pipeline.Result, cause error, took time.Duration) {
	wait := 100 * time.Millisecond
	for {
		drop := "" // a recording not cleared of what the pass redacted (redact.go)
		_, err := s.db.UpdateJob(id, func(j *store.Job) ([]*store.Delivery, error) {
			d, err := fillBatchPass(j, res, cause, took)
			if err == nil && errors.Is(cause, errUnredacted) {
				drop, j.Blob = j.Blob, ""
			}
			return d, err
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
		s.deps.Signals.Queued(false, true)
		if drop != "" {
			if err := s.db.RemoveBlob(drop); err != nil {
				log.Error("remove the recording", "error", err)
			}
		}
		if cause != nil {
			log.Warn("batch pass failed; the live result stays", "error", cause)
		} else {
			log.Info("batch pass done", "elapsed_ms", took.Milliseconds())
		}
		return
	}
}

// errNoBatchPass aborts storing a pass whose job no longer waits for one.
var errNoBatchPass = errors.New("live: no batch pass running")

// fillBatchPass is endBatchPass's change to the job record.
func fillBatchPass(j *store.Job, res *pipeline.Result, cause error, took time.Duration) ([]*store.Delivery, error) {
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
		md["transcription_pass"] = passBatch // record_stretches says how much is the live finals' (combine.go)
		md["batch_pass"] = batchPassDone
		md["batch_pass_seconds"] = transcript.Round3(took.Seconds())
	} else {
		md["batch_pass"] = batchPassFailed
		md["batch_pass_error"] = errcode.Message(cause)
	}
	return heldCallbacks(j, final)
}

// heldCallbacks are the callback deliveries of the final messages the
// session held back, made from the final result (built in the protocol's
// order; the outbox sends deliveries independently).
func heldCallbacks(j *store.Job, res *pipeline.Result) ([]*store.Delivery, error) {
	lp, err := params.StoredLive(j.Params)
	if err != nil {
		return nil, err
	}
	url, method, ok := lp.CallbackTarget()
	if !ok {
		return nil, nil
	}
	final := *res
	final.Messages = nil
	msgs := []*message{msg(typePostTranscript, j.ID, final.Transcription)}
	if lp.PostProcessing.Summarization && final.Summarization != nil {
		msgs = append(msgs, postMsg(typePostSummarization, j.ID, final.Summarization))
	}
	if lp.PostProcessing.Chapterization && final.Chapterization != nil {
		msgs = append(msgs, postMsg(typePostChapterization, j.ID, final.Chapterization))
	}
	msgs = append(msgs, msg(typePostFinalTranscript, j.ID, &final), msg(typeEndSession, j.ID, nil))
	var out []*store.Delivery
	for _, m := range msgs {
		if !switchFor(lp.CallbackConfig.MessageSwitches, m) {
			continue
		}
		b, err := json.Marshal(m)
		if err != nil {
			return nil, err
		}
		d, err := delivery(j.ID, j.Account, url, method, m, b)
		if err != nil {
			return nil, err
		}
		out = append(out, d)
	}
	return out, nil
}
