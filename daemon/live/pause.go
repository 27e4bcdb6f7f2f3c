package live

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/earshot-dev/earshot/errcode"
	"github.com/earshot-dev/earshot/ingest"
	"github.com/earshot-dev/earshot/ingest/media"
	"github.com/earshot-dev/earshot/recognizer"
	"github.com/earshot-dev/earshot/store"
)

// Pausing a session (PCI: an agent takes a card number). While a session
// is paused the audio that comes in is stored as silence of the session's
// format, so the recording keeps its timeline, and the recogniser is
// handed silence for it, so nothing after the pause point is recognised;
// the utterance in progress at the pause is ended there (Live.Flush) on
// the audio before it. Partials are not sent while paused, and a final's
// words inside a paused span are dropped (there should be none: this is
// the second wall). The spans go to post_session_metadata.paused_intervals,
// in seconds of the session's audio; the batch pass over the recording
// hears silence there. Pausing never ends the session.

// maxPausedSpans bounds the spans a session lists: a pause past it reopens
// the last span instead of starting one (the list then covers the audio
// between them too: it may say more was paused than was, never less).
const maxPausedSpans = 1000

// ErrNotRunning is returned when a session to pause or resume does not run
// on this node: it has ended, or another node of the cluster runs it (409).
var ErrNotRunning = errcode.ErrConflict.Sub("live: session not running here", "the live session has ended or runs on another node")

// pauseData is the data of the paused, resumed, pause_recording and
// resume_recording messages.
type pauseData struct {
	Time float64 `json:"time"`
}

type pauseReq struct {
	gen   int // the attachment asking (-1: the API, by the session's id)
	pause bool
	reply chan pauseReply
}

type pauseReply struct {
	st  ingest.PauseState
	err error
}

func (r pauseReq) handle(s *session) {
	if r.gen >= 0 {
		if err := s.current(r.gen); err != nil {
			r.reply <- pauseReply{err: err}
			return
		}
	}
	st := s.setPaused(r.pause, r.gen >= 0)
	if r.gen >= 0 {
		s.auditPause(r.pause, "websocket", s.keyID)
	}
	r.reply <- pauseReply{st: st}
}

// auditPause records a pause or resume asked outside the API (whose door
// records its own, with its status): a WebSocket client's
// pause_recording or resume_recording, under the key that created the
// session, or the caller's keypad (pci.pause_sequence, resume_sequence),
// under none. Before (until 2026-11-30) neither was in the trail.
func (s *session) auditPause(pause bool, source, keyID string) {
	action := store.AuditLiveResume
	if pause {
		action = store.AuditLivePause
	}
	s.audit(store.AuditEntry{KeyID: keyID, Account: s.account, Source: source, Action: action, Object: s.id})
}

// Pause pauses (pause true) or resumes the session id running on this node.
// Asking for the state it is in changes nothing and answers the same.
func (s *Service) Pause(ctx context.Context, id string, pause bool) (ingest.PauseState, error) {
	sess := s.lookup(id)
	if sess == nil {
		return ingest.PauseState{}, &errcode.Error{Kind: ErrNotRunning, Msg: fmt.Sprintf("live session %s has ended or runs on another node", id)}
	}
	st, err := sess.askPause(ctx, -1, pause)
	if errors.Is(err, ErrSessionEnded) {
		err = &errcode.Error{Kind: ErrNotRunning, Msg: fmt.Sprintf("live session %s has ended", id)}
	}
	return st, err
}

// askPause hands a pause or resume to the session's goroutine and waits for
// its answer.
func (s *session) askPause(ctx context.Context, gen int, pause bool) (ingest.PauseState, error) {
	reply := make(chan pauseReply, 1)
	if err := s.call(ctx, pauseReq{gen: gen, pause: pause, reply: reply}); err != nil {
		return ingest.PauseState{}, err
	}
	r, err := await(ctx, s, reply)
	if err == nil {
		err = r.err
	}
	return r.st, err
}

// Pause pauses the session (the WebSocket's pause_recording): the door's
// side of Service.Pause.
func (a *attachment) Pause(ctx context.Context) error {
	_, err := a.s.askPause(ctx, a.gen, true)
	return err
}

// Resume resumes the session (the WebSocket's resume_recording).
func (a *attachment) Resume(ctx context.Context) error {
	_, err := a.s.askPause(ctx, a.gen, false)
	return err
}

// now is the session's position: the seconds of audio taken in whole.
func (s *session) now() float64 {
	return s.secondsAt(s.received - int64(s.pendingBytes()))
}

// setPaused is pauseReq's work: it changes the state when it differs,
// sending paused or resumed, and acknowledges a WebSocket client's request
// (acks) as stop_recording is, every time.
func (s *session) setPaused(pause, acks bool) ingest.PauseState {
	now := s.now()
	if pause != s.paused {
		s.paused = pause
		if pause {
			s.pauseAt(now)
		} else {
			s.spans[len(s.spans)-1].End = now
			s.log.Info("live session resumed", "audio_seconds", now)
			s.send(msg(typeResumed, s.id, pauseData{Time: now}))
		}
	}
	st := s.pauseState()
	if acks {
		typ := typeResumeRecording
		if pause {
			typ = typePauseRecording
		}
		s.deliver(msg(typ, s.id, pauseData{Time: st.Since}).ack(true, ""), true)
	}
	return st
}

