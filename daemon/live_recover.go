package daemon

import (
	"context"
	"encoding/json"
	"errors"
	"time"

	"github.com/earshot-dev/earshot/params"
	"github.com/earshot-dev/earshot/recognizer/pipeline"
	"github.com/earshot-dev/earshot/store"
)

// recoverLive handles a live job a crash or restart left open: one never
// connected gets its session back (its token stays valid); one that was
// running ends as done, its recording transcribed by the batch pipeline, or
// as error when that is impossible.
func (d *Daemon) recoverLive(ctx context.Context, id string) {
	log := d.log.With("component", "live", "session_id", id)
	j, err := d.db.Job(id)
	if err != nil {
		log.Error("recover live job", "error", err)
		return
	}
	var p params.Live
	if err := json.Unmarshal(j.Params, &p); err != nil {
		d.endRecovered(log, j, nil, "session interrupted by a restart; its parameters are unreadable")
		return
	}
	if j.Status == store.StatusQueued {
		if time.Now().After(j.CreatedAt.Add(d.cfg.Live.TokenTTL)) {
			d.endRecovered(log, j, nil, "never connected before the session token expired")
			return
		}
		s := &liveSession{
			d: d, id: j.ID, account: j.Account, p: &p, format: liveFormat(&p),
			expires: j.CreatedAt.Add(d.cfg.Live.TokenTTL), log: log, done: make(chan struct{}),
			messages: newMessageLog(d.cfg.Live.MaxStoredMessageBytes),
		}
		// A client may have been connecting as the daemon went down: it
		// gets the whole connect timeout again, within the token's life.
		s.keyID = j.KeyID
		s.connectBy = time.Now().Add(d.cfg.Live.connectWithin())
		if s.connectBy.After(s.expires) {
			s.connectBy = s.expires
		}
		path, err := d.recordingPath(j.Blob)
		if err == nil {
			s.file, err = createRecording(path, s.format)
		}
		if err != nil {
			d.endRecovered(log, j, nil, "session interrupted by a restart")
			return
		}
		d.liveMu.Lock()
		d.sessions[id] = s
		d.liveMu.Unlock()
		return
	}
	// It was running: transcribe what was received.
	path, release, err := d.blobFile(j.Blob)
	if err != nil {
		d.endRecovered(log, j, nil, "session interrupted by a restart: "+Message(err))
		return
	}
	res, info, err := d.pl.TranscribeFile(ctx, path, &params.PreRecorded{LanguageConfig: p.LanguageConfig})
	release()
	if err != nil {
		if errors.Is(err, ErrBadAudio) {
			// Nothing usable was recorded.
			res, info, err = nil, nil, nil
		} else {
			d.endRecovered(log, j, nil, "session interrupted by a restart: "+Message(err))
			return
		}
	}
	d.endRecovered(log, j, func(j *store.Job) {
		dur := 0.0
		if info != nil {
			dur = info.Duration
		}
		j.File = liveFileRecord(j.ID, p.Channels, pipeline.Round3(dur))
		if res == nil {
			res = &pipeline.Result{Transcription: pipeline.Transcription{Languages: []string{d.pl.Engines.Embedded().Languages()[0]}, Utterances: []pipeline.Utterance{}}}
		}
		res.Messages = []string{}
		j.Result, _ = json.Marshal(res)
		j.PostSessionMetadata["recovered"] = "session interrupted by a restart; transcribed from its recording"
		j.PostSessionMetadata["transcription_pass"] = passBatch
	}, "")
}

// endRecovered ends a recovered live job as done (fill != nil) or error.
func (d *Daemon) endRecovered(log interface{ Error(string, ...any) }, j *store.Job, fill func(*store.Job), failure string) {
	empty := "" // the header-only recording of a session never connected
	_, err := d.db.UpdateJob(j.ID, func(j *store.Job) ([]*store.Delivery, error) {
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
		if err := d.db.RemoveBlob(empty); err != nil {
			log.Error("remove empty recording", "error", err)
		}
	}
}
