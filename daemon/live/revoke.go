package live

import (
	"crypto/hmac"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"errors"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/earshot-dev/earshot/errcode"
	"github.com/earshot-dev/earshot/store"
)

// tokenSecretAccount names the store secret that signs session tokens; the
// "/" keeps it apart from every real account name.
const tokenSecretAccount = "/session-token"

// token signs "id.expiry" with the persisted token secret.
func (s *Service) token(id string, exp time.Time) (string, error) {
	key, err := s.db.CallbackSecret(tokenSecretAccount)
	if err != nil {
		return "", err
	}
	payload := id + "." + strconv.FormatInt(exp.Unix(), 10)
	mac := hmac.New(sha256.New, key)
	mac.Write([]byte(payload))
	return payload + "." + hex.EncodeToString(mac.Sum(nil)), nil
}

// checkToken returns the session id a valid, unexpired token names.
func (s *Service) checkToken(tok string) (string, error) {
	parts := strings.Split(tok, ".")
	if len(parts) != 3 || len(parts[0]) != 36 {
		return "", ErrTokenInvalid
	}
	if _, err := uuid.Parse(parts[0]); err != nil {
		return "", ErrTokenInvalid
	}
	exp, err := strconv.ParseInt(parts[1], 10, 64)
	if err != nil {
		return "", ErrTokenInvalid
	}
	want, err := s.token(parts[0], time.Unix(exp, 0))
	if err != nil {
		return "", err
	}
	if subtle.ConstantTimeCompare([]byte(want), []byte(tok)) != 1 || !time.Now().Before(time.Unix(exp, 0)) {
		return "", ErrTokenInvalid
	}
	return parts[0], nil
}

// CheckToken checks a session token as AttachLive does (signed by this
// service, unexpired, its API key not revoked) without attaching: a door
// that builds something costly for an attachment (WHIP's PeerConnection)
// refuses a forged token first, for the cost of one HMAC.
func (s *Service) CheckToken(tok string) error {
	id, err := s.checkToken(tok)
	if err != nil {
		return err
	}
	return s.checkSessionKey(id, s.lookup(id))
}

// EndKey ends every open live session the key created, at once: its
// client gets no more messages and is closed with 4401 (the WHIP door
// hangs up), and the job ends as error 401 with what was recorded kept.
func (s *Service) EndKey(keyID string) {
	n := 0
	for _, sess := range s.list() {
		if sess.keyID == keyID && sess.endFrom(ErrKeyRevoked) {
			n++
		}
	}
	if n > 0 {
		s.log.Info("live sessions of a revoked key ended", "key_id", keyID, "sessions", n)
	}
}

// checkSessionKey refuses a session token whose API key was revoked, for a
// session still open (sess) or one that has ended (looked up by id).
func (s *Service) checkSessionKey(id string, sess *session) error {
	keyID := ""
	if sess != nil {
		keyID = sess.keyID
	} else if j, err := s.db.Job(id); err == nil {
		keyID = j.KeyID
	}
	if keyID == "" {
		return nil
	}
	k, err := s.db.Key(keyID)
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

// Live session errors, each mapped by the WebSocket door to a close code.
var (
	// ErrTokenInvalid is returned for a session token that is malformed,
	// forged or expired (close 4401).
	ErrTokenInvalid = &errcode.Error{Kind: errcode.ErrUnauthorized, Msg: "invalid or expired session token"}
	// ErrKeyRevoked ends, and refuses, the sessions of a revoked API key
	// (close 4401, job error 401).
	ErrKeyRevoked = &errcode.Error{Kind: errcode.ErrUnauthorized, Msg: "the API key that created this session was revoked"}
	// ErrSessionEnded is returned when audio or a stop arrives for a
	// session that has ended (close 4404).
	ErrSessionEnded = &errcode.Error{Kind: errcode.ErrNotFound, Msg: "session has ended"}
	// ErrTakenOver is returned to an attachment a newer one replaced
	// (close 4404).
	ErrTakenOver = &errcode.Error{Kind: errcode.ErrNotFound, Msg: "a newer connection took over this session"}
)
