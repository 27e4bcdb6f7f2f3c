package daemon

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/earshot-dev/earshot/ingest"
	"github.com/earshot-dev/earshot/params"
	"github.com/earshot-dev/earshot/store"
)

// tokenSecretAccount names the store secret that signs session tokens; the
// "/" keeps it apart from every real account name.
const tokenSecretAccount = "/session-token"

// ErrTokenInvalid is returned for a session token that is malformed, forged
// or expired (WebSocket close 4401).
var ErrTokenInvalid = newError(ErrUnauthorized, nil, "invalid or expired session token")

// CreateLive validates a POST /v2/live body, commits a queued live job and
// returns it with the session token for its WebSocket URL. keyID is the API
// key asking ("" for a door without one): revoking it ends the session.
func (d *Daemon) CreateLive(ctx context.Context, account, keyID, requestID string, body []byte, region string) (*store.Job, string, error) {
	p, err := params.DecodeLive(body, d.caps)
	if err != nil {
		return nil, "", err
	}
	if _, err := d.pl.Engines.Route(p.Model, p.LanguageConfig.Languages, p.LanguageConfig.CodeSwitching); err != nil {
		return nil, "", err
	}
	if region != "" && region != "us-west" && region != "eu-west" {
		return nil, "", &ValidationError{Problems: []string{"region must be one of us-west, eu-west"}}
	}
	if err := d.quota.admit(account); err != nil {
		// Also ErrAtCapacity, for a door with no 507 of its own (SIP: 503).
		return nil, "", newError(ErrQuota, fmt.Errorf("%w: %w", ingest.ErrAtCapacity, err), reasonQuota, d.quota.limit)
	}
	// The check and the insert below are one step: concurrent creates
	// cannot both take the last slot.
	d.liveAdmit.Lock()
	defer d.liveAdmit.Unlock()
	if err := d.admitLive(account); err != nil {
		return nil, "", err
	}
	id := uuid.NewString()
	now := time.Now().UTC()
	psm := map[string]any{}
	if region != "" {
		psm["region"] = region
	}
	job := &store.Job{
		ID: id, Account: account, KeyID: keyID, Kind: store.KindLive, Status: store.StatusQueued,
		RequestID: requestID, CreatedAt: now, CustomMetadata: p.CustomMetadata,
		PostSessionMetadata: psm, Blob: "live-" + id + ".wav",
	}
	if job.Params, err = json.Marshal(p); err != nil {
		return nil, "", fmt.Errorf("encode params: %w", err)
	}
	s, err := d.newSession(job, p)
	if err != nil {
		return nil, "", err
	}
	if err := d.db.CreateJob(job); err != nil {
		s.closeFile()
		d.db.RemoveBlob(job.Blob)
		return nil, "", err
	}
	d.liveMu.Lock()
	d.sessions[id] = s
	d.liveMu.Unlock()
	d.metrics.liveCreated.Inc()
	tok, err := d.token(id, s.expires)
	if err != nil {
		return nil, "", err
	}
	d.log.Info("live session created", "session_id", id, "account_id", account)
	return job, tok, nil
}

// admitLive checks the appliance's live capacity and the account's quota.
// The caller holds liveAdmit.
func (d *Daemon) admitLive(account string) error {
	if d.stopped() {
		return newError(ErrAtCapacity, nil, "shutting down")
	}
	d.liveMu.Lock()
	n, mine := len(d.sessions), 0
	for _, s := range d.sessions {
		if s.account == account {
			mine++
		}
	}
	d.liveMu.Unlock()
	if n >= d.cfg.Live.Capacity {
		return newError(ErrAtCapacity, nil, "%d live sessions open, capacity %d", n, d.cfg.Live.Capacity)
	}
	if limit := d.cfg.Live.accountLimit(); limit > 0 && mine >= limit {
		return newError(ErrLiveQuota, nil, "this account has %d live sessions open, its limit is %d (live.max_sessions_per_account); end one first", mine, limit)
	}
	return nil
}

