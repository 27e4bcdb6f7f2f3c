package live

import (
	"context"

	"github.com/earshot-dev/earshot/ingest"
	"github.com/earshot-dev/earshot/ingest/media"
)

// request is one typed message to a session's goroutine; handle runs on
// it and answers on the request's reply channel (buffered: the asker may
// have given up).
type request interface {
	handle(s *session)
}

type (
	attachReq struct {
		l     ingest.Listener
		reply chan attachReply
	}
	attachReply struct {
		gen int
		err error
	}
	// watchReq hands the session the unregistering of an attachment's
	// context watch, so the session drops it when it ends or is taken over.
	watchReq struct {
		gen  int
		stop func() bool
	}
	detachReq struct{ gen int }
	writeReq  struct {
		gen   int
		acks  bool
		audio []byte
		reply chan error
	}
	stopReq struct {
		ctx   context.Context
		gen   int
		acks  bool
		reply chan error
	}
	endReq struct {
		cause error
		reply chan bool
	}
)

func (r attachReq) handle(s *session) {
	gen, err := s.onAttach(r.l)
	r.reply <- attachReply{gen, err}
}

func (r watchReq) handle(s *session) {
	if s.gen != r.gen {
		r.stop() // already taken over
		return
	}
	if s.stopDetach != nil {
		s.stopDetach()
	}
	s.stopDetach = r.stop
}

func (r detachReq) handle(s *session) { s.detach(r.gen) }
func (r writeReq) handle(s *session)  { r.reply <- s.write(r.gen, r.acks, r.audio) }
func (r stopReq) handle(s *session)   { r.reply <- s.stop(r.ctx, r.gen, r.acks) }
func (r endReq) handle(s *session) {
	s.onEnd(r.cause)
	r.reply <- true
}

// call puts r in the session's inbox, waiting while it is full.
func (s *session) call(ctx context.Context, r request) error {
	select {
	case s.inbox <- r:
		return nil
	case <-s.done:
		return ErrSessionEnded
	case <-ctx.Done():
		return context.Cause(ctx)
	}
}

// post is call for a request nobody waits on.
func (s *session) post(r request) { s.call(context.Background(), r) }

// await waits for a request's answer. A session that ended before
// answering it answers ErrSessionEnded.
func await[T any](ctx context.Context, s *session, reply <-chan T) (T, error) {
	var zero T
	select {
	case v := <-reply:
		return v, nil
	case <-s.done:
		select {
		case v := <-reply:
			return v, nil
		default:
			return zero, ErrSessionEnded
		}
	case <-ctx.Done():
		return zero, context.Cause(ctx)
	}
}

// attachment is one door's connection to a session: the door contract.
type attachment struct {
	s   *session
	gen int
	// acks is set when the attachment's client reads messages (the
	// WebSocket): only its audio is acknowledged to it.
	acks bool
}

var _ ingest.Session = (*attachment)(nil)

// ID is the live job's id.
func (a *attachment) ID() string { return a.s.id }

// Format is the audio format the session was opened for.
func (a *attachment) Format() media.Format { return a.s.format }

// Done is closed when the session has ended.
func (a *attachment) Done() <-chan struct{} { return a.s.done }

// Err is why the session was ended from outside (ErrKeyRevoked), nil when
// it ended on its own or runs; the door closes with its code once Done is
// closed.
func (a *attachment) Err() error {
	select {
	case <-a.s.done:
		return a.s.endErr
	default:
		return nil
	}
}

// Write takes raw audio in the session's format; it returns once the
// session has stored and acked it (ctx bounds only the wait for the
// session to take it: audio is the door's buffer until Write returns).
func (a *attachment) Write(ctx context.Context, audio []byte) error {
	reply := make(chan error, 1)
	if err := a.s.call(ctx, writeReq{gen: a.gen, acks: a.acks, audio: audio, reply: reply}); err != nil {
		return err
	}
	err, werr := await(context.Background(), a.s, reply)
	if werr != nil {
		return werr
	}
	return err
}

// Stop ends the recording and returns once the job's result is stored;
// ctx bounds the post-processing add-ons. An attachment whose client reads
// messages (acks: the WebSocket) gets Stop back as soon as the stop is in
// the session's inbox, behind the audio written before it: its client hears
// the acknowledgment and the end as messages, and its door goes on reading,
// so a later stop_recording is acknowledged too (answerLater).
func (a *attachment) Stop(ctx context.Context) error {
	reply := make(chan error, 1)
	if err := a.s.call(ctx, stopReq{ctx: ctx, gen: a.gen, acks: a.acks, reply: reply}); err != nil {
		return err
	}
	if a.acks {
		return nil // the reply is buffered: nobody need take it
	}
	err, werr := await(context.Background(), a.s, reply)
	if werr != nil {
		return werr
	}
	return err
}

// answerLater answers, while the session finishes, the stops and audio
// sent after the stop that finishes it, as a stopped session answers them:
// a later stop_recording is acknowledged and ignored, audio refused with an
// error message (PROTOCOL.md). It takes only the requests waiting now (at
// most inboxSize), so a client cannot hold the end. Any other request it
// takes (an attach, a DELETE, the Stop of a door that waits for the stored
// result) is left unanswered: its asker hears ErrSessionEnded once the
// session has ended, as it would had it come after.
func (s *session) answerLater() {
	for range len(s.inbox) {
		switch r := (<-s.inbox).(type) {
		case stopReq:
			if r.acks {
				r.handle(s)
			}
		case writeReq:
			r.handle(s)
		}
	}
}
