package live

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"runtime/debug"
	"time"

	"github.com/earshot-dev/earshot/errcode"
	"github.com/earshot-dev/earshot/recognizer"
	"github.com/earshot-dev/earshot/recognizer/pipeline"
	"github.com/earshot-dev/earshot/store"
	"github.com/earshot-dev/earshot/transcript"
)

// finish runs the end of the session once: the recogniser's last finals,
// the end's messages, post-processing, and the result stored with the
// callback deliveries still queued, in one commit. failure != "" ends the
// job as error instead. ctx bounds the post-processing add-ons.
func (s *session) finish(ctx context.Context, failure string) {
	if s.state == stateEnded {
		return
	}
	defer func() {
		if r := recover(); r != nil {
			s.log.Error("live finish panicked", "panic", r, "stack", string(debug.Stack()))
			if s.state != stateEnded {
				s.end()
			}
		}
	}()
	finishing := time.Now()
	if n := s.pendingBytes(); n > 0 {
		s.send(errorMsg(s.id, "", fmt.Sprintf("%d trailing bytes do not make a whole sample frame of %d bytes; discarded", n, s.format.FrameSize())))
	}
	if err := s.drainInband(); err != nil {
		s.log.Error("store the in-band DTMF filters' last audio", "error", err)
	}
	s.closeRecogniser()
	s.releaseHeld()
	if failure != "" {
		s.dropRevisions("the session failed")
	} else {
		s.finishRevisions(ctx) // before end_recording
	}
	dur := s.secondsAt(s.received)
	if s.started.IsZero() && failure == "" {
		failure = "session never connected"
	}
	s.state = stateEnded
	path, err := s.rec.finalize(s.format)
	if err != nil {
		s.log.Error("finalise recording", "error", err)
	}
	if path != "" {
		// Before the recording and the result are stored (redact.go).
		if blanked, err := s.blankRecording(path); err != nil {
			// Not kept unredacted: the failed session drops it.
			s.log.Error("blank the recording over the redacted entities", "error", err)
			failure, s.unredacted = "the recording could not be redacted; it is not kept", true
		} else if blanked {
			s.shared.rewrite()
		}
	}
	left := "" // the recording the store could not take (outage.go)
	if path != "" {
		left = s.storeRecording(path)
	}
	if failure != "" {
		s.failLeft(failure, left)
		return
	}
	s.batchPass = s.svc.cfg.batchPass() && s.rec.audio > 0
	s.messages.close(s.id)
	s.send(msg(typeEndRecording, s.id, durationData{RecordingDuration: dur}))
	res := s.result(dur)
	s.piiEnvelope(res)
	s.send(msg(typePostTranscript, s.id, res.Transcription))
	s.postProcess(ctx, res)
	// Recognising while the audio came, then the end's work up to here.
	res.Metadata.TranscriptionTime = transcript.Round3((s.busy + time.Since(finishing)).Seconds())
	s.send(msg(typePostFinalTranscript, s.id, res))
	s.answerLater()
	s.send(msg(typeEndSession, s.id, nil))
	res.Messages = s.messages.messages()
	body, err := json.Marshal(res)
	if err != nil {
		s.fail("encode result: " + err.Error())
		return
	}
	pending := s.pending
	s.pending = nil
	update := func(j *store.Job) ([]*store.Delivery, error) {
		if err := checkOpen(j); err != nil {
			return nil, err
		}
		j.Status = store.StatusDone
		j.CompletedAt = time.Now().UTC()
		j.Result = body
		j.File = liveFileRecord(s.id, s.format.Channels, dur)
		s.labelPass(j)
		if spans := s.pausedSpans(dur); spans != nil {
			j.PostSessionMetadata["paused_intervals"] = spans
		}
		if keys := s.keysNote(); keys != nil {
			j.PostSessionMetadata["dtmf"] = keys
		}
		if s.lean > 0 {
			j.PostSessionMetadata["live_search"] = fmt.Sprintf("lean in %d of %d segments: the box was short of CPU", s.lean, s.segments)
		}
		if s.route != nil {
			if j.PostSessionMetadata == nil {
				j.PostSessionMetadata = map[string]any{}
			}
			for k, v := range s.route.Notes() { // engine, band, vocabulary, fallback
				j.PostSessionMetadata[k] = v
			}
		}
		return pending, nil
	}
	batchPass := s.batchPass
	stored := func() {
		s.svc.deps.Signals.Finished(store.StatusDone)
		s.svc.deps.Signals.Queued(batchPass, len(pending) > 0)
	}
	if s.commitEnd(left, update, stored, "result") {
		stored()
	}
	s.end()
	s.log.Info("live session ended", "audio_seconds", dur)
}

