package live

import (
	"context"
	"errors"
	"fmt"
	"runtime/debug"
	"time"

	"github.com/earshot-dev/earshot/recognizer"
	"github.com/earshot-dev/earshot/recognizer/pipeline"
)

// Recogniser bounds.
const (
	// remoteBacklog bounds the audio a session on a remote engine holds
	// for its recogniser while the recogniser waits for the server (a
	// request may take seconds): up to it the session stores and acks
	// audio at once; past it the session, and so the door's Write, waits
	// for the recogniser.
	remoteBacklog = 30 * recognizer.SampleRate
	// embeddedBacklog is that bound on the embedded engine, whose
	// recogniser works on this machine's CPU: running far ahead of it
	// gains nothing and would only move its work to the session's end
	// (a client streaming faster than real time is held to its pace).
	embeddedBacklog = recognizer.SampleRate
	// callBacklog is the bound on the embedded engine for a session whose
	// client is an audio-only door (a SIP call, a browser's WebRTC track:
	// attached without a Listener). Its audio comes at the caller's pace
	// and cannot be held back: a session held to its recogniser's pace
	// only fills the door's own queue until the door drops audio, and
	// holds the call's DTMF keys behind it. So while the recogniser runs
	// behind (a decoder loading on demand, a box short of CPU) the session
	// goes on storing the call's audio and taking its keys, up to this
	// much (1 MB a channel); past it the door's queue takes the rest.
	callBacklog = 30 * recognizer.SampleRate
	// recogniserEvents bounds the events waiting for the session.
	recogniserEvents = 64
)

// recogniser runs a session's recognizer.Live on a goroutine of its own,
// so that an engine call (a remote server answering an utterance after
// seconds, a decoder shortage) never holds the session's goroutine: the
// session goes on storing and acknowledging audio while the recogniser
// works through its backlog. The session hands audio over on in (the
// whole backlog at once) and closes in at its end; the recogniser sends
// its events (and the engine's notices) on events, which it closes when
// it has flushed and closed the Live.
type recogniser struct {
	ctx    context.Context // cancelled when a shutdown's bound is reached (Service.halt)
	live   *recognizer.Live
	route  *pipeline.LiveRoute
	in     chan [][]int16
	flush  chan struct{} // ends the open utterances on what in has handed over (a pause)
	events chan recEvent
	closed bool // in is closed; the session's

	busy time.Duration // time in the recogniser; the session reads it after events is closed

	// segments: the Live reports its ended segments for revised finals
	// (revise.go), decoded on route.BatchEngine with streamOpts.
	segments   bool
	streamOpts recognizer.StreamOptions
}

// recEvent is one thing the recogniser tells its session: a recogniser
// event, a notice for the client (an engine fallback, a flush error), or
// the error that stopped it.
type recEvent struct {
	ev     recognizer.Event
	notice string
	err    error
}

// newRecogniser routes the session to its engine and prepares the Live;
// ctx bounds its engine calls. revise asks for the ended segments
// (LiveConfig.Segments) when the route has a batch pool to decode them
// again on.
func newRecogniser(ctx context.Context, pl *pipeline.Transcriber, lo pipeline.LiveOptions, cfg recognizer.LiveConfig, revise bool) (*recogniser, error) {
	r := &recogniser{ctx: ctx, in: make(chan [][]int16), flush: make(chan struct{}), events: make(chan recEvent, recogniserEvents)}
	// The engine's notices come from within Live.Write, on the
	// recogniser's goroutine.
	lo.Notify = func(m string) { r.events <- recEvent{notice: m} }
	rt, err := pl.Engines.Live(lo)
	if err != nil {
		return nil, err
	}
	rt.Configure(&cfg)
	if revise && rt.BatchEngine() != nil {
		cfg.Segments, r.segments = true, true
		r.streamOpts = recognizer.StreamOptions{Vocabulary: cfg.Vocabulary, Narrowband: cfg.Narrowband, Tenant: cfg.Tenant}
	}
	live, err := recognizer.NewLive(rt.Engine, cfg, func(ev recognizer.Event) { r.events <- recEvent{ev: ev} })
	if err != nil {
		return nil, fmt.Errorf("start recogniser: %w", err)
	}
	r.live, r.route = live, rt
	return r, nil
}

