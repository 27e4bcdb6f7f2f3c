package api

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/earshot-dev/earshot/errcode"
	"github.com/earshot-dev/earshot/store"
)

// Keys is what the API needs of the daemon's key operations: the same ones
// the admin socket and `earshotd keys` use.
type Keys interface {
	AuthenticateKey(secret string) (store.Key, error)
	CreateKey(ctx context.Context, account string, g store.KeyGrant) (secret string, k store.Key, err error)
	Keys(ctx context.Context) ([]store.Key, error)
	RevokeKey(ctx context.Context, id string) error
}

// admin lets only admin keys (store.Key.Admin) through; it runs after auth.
func (s *Server) admin(h fasthttp.RequestHandler) fasthttp.RequestHandler {
	return func(ctx *fasthttp.RequestCtx) {
		if k := authKey(ctx); !k.Admin() {
			s.fail(ctx, fmt.Errorf("key %s of account %s: %w", k.ID, k.Account, errcode.ErrNotAdmin))
			return
		}
		h(ctx)
	}
}

// keyJSON is a key as /admin/keys shows it: never its secret or hash.
type keyJSON struct {
	ID        string        `json:"id"`
	Account   string        `json:"account"`
	Prefix    string        `json:"prefix"`
	Admin     bool          `json:"admin"`
	Scopes    []store.Scope `json:"scopes"` // every scope it holds
	CreatedAt string        `json:"created_at"`
	ExpiresAt *string       `json:"expires_at"` // null: never
	RevokedAt *string       `json:"revoked_at"` // null while active
}

func newKeyJSON(k store.Key) keyJSON {
	j := keyJSON{ID: k.ID, Account: k.Account, Prefix: k.Prefix, Admin: k.Admin(), Scopes: k.Granted(), CreatedAt: formatTime(k.CreatedAt)}
	if !k.Admin() {
		j.Scopes = slices.DeleteFunc(j.Scopes, func(s store.Scope) bool { return s == store.ScopeAdmin })
	}
	if !k.ExpiresAt.IsZero() {
		t := formatTime(k.ExpiresAt)
		j.ExpiresAt = &t
	}
	if !k.Active() {
		t := formatTime(k.RevokedAt)
		j.RevokedAt = &t
	}
	return j
}

// createKey is POST /admin/keys {"account": NAME, "scopes": [...],
// "expires_at": RFC 3339}: 201 with the key and, this once, its secret in
// "key". Without scopes the key holds every scope (as keys made before
// scopes existed); without expires_at it never expires.
func (s *Server) createKey(ctx *fasthttp.RequestCtx) {
	body, err := s.readJSON(ctx)
	if err != nil {
		s.fail(ctx, err)
		return
	}
	var req struct {
		Account   *string        `json:"account"`
		Scopes    *[]store.Scope `json:"scopes"`
		ExpiresAt *time.Time     `json:"expires_at"`
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&req); err != nil {
		s.fail(ctx, errBadRequest(jsonProblem(err)))
		return
	}
	if dec.Decode(new(json.RawMessage)) != io.EOF {
		s.fail(ctx, errBadRequest("body: must be one JSON object"))
		return
	}
	if req.Account == nil {
		s.fail(ctx, errBadRequest("account is required"))
		return
	}
	var g store.KeyGrant
	if req.Scopes != nil {
		if len(*req.Scopes) == 0 {
			s.fail(ctx, errBadRequest("scopes must list at least one scope (leave it out for every scope)"))
			return
		}
		g.Scopes = *req.Scopes
	}
	if req.ExpiresAt != nil {
		g.ExpiresAt = *req.ExpiresAt
	}
	secret, k, err := s.svc.CreateKey(ctx, *req.Account, g)
	if err != nil {
		s.fail(ctx, err)
		return
	}
	setAuditObject(ctx, k.ID)
	s.log.Info("key created", "account_id", keyID(ctx), "key_id", k.ID, "account", k.Account, "scopes", k.Scopes, "expires_at", k.ExpiresAt, "request_id", requestID(ctx))
	s.writeJSON(ctx, fasthttp.StatusCreated, struct {
		keyJSON
		Key string `json:"key"`
	}{newKeyJSON(k), secret})
}

// jsonProblem names what is wrong with an admin body.
func jsonProblem(err error) string {
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) && te.Field != "" {
		if strings.HasPrefix(te.Field, "scopes") {
			return "scopes must be an array of strings"
		}
		return te.Field + " must be a string"
	}
	var pe *time.ParseError
	if errors.As(err, &pe) {
		return "expires_at must be an RFC 3339 date-time"
	}
	return `body: must be a JSON object with only "account", "scopes", "expires_at"`
}

// listKeys is GET /admin/keys: every key, revoked ones included, oldest
// first.
func (s *Server) listKeys(ctx *fasthttp.RequestCtx) {
	keys, err := s.svc.Keys(ctx)
	if err != nil {
		s.fail(ctx, err)
		return
	}
	out := struct {
		Keys []keyJSON `json:"keys"`
	}{Keys: make([]keyJSON, 0, len(keys))}
	for _, k := range keys {
		out.Keys = append(out.Keys, newKeyJSON(k))
	}
	s.writeJSON(ctx, fasthttp.StatusOK, out)
}

// revokeKey is DELETE /admin/keys/{id}: 202; the key stops authenticating
// at once. An unknown id is 404.
func (s *Server) revokeKey(ctx *fasthttp.RequestCtx) {
	id := pathID(ctx)
	if err := s.svc.RevokeKey(ctx, id); err != nil {
		s.fail(ctx, err)
		return
	}
	s.log.Info("key revoked", "account_id", keyID(ctx), "key_id", id, "request_id", requestID(ctx))
	ctx.SetStatusCode(fasthttp.StatusAccepted)
}

// Nodes is what the API needs to list the nodes of a cluster.
type Nodes interface {
	Nodes(ctx context.Context) ([]store.NodeStatus, error)
}

// listNodes is GET /admin/nodes: every node sharing the store, by id, with
// its last heartbeat, whether it is alive and its load (on one box: this
// node alone).
func (s *Server) listNodes(ctx *fasthttp.RequestCtx) {
	nodes, err := s.svc.Nodes(ctx)
	if err != nil {
		s.fail(ctx, err)
		return
	}
	type nodeJSON struct {
		store.NodeStatus
		LastSeen string `json:"last_seen"`
	}
	out := struct {
		Nodes []nodeJSON `json:"nodes"`
	}{Nodes: make([]nodeJSON, 0, len(nodes))}
	for _, n := range nodes {
		out.Nodes = append(out.Nodes, nodeJSON{NodeStatus: n, LastSeen: formatTime(n.LastSeen)})
	}
	s.writeJSON(ctx, fasthttp.StatusOK, out)
}
