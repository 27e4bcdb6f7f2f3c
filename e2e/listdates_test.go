package e2e

import (
	"net/url"
	"slices"
	"testing"
	"time"
)

// TestListDateFilters: date, before_date and after_date on
// GET /v2/pre-recorded return exactly the jobs created in that day or
// range, whatever the spelling (a date, a date-time in UTC or with an
// offset); a job shown at a bound is not past it, the bounds combine, and
// the page links carry them. The bounds are the created_at the records
// show (to the millisecond), as a client would use them.
func TestListDateFilters(t *testing.T) {
	d := startDaemon(t, "", "")
	key := createKey(t, d.DataDir, "acme")
	path, _ := clip(t, "pocketsphinx-goforward.wav")
	_, up, _ := d.upload(key, path)
	ids := make([]string, 3)
	created := make([]time.Time, 3)
	shown := make([]string, 3)
	for i := range ids {
		var j struct{ ID string }
		if status, body := d.postJSON("/v2/pre-recorded", key, map[string]any{"audio_url": up.AudioURL}, &j); status != 201 {
			t.Fatalf("create job %d: %d %s", i, status, body)
		}
		var rec struct {
			CreatedAt string `json:"created_at"`
		}
		if status, body := d.do("GET", "/v2/pre-recorded/"+j.ID, key, nil, "", &rec); status != 200 {
			t.Fatalf("GET job %d: %d %s", i, status, body)
		}
		at, err := time.Parse(time.RFC3339Nano, rec.CreatedAt)
		if err != nil {
			t.Fatalf("job %d created_at %q: %v", i, rec.CreatedAt, err)
		}
		ids[i], created[i], shown[i] = j.ID, at, rec.CreatedAt
		// The next job is created in a later millisecond, so every
		// bound below falls between two jobs as the records show them.
		for deadline := time.Now().Add(time.Second); !time.Now().After(at.Add(time.Millisecond)); {
			if time.Now().After(deadline) {
				t.Fatal("the clock did not move past created_at within a second")
			}
		}
	}
	day := func(tm time.Time) string { return tm.UTC().Format(time.DateOnly) }
	// onDay lists the jobs (newest first) whose created_at falls on date.
	onDay := func(date string) []string {
		var want []string
		for i := len(ids) - 1; i >= 0; i-- {
			if day(created[i]) == date {
				want = append(want, ids[i])
			}
		}
		return want
	}
	first := created[0].UTC()
	plus2 := created[0].In(time.FixedZone("", 2*3600)).Format("2006-01-02T15:04:05.000-07:00")
	cases := []struct {
		name  string
		query url.Values
		want  []string
	}{
		{"after the first", url.Values{"after_date": {shown[0]}}, []string{ids[2], ids[1]}},
		{"after the first, +02:00", url.Values{"after_date": {plus2}}, []string{ids[2], ids[1]}},
		{"before the last", url.Values{"before_date": {shown[2]}}, []string{ids[1], ids[0]}},
		{"between first and last", url.Values{"after_date": {shown[0]}, "before_date": {shown[2]}}, []string{ids[1]}},
		{"after the last", url.Values{"after_date": {shown[2]}}, nil},
		{"before the first", url.Values{"before_date": {shown[0]}}, nil},
		{"the first's day", url.Values{"date": {day(first)}}, onDay(day(first))},
		{"the day before", url.Values{"date": {day(first.AddDate(0, 0, -1))}}, nil},
		{"the day after the last", url.Values{"date": {day(created[2].AddDate(0, 0, 1))}}, nil},
		{"the first's day, before the second", url.Values{"date": {day(first)}, "before_date": {shown[1]}}, []string{ids[0]}},
		{"before the next day (a date)", url.Values{"before_date": {day(created[2].AddDate(0, 0, 1))}}, []string{ids[2], ids[1], ids[0]}},
		{"after the next day (a date)", url.Values{"after_date": {day(created[2].AddDate(0, 0, 1))}}, nil},
	}
	for _, c := range cases {
		var page struct {
			Current string
			Next    *string
			Items   []struct{ ID string }
		}
		status, body := d.do("GET", "/v2/pre-recorded?"+c.query.Encode(), key, nil, "", &page)
		if status != 200 {
			t.Errorf("%s (%s): %d %s", c.name, c.query.Encode(), status, body)
			continue
		}
		var got []string
		for _, it := range page.Items {
			got = append(got, it.ID)
		}
		if !slices.Equal(got, c.want) || page.Next != nil {
			t.Errorf("%s (%s): got %v next %v, want %v", c.name, c.query.Encode(), got, page.Next, c.want)
		}
		if cur, err := url.Parse(page.Current); err != nil || !hasQuery(cur.Query(), c.query) {
			t.Errorf("%s: current link %q lacks the filters %s", c.name, page.Current, c.query.Encode())
		}
	}
	// Paged one at a time, the next links keep the range.
	var got []string
	next := "/v2/pre-recorded?" + url.Values{"after_date": {shown[0]}, "limit": {"1"}}.Encode()
	for range 4 {
		var page struct {
			Next  *string
			Items []struct{ ID string }
		}
		if status, body := d.do("GET", next, key, nil, "", &page); status != 200 || len(page.Items) > 1 {
			t.Fatalf("page %s: %d %s", next, status, body)
		}
		for _, it := range page.Items {
			got = append(got, it.ID)
		}
		if page.Next == nil {
			break
		}
		u, err := url.Parse(*page.Next)
		if err != nil {
			t.Fatalf("next link %q: %v", *page.Next, err)
		}
		next = u.RequestURI()
	}
	if want := []string{ids[2], ids[1]}; !slices.Equal(got, want) {
		t.Errorf("paged after the first: %v, want %v", got, want)
	}
}

// hasQuery reports whether every value of want is in q.
func hasQuery(q, want url.Values) bool {
	for k, vs := range want {
		if !slices.Equal(q[k], vs) {
			return false
		}
	}
	return true
}
