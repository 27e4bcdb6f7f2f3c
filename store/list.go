package store

import (
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"time"
)

var (
	minTime = time.Unix(0, math.MinInt64).UTC()
	maxTime = time.Unix(0, math.MaxInt64).UTC()
)

// ListQuery selects one account's jobs of one kind.
type ListQuery struct {
	Account  string            // required
	Kind     Kind              // required
	Statuses []Status          // any of; empty = all
	After    time.Time         // CreatedAt strictly after; zero = unbounded
	Before   time.Time         // CreatedAt strictly before; zero = unbounded
	Metadata map[string]string // each CustomMetadata[key] must equal value (strings as-is; other JSON values compared by their JSON text, e.g. 5 -> "5", true -> "true")
	Offset   int               // matching jobs to skip
	Limit    int               // 0 = no limit
	// BeforeID, with Before, resumes a listing after the job (Before,
	// BeforeID): jobs created exactly at Before whose id sorts below
	// BeforeID are included too. It lets a caller read a long listing in
	// several short read transactions.
	BeforeID string
}

// metadataMatches reports whether every filter entry equals the job's
// metadata value: strings as they are, other JSON values by their JSON text,
// and numbers also by numeric value (so "5.0" finds 5).
func metadataMatches(md map[string]any, filter map[string]string) bool {
	for k, want := range filter {
		got, ok := md[k]
		if !ok {
			return false
		}
		switch g := got.(type) {
		case string:
			if g != want {
				return false
			}
		case json.Number:
			// Equal text, or equal value when both parse ("5.0" finds 5;
			// 1e309, past float64, only by its text).
			if string(g) == want {
				continue
			}
			f, err := strconv.ParseFloat(want, 64)
			gf, gerr := g.Float64()
			if err != nil || gerr != nil || f != gf {
				return false
			}
		case float64:
			f, err := strconv.ParseFloat(want, 64)
			if err != nil || f != g {
				return false
			}
		default:
			text, err := json.Marshal(got)
			if err != nil || string(text) != want {
				return false
			}
		}
	}
	return true
}

// Check reports whether q is a listing every backend takes: an account and
// a kind, Offset and Limit not negative, BeforeID only with Before. A
// failure wraps ErrInvalid.
func (q ListQuery) Check() error {
	if q.Account == "" || q.Kind == "" || q.Offset < 0 || q.Limit < 0 || (q.BeforeID != "" && q.Before.IsZero()) {
		return fmt.Errorf("list jobs: account %q kind %q offset %d limit %d: %w", q.Account, q.Kind, q.Offset, q.Limit, ErrInvalid)
	}
	return nil
}

// CollectJobs is a backend's ListJobs over its EachJob: every job each
// visits for q, in its order.
func CollectJobs(q ListQuery, each func(ListQuery, func(*Job) bool) error) ([]*Job, error) {
	var out []*Job
	err := each(q, func(j *Job) bool {
		out = append(out, j)
		return true
	})
	return out, err
}
