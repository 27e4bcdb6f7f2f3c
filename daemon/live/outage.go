package live

import (
	"errors"
	"time"

	"github.com/earshot-dev/earshot/store"
)

// A cluster's shared store may be away for a while (PostgreSQL restarting)
// while live calls go on: a session keeps recognising and recording, holds
// its callback deliveries in order and commits them when the store is
// back, and a session that ends meanwhile stores its end then (endWhenBack).
// A delivery keeps the id its first try gave it, so one that committed
// unseen is not queued twice.

// storeRetry is how often a session tries again to commit what the store
// could not take.
const storeRetry = time.Second

// maxHeldDeliveries bounds the callback deliveries a session holds while
// the store is unavailable; later ones are dropped (and logged).
const maxHeldDeliveries = 10000

// flushDeliveries commits the callback deliveries queued since the last
// flush in one store commit and wakes the outbox. While the store is
// unavailable they are held, in order, and tried again at most every
// storeRetry.
func (s *session) flushDeliveries() {
	if len(s.pending) == 0 {
		return
	}
	if !s.heldTried.IsZero() && time.Since(s.heldTried) < storeRetry {
		s.boundHeld()
		return
	}
	pending := s.pending
	s.pending = nil
	_, err := s.svc.db.UpdateJob(s.id, func(*store.Job) ([]*store.Delivery, error) { return pending, nil })
	switch {
	case errors.Is(err, store.ErrUnavailable):
		if s.heldTried.IsZero() {
			s.log.Warn("store unavailable; callbacks held until it is back", "error", err, "deliveries", len(pending))
		}
		s.heldTried = time.Now()
		s.pending = append(pending, s.pending...)
		s.boundHeld()
		return
	case err != nil:
		s.log.Error("queue live callbacks", "error", err, "deliveries", len(pending))
	default:
		if !s.heldTried.IsZero() {
			s.log.Info("store back; held callbacks queued", "deliveries", len(pending))
		}
		s.svc.deps.Signals.Queued(false, true)
	}
	s.heldTried = time.Time{}
}

// boundHeld drops the deliveries held beyond maxHeldDeliveries.
func (s *session) boundHeld() {
	if n := len(s.pending) - maxHeldDeliveries; n > 0 {
		s.log.Error("too many callbacks held while the store is unavailable; the newest dropped", "dropped", n)
		s.pending = s.pending[:maxHeldDeliveries]
	}
}

// storeRecording stores the finished recording at path (finalised): the
// rest of its copy in a cluster's store, else the file whole. It returns
// the path when the store was unavailable, for endWhenBack to store.
func (s *session) storeRecording(path string) string {
	s.shared.halt()
	if s.shared.finish(s.format, s.rec.audio) {
		return ""
	}
	if err := s.svc.deps.Recordings.CommitRecording(path); err != nil {
		s.log.Error("store recording", "error", err)
		if errors.Is(err, store.ErrUnavailable) {
			return path
		}
	}
	return ""
}

// endWhenBack stores a session's end once the store is back: the local
// recording (when left), then its job's final record with the callback
// deliveries still held, by update, and then stored (its signals). It
// tries every storeRetry on a goroutine of the service's and stops on
// success, another error, or once the shutdown has begun (the job then
// stays processing on this node and is transcribed from its recording at
// the next start).
func (s *session) endWhenBack(recording string, update func(j *store.Job) ([]*store.Delivery, error), stored func()) {
	svc, log := s.svc, s.log
	log.Warn("store unavailable at the end of a live session; storing it when it is back")
	svc.wg.Go(func() {
		t := time.NewTicker(storeRetry)
		defer t.Stop()
		for {
			select {
			case <-t.C:
			case <-svc.stop:
				log.Warn("shutting down with the end of a live session not stored; it is recovered at the next start")
				return
			}
			var err error
			if recording != "" {
				err = svc.deps.Recordings.CommitRecording(recording)
				if err == nil {
					recording = ""
				}
			}
			if err == nil {
				_, err = svc.db.UpdateJob(s.id, update)
			}
			switch {
			case errors.Is(err, store.ErrUnavailable):
				continue
			case errors.Is(err, errEndedElsewhere):
				log.Warn("live session was ended by another node meanwhile; its end here is dropped")
			case err != nil && !errors.Is(err, store.ErrNotFound):
				log.Error("store the end of a live session", "error", err)
			default:
				stored()
				log.Info("stored the end of a live session after the store came back")
			}
			return
		}
	})
}
