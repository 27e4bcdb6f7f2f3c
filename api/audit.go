package api

import (
	"context"
	"fmt"
	"net/url"
	"strconv"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/earshot-dev/earshot/store"
)

// Audit is what the API needs of the audit trail and the legal hold.
type Audit interface {
	// Audit queues an entry; it never blocks nor fails.
	Audit(e store.AuditEntry)
	AuditLog(ctx context.Context, q store.AuditQuery) ([]*store.AuditEntry, error)
	SetHold(ctx context.Context, kind store.Kind, id, keyID string, hold bool) (*store.Job, error)
	HoldOf(ctx context.Context, kind store.Kind, id string) (*store.Job, error)
}

// ctxAuditObject holds the id of what a request created (a job, upload or
// key), for its audit entry; other requests' object is the path's id.
type ctxAuditObject struct{}

func setAuditObject(ctx *fasthttp.RequestCtx, id string) { ctx.SetUserValue(ctxAuditObject{}, id) }

// audited records the request in the audit trail once h has answered: the
// key's id and account, the client's address, action, the object and the
// status h answered, refusals included (a 401 for another account's job,
// a 403 for a non-admin key). It runs after auth, so only requests with a
// valid key are recorded. The entry holds ids only, never a body.
func (s *Server) audited(action store.AuditAction, h fasthttp.RequestHandler) fasthttp.RequestHandler {
	return func(ctx *fasthttp.RequestCtx) {
		h(ctx)
		k := authKey(ctx)
		obj, _ := ctx.UserValue(ctxAuditObject{}).(string)
		if obj == "" {
			obj = pathID(ctx)
		}
		s.svc.Audit(store.AuditEntry{KeyID: k.ID, Account: k.Account, Source: ctx.RemoteAddr().String(),
			Action: action, Object: obj, Status: ctx.Response.StatusCode()})
	}
}

// holdJSON is a job's legal hold as its routes show it.
type holdJSON struct {
	ID      string  `json:"id"`
	Kind    string  `json:"kind"`
	Account string  `json:"account"`
	Held    bool    `json:"held"`
	HeldAt  *string `json:"held_at"` // null while not held
	HeldBy  *string `json:"held_by"` // the admin key's id; null while not held
}

func newHoldJSON(j *store.Job) holdJSON {
	h := holdJSON{ID: j.ID, Kind: string(j.Kind), Account: j.Account, Held: j.Held()}
	if j.Held() {
		at, by := formatTime(j.HeldAt), j.HeldBy
		h.HeldAt, h.HeldBy = &at, &by
	}
	return h
}

// setHold is POST (hold) and DELETE (release) /v2/{kind}/{id}/hold, admin
// keys only: 200 with the hold. A held job is kept by retention and its
// DELETE is 409 until the hold is released. Unknown id: 404.
func (s *Server) setHold(kind store.Kind, hold bool) fasthttp.RequestHandler {
	return func(ctx *fasthttp.RequestCtx) {
		j, err := s.svc.SetHold(ctx, kind, pathID(ctx), keyID(ctx), hold)
		if err != nil {
			s.fail(ctx, err)
			return
		}
		s.writeJSON(ctx, fasthttp.StatusOK, newHoldJSON(j))
	}
}

// getHold is GET /v2/{kind}/{id}/hold, admin keys only: 200 with the hold
// of a job of any account.
func (s *Server) getHold(kind store.Kind) fasthttp.RequestHandler {
	return func(ctx *fasthttp.RequestCtx) {
		j, err := s.svc.HoldOf(ctx, kind, pathID(ctx))
		if err != nil {
			s.fail(ctx, err)
			return
		}
		s.writeJSON(ctx, fasthttp.StatusOK, newHoldJSON(j))
	}
}

// auditEntryJSON is an audit entry as GET /admin/audit shows it; prev and
// hash in hex.
type auditEntryJSON struct {
	Seq     uint64 `json:"seq"`
	At      string `json:"at"`
	KeyID   string `json:"key_id"`
	Account string `json:"account"`
	Source  string `json:"source"`
	Action  string `json:"action"`
	Object  string `json:"object"`
	Status  int    `json:"status"`
	Prev    string `json:"prev"`
	Hash    string `json:"hash"`
}

// auditTimeFormat shows an entry's time to the nanosecond, as hashed.
const auditTimeFormat = time.RFC3339Nano

func newAuditEntryJSON(e *store.AuditEntry) auditEntryJSON {
	return auditEntryJSON{Seq: e.Seq, At: e.At.UTC().Format(auditTimeFormat), KeyID: e.KeyID, Account: e.Account,
		Source: e.Source, Action: string(e.Action), Object: e.Object, Status: e.Status,
		Prev: fmt.Sprintf("%x", e.Prev), Hash: fmt.Sprintf("%x", e.Hash)}
}

// parseAuditQuery reads GET /admin/audit's query: account, object, action,
// the lists' date, before_date and after_date, offset and limit (SPEC 4.3).
func parseAuditQuery(args *fasthttp.Args) (store.AuditQuery, url.Values, error) {
	lq, err := parseListQuery(args)
	if err != nil {
		return store.AuditQuery{}, nil, err
	}
	if len(lq.Statuses) > 0 || len(lq.Metadata) > 0 {
		return store.AuditQuery{}, nil, errBadRequest("status and custom_metadata do not filter the audit trail")
	}
	q := store.AuditQuery{Newest: true, Offset: lq.Offset, Limit: lq.Limit, Until: lq.Before}
	if !lq.After.IsZero() {
		q.Since = lq.After.Add(time.Nanosecond)
	}
	links := lq.links
	for _, f := range []struct {
		name string
		dst  *string
	}{{"account", &q.Account}, {"object", &q.Object}} {
		if v := args.Peek(f.name); v != nil {
			*f.dst = string(v)
			links.Set(f.name, string(v))
		}
	}
	if v := args.Peek("action"); v != nil {
		q.Action = store.AuditAction(v)
		links.Set("action", string(v))
	}
	return q, links, nil
}

// listAudit is GET /admin/audit, admin keys only: the audit trail newest
// first, filtered, paged as the lists are ({first, current, next, items}).
func (s *Server) listAudit(ctx *fasthttp.RequestCtx) {
	q, links, err := parseAuditQuery(ctx.QueryArgs())
	if err != nil {
		s.fail(ctx, err)
		return
	}
	limit, offset := q.Limit, q.Offset
	q.Limit++ // one more tells whether a next page exists
	es, err := s.svc.AuditLog(ctx, q)
	if err != nil {
		s.fail(ctx, err)
		return
	}
	base := s.baseURL(ctx) + string(ctx.Path())
	link := func(offset int) string {
		v := url.Values{}
		for k, vs := range links {
			v[k] = vs
		}
		v.Set("offset", strconv.Itoa(offset))
		v.Set("limit", strconv.Itoa(limit))
		return base + "?" + v.Encode()
	}
	page := struct {
		First   string           `json:"first"`
		Current string           `json:"current"`
		Next    *string          `json:"next"`
		Items   []auditEntryJSON `json:"items"`
	}{First: link(0), Current: link(offset), Items: []auditEntryJSON{}}
	for i, e := range es {
		if i == limit {
			next := link(offset + limit)
			page.Next = &next
			break
		}
		page.Items = append(page.Items, newAuditEntryJSON(e))
	}
	s.writeJSON(ctx, fasthttp.StatusOK, page)
}