// pauseAt opens a paused span at now: the recogniser is handed the audio
// before it and ends its utterance there, and paused goes out. A session
// that has not started yet (start_paused, or a pause before the client
// connected) has nothing to end; start sends its paused message.
func (s *session) pauseAt(now float64) {
	switch last := len(s.spans) - 1; {
	case last >= 0 && (s.spans[last].End >= now || len(s.spans) >= maxPausedSpans):
		s.spans[last].End = -1 // reopened
	default:
		s.spans = append(s.spans, ingest.PausedSpan{Start: now, End: -1})
	}
	s.flushRecogniser()
	s.log.Info("live session paused", "audio_seconds", now)
	if s.recog != nil || s.state != stateWaiting {
		s.send(msg(typePaused, s.id, pauseData{Time: s.spans[len(s.spans)-1].Start}))
	}
}

// pauseState is the session's state as ingest.PauseState.
func (s *session) pauseState() ingest.PauseState {
	st := ingest.PauseState{ID: s.id, Paused: s.paused, Spans: s.pausedSpans(s.now())}
	if n := len(s.spans); n > 0 {
		st.Since = s.spans[n-1].End
		if s.paused {
			st.Since = s.spans[n-1].Start
		}
	}
	return st
}

// pausedSpans is the spans so far, the open one ending at end, without the
// closed ones that hold no audio (a pause and a resume with none between
// them paused nothing); nil when there are none.
func (s *session) pausedSpans(end float64) []ingest.PausedSpan {
	var out []ingest.PausedSpan
	for _, sp := range s.spans {
		open := sp.End < 0
		if open {
			sp.End = max(end, sp.Start)
		}
		if open || sp.End > sp.Start {
			out = append(out, sp)
		}
	}
	return out
}

// flushRecogniser hands the recogniser the audio before the pause point
// and has it end its open utterances on it (Live.Flush), before any
// silence of the pause follows; the session handles the recogniser's
// events while it waits (at most one backlog's work: embeddedBacklog,
// remoteBacklog).
func (s *session) flushRecogniser() {
	for s.recog != nil && !s.recog.closed && len(s.backlog) > 0 {
		select {
		case s.recog.in <- s.backlog:
			s.backlog = nil
		case e, ok := <-s.recog.events:
			s.onRecogniser(e, ok)
		}
	}
	for s.recog != nil && !s.recog.closed && s.recErr == nil {
		select {
		case s.recog.flush <- struct{}{}:
			return
		case e, ok := <-s.recog.events:
			s.onRecogniser(e, ok)
		}
	}
}

// silence replaces whole frames of paused audio by silence of the session's
// format for the recording (a buffer the session reuses), and queues the
// same length of silence for the recogniser.
func (s *session) silence(whole []byte, pcm [][]int16) []byte {
	if cap(s.quiet) < len(whole) {
		s.quiet = make([]byte, len(whole))
	}
	q := s.quiet[:len(whole)]
	fill := byte(0)
	switch {
	case s.format.Encoding == media.MuLaw:
		fill = 0xff // µ-law 0
	case s.format.Encoding == media.ALaw:
		fill = 0xd5 // A-law +8, its nearest to 0
	case s.format.BitDepth == 8:
		fill = 0x80 // 8-bit WAV PCM is unsigned
	}
	for i := range q {
		q[i] = fill
	}
	for c := range pcm {
		clear(pcm[c]) // the framer's buffers, reused on its next Push
	}
	return q
}

// inPause reports whether t (seconds of session audio) lies in a paused
// span, the open one included.
func (s *session) inPause(t float64) bool {
	for _, sp := range s.spans {
		if t >= sp.Start && (sp.End < 0 || t < sp.End) {
			return true
		}
	}
	return false
}

// unpaused drops the words of u that start inside a paused span and
// rebuilds its text and times from the rest; ok is false when none is left.
func (s *session) unpaused(u recognizer.Utterance) (recognizer.Utterance, bool) {
	if len(s.spans) == 0 {
		return u, true
	}
	kept := u.Words[:0:0]
	for _, w := range u.Words {
		if !s.inPause(w.Start) {
			kept = append(kept, w)
		}
	}
	if len(kept) == len(u.Words) {
		return u, true
	}
	if len(kept) == 0 {
		return u, false
	}
	u.Words = kept
	u.Start, u.End = kept[0].Start, kept[len(kept)-1].End
	texts := make([]string, len(kept))
	for i, w := range kept {
		texts[i] = w.Word
	}
	u.Text = strings.Join(texts, " ")
	return u, true
}
