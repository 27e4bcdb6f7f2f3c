package live

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/earshot-dev/earshot/params"
	"github.com/earshot-dev/earshot/recognizer"
	"github.com/earshot-dev/earshot/recognizer/pipeline"
	"github.com/earshot-dev/earshot/transcript"
)

// Revised finals (issue 41; PROTOCOL.md, Revised finals). A live final is
// read from the first pass of a decoder segment within 800 ms of its
// words, its features normalised by a running mean; a whole-recording
// decode normalises over the whole segment, future included, and runs
// every pass. When a session asks for revised_transcript messages, each
// decoder segment that gave finals is decoded again once it has ended
// (recognizer.EventSegment): on the batch pool of the session's band, one
// segment at a time per session, on a thread below the live decodes in
// priority (recognizer.CPU.BatchDecode); the result replaces the segment's
// finals, which the message names. Sessions that do not ask decode nothing
// more (LiveConfig.Segments stays off).

// Revision bounds.
const (
	// maxPendingRevisions bounds a session's segments waiting for their
	// re-decode or in it; a segment that ends with that many pending gets
	// no revision (its finals stand; earshot_live_revisions_total counts
	// it dropped).
	maxPendingRevisions = 4
)

// revisionEndWait bounds how long a session's end waits for its pending
// revisions before end_recording; those not done by then are dropped. A
// 20 s segment (liveSegmentMax) takes 3 to 5 s of one core (0.14 to 0.25 CPU
// s per audio s, docs/live-tuning.md).
// A variable for the tests only: on a box loaded by other processes the
// revision's niced thread gets a tenth of a core.
var revisionEndWait = 10 * time.Second

// typeRevisedTranscript is the revised final's message type (not in SPEC).
const typeRevisedTranscript = "revised_transcript"

// revisedData is a revised_transcript message's data: the IDs of the
// finals it replaces (transcript messages' data.id) and the utterances
// that replace them, possibly none.
type revisedData struct {
	Replaces   []string               `json:"replaces"`
	Utterances []transcript.Utterance `json:"utterances"`
}

// Outcomes of earshot_live_revisions_total.
const (
	revisionSent    = "sent"
	revisionDropped = "dropped" // the session had maxPendingRevisions pending, or its end came first
	revisionFailed  = "failed"  // no batch decoder within the session's decoder wait, or the decode failed
)

// wantsRevisions reports whether a session asking p takes revised finals
// on the WebSocket or the callback. Not with pii_redaction: the redaction
// runs over the finals as a stream (redact.go) and would have to run over
// a revision again.
func wantsRevisions(p *params.Live) bool {
	asked := p.MessagesConfig.ReceiveRevisedTranscripts || p.Callback && p.CallbackConfig.ReceiveRevisedTranscripts
	return asked && !p.PIIRedaction
}

// reviser decodes a session's ended segments again, one at a time, on a
// goroutine of its own; the session hands them over on jobs and takes
// the results from done. Both hold maxPendingRevisions, the bound of
// pending, so neither side ever waits on the other.
type reviser struct {
	ctx    context.Context // the service's halt: a shutdown's bound ends the waits for decoders
	engine recognizer.Engine
	opts   recognizer.StreamOptions
	cpu    *recognizer.CPU
	wait   time.Duration // for a decoder of engine
	jobs   chan revisionJob
	done   chan revision

	pending int  // handed over and not yet handled; the session's
	closed  bool // jobs is closed; the session's
}

// revisionJob is one segment to decode again.
type revisionJob struct {
	channel int
	ids     []int   // the finals it replaces, as sent
	start   float64 // session seconds of pcm[0]
	pcm     []int16
	lang    string
}

// revision is a segment decoded again (err: it could not be).
type revision struct {
	job revisionJob
	u   recognizer.Utterance
	err error
}

// newReviser starts the reviser of a session on engine (the batch pool
// of its band); opts are the session's stream options.
func newReviser(ctx context.Context, engine recognizer.Engine, opts recognizer.StreamOptions, cpu *recognizer.CPU, wait time.Duration) *reviser {
	r := &reviser{ctx: ctx, engine: engine, opts: opts, cpu: cpu, wait: wait,
		jobs: make(chan revisionJob, maxPendingRevisions), done: make(chan revision, maxPendingRevisions)}
	go r.run()
	return r
}

// run decodes the segments handed over until jobs is closed.
func (r *reviser) run() {
	for j := range r.jobs {
		r.done <- r.decode(j)
	}
}

// decode decodes one segment in one pass on a decoder of the batch pool.
func (r *reviser) decode(j revisionJob) (rv revision) {
	rv.job = j
	ctx, cancel := context.WithTimeout(r.ctx, r.wait)
	o := r.opts
	o.Language = j.lang
	st, err := r.engine.NewStream(ctx, o)
	cancel()
	if err != nil {
		rv.err = fmt.Errorf("wait for a batch decoder: %w", err)
		return rv
	}
	defer st.Close()
	whole, ok := st.(wholeDecoder)
	r.cpu.BatchDecode(func() {
		defer func() {
			if p := recover(); p != nil {
				rv.err = fmt.Errorf("revision decode panicked: %v", p)
			}
		}()
		if ok {
			rv.u, rv.err = whole.Decode(j.pcm)
			return
		}
		if rv.err = st.Write(j.pcm); rv.err == nil {
			rv.u, rv.err = st.Finish()
		}
	})
	return rv
}

// stop closes jobs: the goroutine ends after the segment it decodes.
func (r *reviser) stop() {
	if r != nil && !r.closed {
		close(r.jobs)
		r.closed = true
	}
}

