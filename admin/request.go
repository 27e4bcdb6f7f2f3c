package admin

import (
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/earshot-dev/earshot/audit"
	"github.com/earshot-dev/earshot/errcode"
	"github.com/earshot-dev/earshot/store"
)

// The operations of a Request.
const (
	// OpCreateKey makes a key for Request.Account with Request.Scopes
	// (none: every scope) and Request.ExpiresAt (zero: never);
	// Response.Secret is its secret, shown only here.
	OpCreateKey = "keys.create"
	// OpListKeys lists every key, revoked ones included (Response.Keys).
	OpListKeys = "keys.list"
	// OpRevokeKey revokes the key Request.ID names.
	OpRevokeKey = "keys.revoke"
	// OpKeySecret returns Request.Account's callback signing secret, hex.
	OpKeySecret = "keys.secret"
	// OpBackup makes the running daemon write a backup of its store to
	// Request.Path (`earshotd backup` while the daemon holds it):
	// {"op":"store.backup","path":"<data dir>/backup-<name>.db"}.
	OpBackup = "store.backup"
	// OpAuditVerify checks the audit trail's chain (audit.Verify);
	// Response.Report says what was checked, Response.Error names the
	// first broken entry (`earshotd audit verify` while the daemon runs).
	OpAuditVerify = "audit.verify"
	// OpRotateDataKey re-wraps every data key of a sealed store under the
	// key-encryption key in the file Request.Path (store/sealed, Rotate);
	// Response.Rewrapped counts them. It returns when the rotation is done.
	OpRotateDataKey = "store.rotate_data_key"
)

// Request is one line sent on the admin socket.
type Request struct {
	Op      string `json:"op"` // one of the Op constants
	Account string `json:"account,omitempty"`
	ID      string `json:"id,omitempty"`
	Path    string `json:"path,omitempty"` // OpBackup: where to write
	// Scopes and ExpiresAt are OpCreateKey's grant (store.KeyGrant).
	Scopes    []store.Scope `json:"scopes,omitempty"`
	ExpiresAt time.Time     `json:"expires_at,omitzero"`
}

// Response answers a Request; Error is set when it failed.
type Response struct {
	Error  string      `json:"error,omitempty"`
	Secret string      `json:"secret,omitempty"`
	Key    *store.Key  `json:"key,omitempty"`
	Keys   []store.Key `json:"keys,omitempty"`
	// Warning is set when the operation was done but its audit entry
	// could not be stored (audit.go).
	Warning string `json:"warning,omitempty"`
	// Report is what OpAuditVerify checked.
	Report *AuditReport `json:"report,omitempty"`
	// Rewrapped counts the data keys OpRotateDataKey re-wrapped.
	Rewrapped int `json:"rewrapped,omitempty"`
}

// AuditReport is audit.Report as it crosses the socket.
type AuditReport struct {
	AnchorSeq uint64 `json:"anchor_seq"`
	Entries   int    `json:"entries"`
	HeadSeq   uint64 `json:"head_seq"`
	HeadHash  string `json:"head_hash"` // hex
}

// Do carries out req on an open store, and records a key created or
// revoked in the audit trail; the socket's Server and the CLI (when no
// daemon runs) share it. Its failure is Response.Error, which
// crosses the socket as text.
func Do(db store.Store, req Request) Response {
	var resp Response
	var err error
	switch req.Op {
	case OpCreateKey:
		var k store.Key
		resp.Secret, k, err = CreateKey(db, req.Account, store.KeyGrant{Scopes: req.Scopes, ExpiresAt: req.ExpiresAt})
		resp.Key = &k
	case OpListKeys:
		resp.Keys, err = db.Keys()
	case OpRevokeKey:
		err = db.RevokeKey(req.ID)
	case OpBackup:
		err = backup(db, req.Path)
	case OpAuditVerify:
		var r audit.Report
		r, err = audit.Verify(db)
		resp.Report = &AuditReport{AnchorSeq: r.Anchor.Seq, Entries: r.Entries, HeadSeq: r.HeadSeq, HeadHash: hex.EncodeToString(r.HeadHash)}
	case OpRotateDataKey:
		resp.Rewrapped, err = rotateDataKey(db, req.Path)
	case OpKeySecret:
		var b []byte
		b, err = db.CallbackSecret(req.Account)
		resp.Secret = hex.EncodeToString(b)
	default:
		err = fmt.Errorf("unknown op %q", req.Op)
	}
	if err != nil {
		resp = Response{Error: err.Error(), Report: resp.Report}
	}
	if err := auditOp(db, req, resp); err != nil {
		resp.Warning = err.Error()
	}
	return resp
}

// CreateKey makes a key for account with g's scopes and expiry and returns
// its secret; a malformed account, an unknown scope, the admin scope for
// another account or an expiry not in the future is an
// *errcode.ValidationError naming each field. The socket and the HTTP
// admin endpoints (through the daemon) both create keys with it.
func CreateKey(db store.Store, account string, g store.KeyGrant) (string, store.Key, error) {
	if problems := grantProblems(account, g, time.Now()); problems != nil {
		return "", store.Key{}, &errcode.ValidationError{Problems: problems}
	}
	secret, k, err := db.CreateKey(account, g)
	if errors.Is(err, store.ErrInvalid) { // a rule of the store's not checked above
		return "", k, &errcode.ValidationError{Problems: []string{"account, scopes: refused by the store"}, Cause: err}
	}
	return secret, k, err
}

// grantProblems lists what is wrong with a key for account with g, one
// entry per field; nil when nothing is.
func grantProblems(account string, g store.KeyGrant, now time.Time) []string {
	var problems []string
	if !store.ValidAccount(account) {
		problems = append(problems, fmt.Sprintf("account %q must be 1 to 64 of A-Z a-z 0-9 . _ -", account))
	}
	names := make([]string, len(store.Scopes))
	for i, s := range store.Scopes {
		names[i] = string(s)
	}
	for i, s := range g.Scopes {
		switch {
		case !s.Valid():
			problems = append(problems, fmt.Sprintf("scopes[%d] %q must be one of %s", i, s, strings.Join(names, ", ")))
		case s == store.ScopeAdmin && account != store.AdminAccount:
			problems = append(problems, fmt.Sprintf("scopes[%d] %q is only for keys of account %q", i, s, store.AdminAccount))
		}
	}
	if !g.ExpiresAt.IsZero() && !g.ExpiresAt.After(now) {
		problems = append(problems, "expires_at must be in the future")
	}
	return problems
}
