package daemon

import (
	"context"
	"errors"

	"github.com/earshot-dev/earshot/store"
)

// ErrKeyRevoked ends, and refuses, the live sessions of a revoked API key
// (WebSocket close 4401, job error 401).
var ErrKeyRevoked = newError(ErrUnauthorized, nil, "the API key that created this session was revoked")

// endKeySessions ends every open live session the key created, at once:
// its client gets no more messages and is closed with 4401 (the WHIP door
// hangs up), and the job ends as error 401 with what was recorded kept.
func (d *Daemon) endKeySessions(keyID string) {
	n := 0
	for _, s := range d.liveSessions() {
		if s.keyID == keyID && s.revoke() {
			n++
		}
	}
	if n > 0 {
		d.log.Info("live sessions of a revoked key ended", "key_id", keyID, "sessions", n)
	}
}

// revoke ends the session because its key was revoked; false when it had
// already ended.
func (s *liveSession) revoke() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.state == stateEnded {
		return false
	}
	s.endErr = ErrKeyRevoked
	s.sink, s.kick = nil, nil // the revoked client hears nothing more
	s.stopped = true
	s.finishLocked(context.Background(), ErrKeyRevoked.Msg)
	return true
}

// checkSessionKey refuses a session token whose API key was revoked, for a
// session still open (s) or one that has ended (looked up by id).
func (d *Daemon) checkSessionKey(id string, s *liveSession) error {
	keyID := ""
	if s != nil {
		keyID = s.keyID
	} else if j, err := d.db.Job(id); err == nil {
		keyID = j.KeyID
	}
	if keyID == "" {
		return nil
	}
	k, err := d.db.Key(keyID)
	switch {
	case errors.Is(err, store.ErrNotFound):
		return ErrKeyRevoked
	case err != nil:
		return err
	case !k.Active():
		return ErrKeyRevoked
	}
	return nil
}

// Err is why the session was ended from outside (ErrKeyRevoked), nil when
// it ended on its own; the door closes with its code once Done is closed.
func (a *Attachment) Err() error {
	a.s.mu.Lock()
	defer a.s.mu.Unlock()
	return a.s.endErr
}
