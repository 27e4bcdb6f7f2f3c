package live

import (
	"errors"
	"fmt"
	"os"

	"github.com/earshot-dev/earshot/ingest/media"
	"github.com/earshot-dev/earshot/params"
	"github.com/earshot-dev/earshot/recognizer"
	"github.com/earshot-dev/earshot/recognizer/addons/ner"
	"github.com/earshot-dev/earshot/recognizer/addons/pii"
	"github.com/earshot-dev/earshot/recognizer/pipeline"
)

// PII redaction of a live session (pii_redaction, an earshot extension of
// the live body; PROTOCOL.md). Every final goes through the session's
// pii.Stream before anything reads it: the transcript message, the
// realtime add-ons, the finals the live result and the post-processing
// are made of. A final ending in digits is held back until the next one
// shows whether the number goes on (the stream releases it, redacted, with
// that next final, once the recogniser's events are MaxAcrossGap past it,
// or at the session's end); a partial is redacted against the finals held
// on its channel, its trailing digits masked. So no message, no stored
// result.messages entry and no callback carries a redacted value. At the
// end the recording is blanked over the entities found (blankRecording),
// before it is stored and before the result is; the batch pass redacts
// the record as a pre-recorded job's and blanks what it finds too.

// newPIIStream returns the session's redaction stream, nil when p does not
// ask for pii_redaction.
func newPIIStream(p *params.Live) *pii.Stream {
	if !p.PIIRedaction {
		return nil
	}
	mode := pii.Marker
	if c := p.PIIRedactionConfig; c != nil && c.ProcessedTextType != "" {
		mode = c.ProcessedTextType
	}
	return pii.NewStream(piiTypes(p), mode)
}

// piiTypes are the entity types a session asking p redacts.
func piiTypes(p *params.Live) []string {
	if c := p.PIIRedactionConfig; c != nil && len(c.EntityTypes) > 0 {
		return c.EntityTypes
	}
	return []string{ner.DefaultPreset}
}

// piiEnvelope sets the live result's pii_redaction envelope: what the
// session's stream redacted.
func (s *session) piiEnvelope(res *pipeline.Result) {
	if s.pii != nil {
		res.PIIRedaction = pipeline.LivePIIEnvelope(s.pii.Found(), piiTypes(s.p))
	}
}

// onUtterance sends a partial or a final utterance of the recogniser's
// (event id), through the redaction stream when there is one.
func (s *session) onUtterance(id int, u recognizer.Utterance, final bool) {
	if s.pii == nil {
		s.sendUtterance(id, u, final)
		return
	}
	if !final {
		s.sendUtterance(id, s.pii.Partial(u), false)
		return
	}
	for _, f := range s.pii.Final(pii.Final{ID: id, Utterance: u}) {
		s.sendUtterance(f.ID, f.Utterance, true)
	}
}

// releaseDue sends, redacted, the finals held back whose number did not go
// on: the recogniser's events have reached now (seconds of audio), more
// than MaxAcrossGap past them.
func (s *session) releaseDue(now float64) {
	if s.pii == nil || s.pii.Held() == 0 {
		return
	}
	for _, f := range s.pii.Due(now) {
		s.sendUtterance(f.ID, f.Utterance, true)
	}
}

// releaseHeld sends every final still held back, redacted (the recogniser
// has given its last).
func (s *session) releaseHeld() {
	if s.pii == nil {
		return
	}
	for _, f := range s.pii.Flush() {
		s.sendUtterance(f.ID, f.Utterance, true)
	}
}

// sendUtterance sends a transcript message and, for a final, keeps it for
// the result and runs the realtime add-ons on it.
func (s *session) sendUtterance(id int, u recognizer.Utterance, final bool) {
	if final {
		s.finals = append(s.finals, u)
		s.finalIDs = append(s.finalIDs, id)
	}
	m := msg(typeTranscript, s.id, transcriptData{ID: liveUtteranceID(s.id, id), IsFinal: final, Utterance: pipeline.ContractUtterance(u, u.Language)})
	m.final = final
	s.send(m)
	if final {
		s.realtime(id, u)
	}
}

// audioFill is what the stored audio of a session asking p holds over a
// redacted entity: 0 when it is to be kept as it came.
func audioFill(p *params.Live) media.Fill {
	if !p.PIIRedaction {
		return 0
	}
	switch p.PIIRedactionConfig.AudioMode() {
	case params.AudioOff:
		return 0
	case params.AudioTone:
		return media.FillTone
	}
	return media.FillSilence
}

// blankRecording blanks the finished recording at path over the entities
// the session's stream redacted, in the recording's own encoding; it
// reports whether it changed the file (a cluster's copy is then stored
// whole again: the chunks synced while the session ran hold the
// original).
func (s *session) blankRecording(path string) (bool, error) {
	fill := audioFill(s.p)
	if s.pii == nil || fill == 0 {
		return false, nil
	}
	spans := pii.AudioSpans(s.pii.Found())
	if len(spans) == 0 {
		return false, nil
	}
	f, err := s.svc.deps.Recordings.OpenRecording(path)
	if err != nil {
		return true, fmt.Errorf("blank recording: %w", err)
	}
	err = media.Blank(f, spans, fill)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return true, err
}

// blankFile blanks the WAV file at path over spans with fill (media.Blank).
func blankFile(path string, spans []media.Span, fill media.Fill) error {
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		return fmt.Errorf("blank recording: %w", err)
	}
	err = media.Blank(f, spans, fill)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// piiParams sets a pre-recorded request's pii_redaction from a live
// session's, so its batch pass (or its recovery) redacts the record as
// the session did.
func piiParams(p *params.PreRecorded, lp *params.Live) *params.PreRecorded {
	p.PIIRedaction, p.PIIRedactionConfig = lp.PIIRedaction, lp.PIIRedactionConfig
	return p
}

// blankStored blanks the recording blob name, read at path (Recordings.
// BlobFile), over the spans the batch pipeline redacted (res), and stores
// it again when path is a copy (Recordings.StoreBlobFile), before the
// pass's result is stored.
func (s *Service) blankStored(name, path string, res *pipeline.Result) error {
	ra := res.RedactedAudio
	res.RedactedAudio = nil
	if ra == nil || len(ra.Spans) == 0 {
		return nil
	}
	if err := blankFile(path, ra.Spans, ra.Fill); err != nil {
		return err
	}
	return s.deps.Recordings.StoreBlobFile(name, path)
}

// rewrite halts the sync of a recording changed in place after it was
// appended (blanked): the end then stores the file whole
// (Recordings.CommitRecording), replacing the copy that holds the
// original. Nil on one box.
func (r *recordingSync) rewrite() {
	if r == nil {
		return
	}
	r.halt()
	r.broken = true
}

// errUnredacted fails a batch pass that could not blank the recording
// over what it redacted: the pass's end drops the recording (endBatchPass).
var errUnredacted = errors.New("live: the recording could not be blanked over the redacted entities; it is not kept")

// unredactedFailure ends a recovered session whose recording could not be
// blanked over what its transcription redacted: the recording is dropped
// with it (Recover, endRecovered).
const unredactedFailure = "session interrupted by a restart; its recording could not be redacted, so it is not kept"