// OpenLive opens a live session for a door without an HTTP request of its
// own (SIP): the job is created as by POST /v2/live and attached at once,
// with no WebSocket listener (messages still reach result.messages and the
// callback). Ending the door's call must Stop the session.
func (d *Daemon) OpenLive(ctx context.Context, req ingest.LiveRequest) (ingest.Session, error) {
	job, _, err := d.CreateLive(ctx, req.Account, "", "", req.Params, "")
	if err != nil {
		return nil, err
	}
	if len(req.Metadata) > 0 || req.Source != "" {
		_, err = d.db.UpdateJob(job.ID, func(j *store.Job) ([]*store.Delivery, error) {
			if j.CustomMetadata == nil {
				j.CustomMetadata = map[string]any{}
			}
			for k, v := range req.Metadata {
				j.CustomMetadata[k] = v
			}
			j.PostSessionMetadata["source"] = req.Source
			return nil, nil
		})
		if err != nil {
			return nil, err
		}
	}
	d.liveMu.Lock()
	s := d.sessions[job.ID]
	d.liveMu.Unlock()
	if s == nil {
		return nil, ErrSessionEnded
	}
	return s.attach(ctx, nil, nil)
}

// AttachAudio attaches an audio-only door (WHIP) to the session a token
// names, keeping any WebSocket client as the listener of its messages. The
// listener should connect first: a later WebSocket attach takes over the
// session, audio included.
func (d *Daemon) AttachAudio(ctx context.Context, tok string) (ingest.Session, error) {
	return d.AttachLive(ctx, tok, nil, nil)
}

// token signs "id.expiry" with the daemon's persisted token secret.
func (d *Daemon) token(id string, exp time.Time) (string, error) {
	key, err := d.db.CallbackSecret(tokenSecretAccount)
	if err != nil {
		return "", err
	}
	payload := id + "." + strconv.FormatInt(exp.Unix(), 10)
	mac := hmac.New(sha256.New, key)
	mac.Write([]byte(payload))
	return payload + "." + hex.EncodeToString(mac.Sum(nil)), nil
}

// checkToken returns the session id a valid, unexpired token names.
func (d *Daemon) checkToken(tok string) (string, error) {
	parts := strings.Split(tok, ".")
	if len(parts) != 3 || !ValidID(parts[0]) {
		return "", ErrTokenInvalid
	}
	exp, err := strconv.ParseInt(parts[1], 10, 64)
	if err != nil {
		return "", ErrTokenInvalid
	}
	want, err := d.token(parts[0], time.Unix(exp, 0))
	if err != nil {
		return "", err
	}
	if subtle.ConstantTimeCompare([]byte(want), []byte(tok)) != 1 || !time.Now().Before(time.Unix(exp, 0)) {
		return "", ErrTokenInvalid
	}
	return parts[0], nil
}

// AttachLive connects a client to the session its token names. out sends
// one server message to the client (false when it cannot); kick closes the
// client's connection (a newer connection took over or the session ended).
func (d *Daemon) AttachLive(ctx context.Context, tok string, out func([]byte) bool, kick func()) (*Attachment, error) {
	id, err := d.checkToken(tok)
	if err != nil {
		return nil, err
	}
	d.liveMu.Lock()
	s := d.sessions[id]
	d.liveMu.Unlock()
	if err := d.checkSessionKey(id, s); err != nil {
		return nil, err
	}
	if s == nil {
		return nil, newError(ErrNotFound, nil, "session %s has ended or does not exist", id)
	}
	return s.attach(ctx, out, kick)
}

// runLive finalises sessions that time out: never connected before their
// token expired (error 408), disconnected past the reconnect grace, or idle
// past the idle timeout (as if stop_recording had come). On shutdown the
// live stage (shutdown.go) finishes every running session before ctx ends.
func (d *Daemon) runLive(ctx context.Context) error {
	t := time.NewTicker(250 * time.Millisecond)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case now := <-t.C:
			for _, s := range d.liveSessions() {
				s.expire(ctx, now, false)
			}
		}
	}
}

func (d *Daemon) liveSessions() []*liveSession {
	d.liveMu.Lock()
	defer d.liveMu.Unlock()
	out := make([]*liveSession, 0, len(d.sessions))
	for _, s := range d.sessions {
		out = append(out, s)
	}
	return out
}

func (d *Daemon) dropSession(id string) {
	d.liveMu.Lock()
	delete(d.sessions, id)
	d.liveMu.Unlock()
}
