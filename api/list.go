package api

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
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
		// Records show created_at to the millisecond (timeFormat), and the
		// bounds compare what they show: a job shown at after_date is not
		// after it, one shown before before_date is before it.
		if k == "before_date" {
			if ms := t.Truncate(time.Millisecond); ms.Before(t) {
				t = ms.Add(time.Millisecond)
			}
			if q.Before.IsZero() || t.Before(q.Before) {
				q.Before = t
			}
		}
		if k == "after_date" {
			if t = t.Truncate(time.Millisecond).Add(time.Millisecond - time.Nanosecond); t.After(q.After) {
				q.After = t
			}
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

// listChunkBytes is about how many bytes of encoded records one read
// transaction gathers before they are written out: a list answer is
// streamed in chunks of this size, never built whole.
const listChunkBytes = 256 << 10

// listPage streams one list answer. The store is read in short
// transactions of about listChunkBytes of encoded records, each resuming
// after the last job written; the answer stops after limit items, or
// before the item that would take it past maxBytes (never before the
// first item), and its next link then goes on from there.
type listPage struct {
	q        listQuery
	limit    int
	maxBytes int
	link     func(offset int) string

	chunk   bytes.Buffer // encoded items not yet written, comma-separated
	n       int          // items taken
	size    int          // bytes of items taken
	hasNext bool         // a further item matched
	done    bool         // nothing more to read
}

// read gathers the next chunk of items from the store.
func (p *listPage) read(ctx context.Context, svc Jobs) error {
	p.chunk.Reset()
	q := p.q.ListQuery
	var last *store.Job
	full := false
	err := svc.EachJob(ctx, q, func(j *store.Job) bool {
		b, err := json.Marshal(newJobRecord(j))
		if err != nil {
			b = []byte("null") // unreachable: records are plain data
		}
		if p.n == p.limit || (p.n > 0 && p.size+len(b) > p.maxBytes) {
			p.hasNext = true
			return false
		}
		if p.n > 0 {
			p.chunk.WriteByte(',')
		}
		p.chunk.Write(b)
		p.n++
		p.size += len(b)
		last = j
		if p.chunk.Len() >= listChunkBytes {
			full = true
			return false
		}
		return true
	})
	if err != nil {
		return err
	}
	if !full {
		p.done = true
		return nil
	}
	// Resume after the last job: later reads start there, offset spent.
	p.q.Offset, p.q.Before, p.q.BeforeID = 0, last.CreatedAt, last.ID
	return nil
}

func (s *Server) list(kind store.Kind) fasthttp.RequestHandler {
	return func(ctx *fasthttp.RequestCtx) {
		q, err := parseListQuery(ctx.QueryArgs())
		if err != nil {
			s.fail(ctx, err)
			return
		}
		q.Account, q.Kind = account(ctx), kind
		limit, offset := q.Limit, q.Offset
		q.Limit = 0 // the page counts, so it can stop on size too
		base := s.baseURL(ctx) + string(ctx.Path())
		p := &listPage{q: q, limit: limit, maxBytes: s.cfg.MaxListBytes, link: func(offset int) string {
			v := url.Values{}
			for k, vs := range q.links {
				v[k] = vs
			}
			v.Set("offset", strconv.Itoa(offset))
			v.Set("limit", strconv.Itoa(limit))
			return base + "?" + v.Encode()
		}}
		// The first chunk is read here, so a store error is still a status.
		if err := p.read(ctx, s.svc); err != nil {
			s.fail(ctx, err)
			return
		}
		log, rid := s.log, requestID(ctx)
		ctx.SetStatusCode(fasthttp.StatusOK)
		ctx.SetContentType("application/json")
		ctx.SetBodyStreamWriter(func(w *bufio.Writer) {
			// {first, current, items, next}: next comes last, once known.
			head, _ := json.Marshal(struct {
				First   string `json:"first"`
				Current string `json:"current"`
			}{p.link(0), p.link(offset)})
			w.Write(head[:len(head)-1])
			w.WriteString(`,"items":[`)
			for {
				w.Write(p.chunk.Bytes())
				if p.done || p.hasNext {
					break
				}
				if w.Flush() != nil {
					return // the client left
				}
				if err := p.read(context.Background(), s.svc); err != nil {
					// The page ends early, well formed; next goes on
					// from what was written.
					log.Error("list page cut short", "request_id", rid, "error", err)
					p.hasNext = true
					break
				}
			}
			w.WriteString(`],"next":`)
			next := []byte("null")
			if p.hasNext {
				next, _ = json.Marshal(p.link(offset + p.n))
			}
			w.Write(next)
			w.WriteString("}")
		})
	}
}