// revisionsReady is the channel the session's loop takes revisions from:
// nil (never ready) without a reviser.
func (s *session) revisionsReady() <-chan revision {
	if s.rev == nil {
		return nil
	}
	return s.rev.done
}

// onSegment hands an ended segment whose finals were sent to the reviser,
// or drops it when maxPendingRevisions are pending.
func (s *session) onSegment(seg *recognizer.LiveSegment, channel int) {
	r := s.rev
	if r == nil || r.closed || seg == nil {
		return
	}
	var ids []int
	lang := ""
	for _, id := range seg.IDs {
		if i := s.finalIndex(id); i >= 0 {
			ids = append(ids, id)
			lang = cmp.Or(lang, s.finals[i].Language)
		}
	}
	if len(ids) == 0 {
		return // none was sent (paused)
	}
	if r.pending >= maxPendingRevisions {
		s.svc.revisions.WithLabelValues(revisionDropped).Inc()
		s.log.Warn("revised final dropped: too many pending", "pending", r.pending, "finals", len(ids))
		return
	}
	r.pending++
	r.jobs <- revisionJob{channel: channel, ids: ids, start: seg.Start, pcm: seg.Audio, lang: lang}
}

// finalIndex is the index in s.finals of the final sent with ID id, -1
// when none (searched from the end: a segment's finals are recent).
func (s *session) finalIndex(id int) int {
	for i := len(s.finalIDs) - 1; i >= 0; i-- {
		if s.finalIDs[i] == id {
			return i
		}
	}
	return -1
}

// onRevision sends a revised segment: its words, split where the finals
// it replaces began, replace those finals in the session's result and go
// to the client in one revised_transcript message. A failed revision
// leaves the finals as they are.
func (s *session) onRevision(rv revision) {
	s.rev.pending--
	if rv.err != nil {
		s.svc.revisions.WithLabelValues(revisionFailed).Inc()
		s.log.Warn("revised final failed; the finals stand", "error", rv.err)
		return
	}
	var at []int // indexes in s.finals of the replaced finals
	for _, id := range rv.job.ids {
		if i := s.finalIndex(id); i >= 0 {
			at = append(at, i)
		}
	}
	if len(at) == 0 {
		return
	}
	slices.Sort(at)
	cuts := make([]float64, 0, len(at))
	for _, i := range at[1:] {
		cuts = append(cuts, s.finals[i].Start)
	}
	slices.Sort(cuts)
	utts := s.revisedUtterances(rv, cuts, s.finals[at[0]].Language)
	replaces := make([]string, len(rv.job.ids))
	for k, id := range rv.job.ids {
		replaces[k] = liveUtteranceID(s.id, id)
	}
	// The record: the revision takes the place of the first replaced final.
	first := at[0]
	for k := len(at) - 1; k >= 0; k-- {
		s.finals = slices.Delete(s.finals, at[k], at[k]+1)
		s.finalIDs = slices.Delete(s.finalIDs, at[k], at[k]+1)
	}
	s.finals = slices.Insert(s.finals, first, utts...)
	s.finalIDs = slices.Insert(s.finalIDs, first, slices.Repeat([]int{-1}, len(utts))...)
	contract := make([]transcript.Utterance, len(utts))
	for k, u := range utts {
		contract[k] = pipeline.ContractUtterance(u, u.Language)
	}
	s.send(msg(typeRevisedTranscript, s.id, revisedData{Replaces: replaces, Utterances: contract}))
	s.svc.revisions.WithLabelValues(revisionSent).Inc()
}

// revisedUtterances are the revision's words in session time, as a
// final's are sent (custom spelling, words in a pause left out), split at
// cuts (where the replaced finals after the first began) by each word's
// middle; empty parts are left out.
func (s *session) revisedUtterances(rv revision, cuts []float64, lang string) []recognizer.Utterance {
	u := rv.u
	if u.Language != "" {
		lang = u.Language
	}
	parts := make([][]recognizer.Word, len(cuts)+1)
	for _, w := range u.Words {
		w.Start += rv.job.start
		w.End += rv.job.start
		mid := (w.Start + w.End) / 2
		k := 0
		for k < len(cuts) && mid >= cuts[k] {
			k++
		}
		parts[k] = append(parts[k], w)
	}
	var out []recognizer.Utterance
	for _, ws := range parts {
		if len(ws) == 0 {
			continue
		}
		v := s.spell(recognizer.WordsUtterance(ws, rv.job.channel, lang))
		if v, ok := s.unpaused(v); ok && len(v.Words) > 0 {
			out = append(out, v)
		}
	}
	return out
}

// finishRevisions ends the reviser at the session's end, before
// end_recording: the revisions pending are sent as they finish, for at
// most revisionEndWait (or until ctx ends); the rest are dropped.
func (s *session) finishRevisions(ctx context.Context) {
	r := s.rev
	if r == nil {
		return
	}
	r.stop()
	timer := time.NewTimer(revisionEndWait)
	defer timer.Stop()
	for r.pending > 0 {
		select {
		case rv := <-r.done:
			s.onRevision(rv)
		case <-timer.C:
			s.dropRevisions("the session's end waited long enough")
			return
		case <-ctx.Done():
			s.dropRevisions("the session's end was cut short")
			return
		}
	}
	s.rev = nil
}

// dropRevisions gives up the session's pending revisions (their finals
// stand) and its reviser.
func (s *session) dropRevisions(why string) {
	r := s.rev
	if r == nil {
		return
	}
	r.stop()
	if r.pending > 0 {
		s.svc.revisions.WithLabelValues(revisionDropped).Add(float64(r.pending))
		s.log.Warn("revised finals dropped", "pending", r.pending, "why", why)
	}
	s.rev = nil
}