// run recognises what the session hands over until in is closed, then
// flushes and closes the Live. A failure or a panic stops it: the session
// hears why and the rest of the audio is not recognised.
func (r *recogniser) run() {
	defer close(r.events)
	defer r.live.Close()
	defer func() {
		if p := recover(); p != nil {
			r.events <- recEvent{err: fmt.Errorf("recogniser panicked: %v\n%s", p, debug.Stack())}
			for range r.in { // the session may still hand audio over before it hears
			}
		}
	}()
	ctx := r.ctx
recognise:
	for {
		select {
		case <-r.flush:
			// A pause: its silence follows; the utterance in progress
			// ends on the audio before it.
			start := time.Now()
			if err := r.live.Flush(ctx); err != nil {
				r.events <- recEvent{notice: "recogniser: " + err.Error()}
			}
			r.busy += time.Since(start)
		case pcm, ok := <-r.in:
			if !ok {
				break recognise
			}
			start := time.Now()
			err := r.live.Write(ctx, pcm)
			r.busy += time.Since(start)
			if err != nil {
				r.events <- recEvent{err: fmt.Errorf("recognise: %w", err)}
				for range r.in {
				}
				return
			}
		}
	}
	start := time.Now()
	if err := r.live.Flush(ctx); err != nil {
		r.events <- recEvent{notice: "recogniser: " + err.Error()}
	}
	r.busy += time.Since(start)
}

// recogniserEvents is the channel the session's loop takes recogniser
// events from: nil (never ready) without a recogniser.
func (s *session) recogniserEvents() <-chan recEvent {
	if s.recog == nil {
		return nil
	}
	return s.recog.events
}

// feed is the channel the session's loop hands its backlog on: nil (never
// ready) when there is nothing to hand over.
func (s *session) feed() chan<- [][]int16 {
	if s.recog == nil || s.recog.closed || len(s.backlog) == 0 {
		return nil
	}
	return s.recog.in
}

// queue adds samples (one slice per channel, reused by the framer) to the
// backlog; past its bound (remoteBacklog, callBacklog, embeddedBacklog)
// it waits for the recogniser to take it, handling its events meanwhile.
func (s *session) queue(pcm [][]int16) {
	if s.recog == nil || s.recog.closed {
		return
	}
	if s.backlog == nil {
		s.backlog = make([][]int16, len(pcm))
	}
	for c := range pcm {
		s.backlog[c] = append(s.backlog[c], pcm[c]...)
	}
	limit := embeddedBacklog
	switch {
	case s.route != nil && s.route.Remote():
		limit = remoteBacklog
	case s.listener == nil:
		limit = callBacklog
	}
	for s.recog != nil && !s.recog.closed && len(s.backlog) > 0 && len(s.backlog[0]) > limit {
		select {
		case s.recog.in <- s.backlog:
			s.backlog = nil
		case e, ok := <-s.recog.events:
			s.onRecogniser(e, ok)
		}
	}
}

// onRecogniser handles one recogniser event; !ok means the recogniser has
// exited (after a failure: its error came first).
func (s *session) onRecogniser(e recEvent, ok bool) {
	switch {
	case !ok:
		s.recogniserGone()
	case e.err != nil:
		s.log.Error("live recogniser failed", "error", e.err)
		if s.recErr == nil {
			s.recErr = e.err
		}
	case e.notice != "":
		s.send(errorMsg(s.id, "", e.notice))
	default:
		s.onEvent(e.ev)
	}
}

// recogniserGone takes what the exited recogniser leaves: its time, and
// an error for the next Write when it stopped early.
func (s *session) recogniserGone() {
	r := s.recog
	if !r.closed {
		close(r.in)
		r.closed = true
		if s.recErr == nil {
			s.recErr = errors.New("recogniser stopped")
		}
	}
	s.recWG.Wait()
	s.busy += r.busy
	lean, segments := r.live.LeanSegments()
	s.lean += lean
	s.segments += segments
	s.svc.segments.WithLabelValues("full").Add(float64(segments - lean))
	s.svc.segments.WithLabelValues("lean").Add(float64(lean))
	s.backlog = nil
	s.recog = nil
}

// closeRecogniser ends recognition at the session's end: the framer's
// tail and the backlog are handed over, and the session handles the
// recogniser's events until it has flushed and exited.
func (s *session) closeRecogniser() {
	if s.recog == nil {
		return
	}
	if tail := s.framer.Flush(); len(tail) > 0 && len(tail[0]) > 0 {
		s.queue(tail)
	}
	r := s.recog
	for len(s.backlog) > 0 && !r.closed {
		select {
		case r.in <- s.backlog:
			s.backlog = nil
		case e, ok := <-r.events:
			s.onRecogniser(e, ok)
			if !ok {
				return
			}
		}
	}
	if !r.closed {
		close(r.in)
		r.closed = true
	}
	for e := range r.events {
		s.onRecogniser(e, true)
	}
	s.recogniserGone()
}
