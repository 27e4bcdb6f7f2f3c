package live

import (
	"context"
	"encoding/json"
	"errors"
	"time"

	"github.com/earshot-dev/earshot/errcode"
	"github.com/earshot-dev/earshot/params"
	"github.com/earshot-dev/earshot/recognizer/pipeline"
	"github.com/earshot-dev/earshot/store"
	"github.com/earshot-dev/earshot/transcript"
)

// Recover handles a live job a crash or restart left open (before Run):
// one never connected gets its session back (its token stays valid); one
// that was running ends as done, its recording transcribed by the batch
// pipeline, or as error when that is impossible.
func (s *Service) Recover(ctx context.Context, id string) {
	log := s.log.With("component", "live", "session_id", id)
	j, err := s.db.Job(id)
	if err != nil {
		log.Error("recover live job", "error", err)
		return
	}
	p, err := params.StoredLive(j.Params)
	if err != nil {
		s.endRecovered(log, j, nil, "session interrupted by a restart; its parameters are unreadable")
		return
	}
	if j.Status == store.StatusQueued {
		if time.Now().After(j.CreatedAt.Add(s.cfg.TokenTTL)) {
			s.endRecovered(log, j, nil, "never connected before the session token expired")
			return
		}
		// A client may have been connecting as the daemon went down: it
		// gets the whole connect timeout again, within the token's life.
		connectBy := time.Now().Add(s.cfg.connectWithin())
		if exp := j.CreatedAt.Add(s.cfg.TokenTTL); connectBy.After(exp) {
			connectBy = exp
		}
		sess, err := s.newSession(j, p, connectBy)
		if err != nil || !s.start(sess) {
			if sess != nil {
				sess.rec.close()
			}
			s.endRecovered(log, j, nil, "session interrupted by a restart")
		}
		return
	}
	// It was running: transcribe what was received.
	path, release, err := s.deps.Recordings.BlobFile(j.Blob)
	if err != nil {
		s.endRecovered(log, j, nil, "session interrupted by a restart: "+errcode.Message(err))
		return
	}
	res, info, err := s.pl.TranscribeFile(ctx, path, piiParams(&params.PreRecorded{LanguageConfig: p.LanguageConfig}, p))
	if err == nil {
		if berr := s.blankStored(j.Blob, path, res); berr != nil { // redact.go
			release()
			log.Error("blank the recording over the redacted entities", "error", berr)
			s.endRecovered(log, j, nil, unredactedFailure)
			return
		}
	}
	release()
	if err != nil {
		if errors.Is(err, errcode.ErrBadAudio) {
			// Nothing usable was recorded.
			res, info, err = nil, nil, nil
		} else {
			s.endRecovered(log, j, nil, "session interrupted by a restart: "+errcode.Message(err))
			return
		}
	}
	s.endRecovered(log, j, func(j *store.Job) {
		dur := 0.0
		if info != nil {
			dur = info.Duration
		}
		j.File = liveFileRecord(j.ID, p.Channels, transcript.Round3(dur))
		if res == nil {
			res = &pipeline.Result{Transcription: transcript.Transcription{Languages: []string{s.pl.Engines.Embedded().Languages()[0]}, Utterances: []transcript.Utterance{}}}
		}
		res.Messages = []string{}
		j.Result, _ = json.Marshal(res)
		j.PostSessionMetadata["recovered"] = "session interrupted by a restart; transcribed from its recording"
		j.PostSessionMetadata["transcription_pass"] = passBatch
	}, "")
}

// endRecovered ends a recovered live job as done (fill != nil) or error.
func (s *Service) endRecovered(log interface{ Error(string, ...any) }, j *store.Job, fill func(*store.Job), failure string) {
	empty := "" // the header-only recording of a session never connected, or one not redacted
	_, err := s.db.UpdateJob(j.ID, func(j *store.Job) ([]*store.Delivery, error) {
		j.CompletedAt = time.Now().UTC()
		if j.PostSessionMetadata == nil {
			j.PostSessionMetadata = map[string]any{}
		}
		if fill != nil {
			j.Status = store.StatusDone
			fill(j)
			return nil, nil
		}
		j.ErrorCode = 500
		if j.Status == store.StatusQueued {
			j.ErrorCode = 408
			empty, j.Blob = j.Blob, ""
		}
		if failure == unredactedFailure {
			empty, j.Blob = j.Blob, "" // it holds what it should not (redact.go)
		}
		j.Status = store.StatusError
		j.ErrorMessage = failure
		j.PostSessionMetadata["error"] = failure
		return nil, nil
	})
	if err != nil {
		log.Error("end recovered live job", "error", err)
		return
	}
	if empty != "" {
		s.removeRecording(log, empty)
	}
}

// removeRecording removes the recording blob a record stopped naming (a
// session never connected, one that could not be redacted): the stored
// blob, and the local file the session recorded it into where that is
// not the blob itself (a sealed spool, with its data key; a shared
// store's local file).
func (s *Service) removeRecording(log interface{ Error(string, ...any) }, blob string) {
	if err := s.db.RemoveBlob(blob); err != nil {
		log.Error("remove the recording", "error", err)
	}
	path, err := s.deps.Recordings.RecordingPath(blob)
	if err == nil {
		err = s.deps.Recordings.DropRecording(path)
	}
	if err != nil {
		log.Error("remove the local recording", "error", err)
	}
}