// commitEnd stores a session's end (update). When the shared store is
// unavailable, or left names what has not reached it yet, the end is
// stored when it is back (endWhenBack), which then calls stored; an end
// another node made first is dropped; a store error is logged and stored
// called. It reports true when the update committed now (or the job was
// gone): the caller then finishes and calls stored itself.
func (s *session) commitEnd(left string, update func(*store.Job) ([]*store.Delivery, error), stored func(), what string) bool {
	var err error = store.ErrUnavailable
	if left == "" {
		_, err = s.svc.db.UpdateJob(s.id, update)
	}
	switch {
	case errors.Is(err, store.ErrUnavailable):
		s.endWhenBack(left, update, stored)
	case errors.Is(err, errEndedElsewhere):
		s.log.Warn("live session was ended by another node while this one stalled; its end here is dropped")
	case err != nil && !errors.Is(err, store.ErrNotFound):
		s.log.Error("store live "+what, "error", err)
		stored()
	default:
		return true
	}
	return false
}

// liveFileRecord is the File record of a live job's recording.
func liveFileRecord(id string, channels int, dur float64) *store.File {
	name := id + ".wav"
	return &store.File{ID: id, Filename: &name, AudioDuration: &dur, Channels: &channels}
}

// fail ends the job as error (408 when it never connected), with the
// callback deliveries still queued.
func (s *session) fail(reason string) { s.failLeft(reason, "") }

// failLeft is fail for a session whose recording at left the store could
// not take (outage.go): the end is stored when the store is back.
func (s *session) failLeft(reason, left string) {
	code := 500
	if s.started.IsZero() {
		code = 408
	}
	if s.endErr != nil {
		code = errcode.Status(s.endErr)
	}
	blob := ""
	pending := s.pending
	s.pending = nil
	update := func(j *store.Job) ([]*store.Delivery, error) {
		if err := checkOpen(j); err != nil {
			return nil, err
		}
		j.Status = store.StatusError
		j.CompletedAt = time.Now().UTC()
		j.ErrorCode = code
		j.ErrorMessage = reason
		if s.started.IsZero() || s.unredacted {
			// Never connected: the recording is a bare header, kept by
			// nothing once the record stops naming it; or it holds
			// personal data it could not be cleared of (redact.go).
			blob, j.Blob = j.Blob, ""
		}
		if j.PostSessionMetadata == nil {
			j.PostSessionMetadata = map[string]any{}
		}
		j.PostSessionMetadata["error"] = reason
		if spans := s.pausedSpans(s.secondsAt(s.received)); spans != nil {
			j.PostSessionMetadata["paused_intervals"] = spans
		}
		return pending, nil
	}
	stored := func() {
		s.svc.deps.Signals.Finished(store.StatusError)
		s.svc.deps.Signals.Queued(false, len(pending) > 0)
	}
	if s.commitEnd(left, update, stored, "failure") {
		if blob != "" {
			s.rec.close()
			s.svc.removeRecording(s.log, blob)
		}
		stored()
	}
	s.log.Info("live session failed", "status", code, "error", reason)
	s.end()
}

// end marks the session ended and leaves the service's map; run closes
// done once the request being handled has been answered.
func (s *session) end() {
	// The door closes the socket after end_session (it watches Done);
	// kicking it here would race that.
	s.listener = nil
	s.state = stateEnded
	s.svc.drop(s.id)
}

// result builds the live result from the finals so far.
func (s *session) result(dur float64) *pipeline.Result {
	detecting := s.route != nil && s.route.Language == ""
	return pipeline.LiveResult(s.finals, dur, s.format.Channels, s.language(), detecting)
}

// language is the session's language when nothing was detected: the one
// asked for, else the routed engine's first.
func (s *session) language() string {
	if l := s.p.Language(); l != "" {
		return l
	}
	if s.route != nil {
		if l := s.route.DefaultLanguage(); l != "" {
			return l
		}
	}
	return s.svc.pl.Engines.Embedded().Languages()[0]
}

// onEvent turns a recogniser event into protocol messages.
func (s *session) onEvent(ev recognizer.Event) {
	switch ev.Kind {
	case recognizer.EventSpeechStart, recognizer.EventSpeechEnd:
		s.releaseDue(ev.Time)
		if s.inPause(ev.Time) {
			return // heard in silence the session put there: nothing to say
		}
		s.send(msg(ev.Kind.String(), s.id, speechData{Time: transcript.Round3(ev.Time), Channel: ev.Channel}))
	case recognizer.EventPartial, recognizer.EventFinal:
		u := ev.Utterance
		if u.Language == "" {
			u.Language = s.language()
		}
		u = s.spell(u)
		final := ev.Kind == recognizer.EventFinal
		if !final && s.paused {
			return // no partials while paused
		}
		var ok bool
		if u, ok = s.unpaused(u); !ok {
			return
		}
		if final && len(u.Words) == 0 {
			return
		}
		s.releaseDue(u.Start)
		s.onUtterance(ev.ID, u, final)
	case recognizer.EventSegment:
		s.onSegment(ev.Segment, ev.Channel)
	case recognizer.EventError:
		s.send(errorMsg(s.id, "", "recogniser: "+errcode.Message(ev.Err)+": "+ev.Err.Error()))
	}
}
