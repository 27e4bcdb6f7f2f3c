package sealed

import (
	"context"
	"fmt"
	"time"
)

// Rotate re-wraps every data key under to while the store serves: the
// keyring's header first records the rotation (so a restart with either
// key configured resumes it, reading the other key's file), new data keys
// are wrapped under to from then on, and each existing one is re-wrapped
// (Keyring.Put: the new wrap durable before the old is zeroed), at most
// RotateRate a second; the header is cleared at the end. A rotation cut
// short (ctx, Close, a kill) leaves every data key under one of the two
// keys. It returns how many keys it re-wrapped.
func (s *Store) Rotate(ctx context.Context, to *KEK) (int, error) {
	s.rotateMu.Lock()
	defer s.rotateMu.Unlock()
	s.keysMu.Lock()
	from := s.primary
	if from.ID() == to.ID() && s.ring.Rotation() == nil {
		s.keysMu.Unlock()
		return 0, nil
	}
	if from.ID() != to.ID() {
		if err := s.ring.SetRotation(&Rotation{From: from.ID(), FromFile: from.Path(), To: to.ID(), ToFile: to.Path()}); err != nil {
			s.keysMu.Unlock()
			return 0, fmt.Errorf("sealed: rotate: %w", err)
		}
	}
	s.keks[to.ID()] = to
	s.primary = to
	s.keysMu.Unlock()
	n, err := s.rewrapLocked(ctx, to)
	return n, err
}

// rewrap resumes a rotation Open found unfinished.
func (s *Store) rewrap(ctx context.Context, to *KEK) error {
	s.rotateMu.Lock()
	defer s.rotateMu.Unlock()
	_, err := s.rewrapLocked(ctx, to)
	return err
}

func (s *Store) rewrapLocked(ctx context.Context, to *KEK) (int, error) {
	tick := time.NewTicker(time.Second / time.Duration(s.rate))
	defer tick.Stop()
	n := 0
	for _, id := range s.ring.IDs() {
		// Checked first: select picks at random among ready cases, and
		// the ticker is ready again by the time a re-wrap returns.
		if err := ctx.Err(); err != nil {
			return n, err
		}
		if s.ctx.Err() != nil {
			return n, fmt.Errorf("sealed: rotate: store closing")
		}
		select {
		case <-ctx.Done():
			return n, ctx.Err()
		case <-s.closing():
			return n, fmt.Errorf("sealed: rotate: store closing")
		case <-tick.C:
		}
		done, err := s.rewrapOne(id, to)
		if err != nil {
			return n, err
		}
		if done {
			n++
			if s.rewrapped != nil {
				s.rewrapped(n)
			}
		}
	}
	if err := s.ring.SetRotation(nil); err != nil {
		return n, fmt.Errorf("sealed: rotate: %w", err)
	}
	return n, nil
}

func (s *Store) rewrapOne(id string, to *KEK) (bool, error) {
	s.ringMu.Lock()
	defer s.ringMu.Unlock()
	e, ok := s.ring.Get(id)
	if !ok || e.KEK == to.ID() {
		return false, nil // destroyed meanwhile, or done before a restart
	}
	kek := s.kek(e.KEK)
	if kek == nil {
		return false, fmt.Errorf("sealed: rotate: data key of %s is under key %s, not configured", id, e.KEK)
	}
	raw, err := kek.unwrap(id, e.Wrapped)
	if err != nil {
		return false, fmt.Errorf("sealed: rotate: %w", err)
	}
	defer clear(raw)
	if err := s.ring.Put(id, Entry{KEK: to.ID(), Wrapped: to.wrap(id, raw)}); err != nil {
		return false, fmt.Errorf("sealed: rotate: %w", err)
	}
	return true, nil
}

// RotateDataKey loads the key file at path and rotates to it (Rotate),
// until the store closes.
func (s *Store) RotateDataKey(path string) (int, error) {
	k, err := LoadKeyFile(path)
	if err != nil {
		return 0, err
	}
	return s.Rotate(s.ctx, k)
}
