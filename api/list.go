package api

import (
	"fmt"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/earshot-dev/earshot/store"
)

// List bounds: SPEC leaves the maximum limit open; we cap it so one page
// stays small.
const (
	defaultLimit = 20
	maxLimit     = 1000
	maxMetaKeys  = 16
)

var statuses = []store.Status{store.StatusQueued, store.StatusProcessing, store.StatusDone, store.StatusError}

// listQuery is a parsed list request, kept to write the page links.
type listQuery struct {
	store.ListQuery
	links url.Values // the filters, as given, for first/current/next
}

// parseListQuery reads SPEC 4.3's query parameters; every bad one is named.
func parseListQuery(args *fasthttp.Args) (listQuery, error) {
	q := listQuery{ListQuery: store.ListQuery{Limit: defaultLimit}, links: url.Values{}}
	var problems []string
	bad := func(format string, a ...any) { problems = append(problems, fmt.Sprintf(format, a...)) }
	if v := args.Peek("offset"); v != nil {
		n, err := strconv.Atoi(string(v))
		if err != nil || n < 0 {
			bad("offset must be an integer >= 0")
		} else {
			q.Offset = n
		}
	}
	if v := args.Peek("limit"); v != nil {
		n, err := strconv.Atoi(string(v))
		if err != nil || n < 1 || n > maxLimit {
			bad("limit must be an integer from 1 to %d", maxLimit)
		} else {
			q.Limit = n
		}
	}
	for _, v := range args.PeekMulti("status") {
		for _, st := range strings.Split(string(v), ",") {
			if !slices.Contains(statuses, store.Status(st)) {
				bad("status must be one of queued, processing, done, error")
				continue
			}
			if !slices.Contains(q.Statuses, store.Status(st)) {
				q.Statuses = append(q.Statuses, store.Status(st))
				q.links.Add("status", st)
			}
		}
	}
	if v := args.Peek("date"); v != nil {
		d, err := time.Parse(time.DateOnly, string(v))
		if err != nil {
			bad("date must be a date of the form YYYY-MM-DD")
		} else {
			q.After = d.Add(-time.Nanosecond)
			q.Before = d.Add(24 * time.Hour)
			q.links.Set("date", string(v))
		}
	}
	for _, k := range []string{"before_date", "after_date"} {
		v := args.Peek(k)
		if v == nil {
			continue
		}
		t, err := parseDateTime(string(v))
		if err != nil {
			bad("%s must be a date (YYYY-MM-DD) or date-time (RFC 3339)", k)
			continue
		}
		q.links.Set(k, string(v))
		if k == "before_date" && (q.Before.IsZero() || t.Before(q.Before)) {
			q.Before = t
		}
		if k == "after_date" && t.After(q.After) {
			q.After = t
		}
	}
	for key, value := range args.All() {
		k := string(key)
		if !strings.HasPrefix(k, "custom_metadata[") || !strings.HasSuffix(k, "]") {
			continue
		}
		name := k[len("custom_metadata[") : len(k)-1]
		if q.Metadata == nil {
			q.Metadata = map[string]string{}
		}
		if name == "" || len(q.Metadata) >= maxMetaKeys {
			bad("custom_metadata filters must name a key, at most %d keys", maxMetaKeys)
			continue
		}
		q.Metadata[name] = string(value)
		q.links.Set(k, string(value))
	}
	if len(problems) > 0 {
		return q, errBadRequest(problems...)
	}
	return q, nil
}

func parseDateTime(s string) (time.Time, error) {
	if t, err := time.Parse(time.DateOnly, s); err == nil {
		return t, nil
	}
	return time.Parse(time.RFC3339Nano, s)
}

type page struct {
	First   string      `json:"first"`
	Current string      `json:"current"`
	Next    *string     `json:"next"`
	Items   []jobRecord `json:"items"`
}

func (s *Server) list(kind store.Kind) fasthttp.RequestHandler {
	return func(ctx *fasthttp.RequestCtx) {
		q, err := parseListQuery(ctx.QueryArgs())
		if err != nil {
			s.fail(ctx, err)
			return
		}
		q.Account, q.Kind = account(ctx), kind
		limit := q.Limit
		q.Limit++ // one more tells whether a next page exists
		jobs, err := s.svc.ListJobs(ctx, q.ListQuery)
		if err != nil {
			s.fail(ctx, err)
			return
		}
		base := s.baseURL(ctx) + string(ctx.Path())
		link := func(offset int) string {
			v := url.Values{}
			for k, vs := range q.links {
				v[k] = vs
			}
			v.Set("offset", strconv.Itoa(offset))
			v.Set("limit", strconv.Itoa(limit))
			return base + "?" + v.Encode()
		}
		p := page{First: link(0), Current: link(q.Offset), Items: make([]jobRecord, 0, min(len(jobs), limit))}
		if len(jobs) > limit {
			jobs = jobs[:limit]
			n := link(q.Offset + limit)
			p.Next = &n
		}
		for _, j := range jobs {
			p.Items = append(p.Items, newJobRecord(j))
		}
		s.writeJSON(ctx, fasthttp.StatusOK, p)
	}
}
