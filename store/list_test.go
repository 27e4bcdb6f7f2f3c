package store_test

import (
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/earshot-dev/earshot/store"
	"github.com/earshot-dev/earshot/store/storetest"
)

func TestListJobs(t *testing.T) {
	db := storetest.Open(t)
	at := func(s int) time.Time { return t0.Add(time.Duration(s) * time.Second) }
	jobs := []*store.Job{
		newJob("a1", "acme", store.KindPreRecorded, store.StatusDone, at(1)),
		newJob("a2", "acme", store.KindPreRecorded, store.StatusQueued, at(2)),
		newJob("a3b", "acme", store.KindPreRecorded, store.StatusError, at(3)),
		newJob("a3a", "acme", store.KindPreRecorded, store.StatusDone, at(3)), // same time: ID breaks the tie
		newJob("a4", "acme", store.KindPreRecorded, store.StatusProcessing, at(4)),
		newJob("l1", "acme", store.KindLive, store.StatusDone, at(2)),
		newJob("o1", "other", store.KindPreRecorded, store.StatusDone, at(2)),
		newJob("acm", "acm", store.KindPreRecorded, store.StatusDone, at(2)), // prefix of "acme"
	}
	jobs[0].CustomMetadata = map[string]any{"team": "blue", "n": 5.0}
	jobs[1].CustomMetadata = map[string]any{"team": "red", "n": 5.0}
	jobs[2].CustomMetadata = map[string]any{"team": "blue", "vip": true}
	jobs[3].CustomMetadata = map[string]any{"team": "blue", "n": "5"}
	mustCreate(t, db, jobs...)

	pre := store.ListQuery{Account: "acme", Kind: store.KindPreRecorded}
	with := func(f func(q *store.ListQuery)) store.ListQuery { q := pre; f(&q); return q }
	tests := []struct {
		name string
		q    store.ListQuery
		want []string
	}{
		{"all newest first", pre, []string{"a4", "a3b", "a3a", "a2", "a1"}},
		{"live", with(func(q *store.ListQuery) { q.Kind = store.KindLive }), []string{"l1"}},
		{"other account", with(func(q *store.ListQuery) { q.Account = "other" }), []string{"o1"}},
		{"account prefix", with(func(q *store.ListQuery) { q.Account = "acm" }), []string{"acm"}},
		{"unknown account", with(func(q *store.ListQuery) { q.Account = "nobody" }), nil},
		{"status", with(func(q *store.ListQuery) { q.Statuses = []store.Status{store.StatusDone} }), []string{"a3a", "a1"}},
		{"statuses", with(func(q *store.ListQuery) {
			q.Statuses = []store.Status{store.StatusQueued, store.StatusProcessing}
		}), []string{"a4", "a2"}},
		{"after is strict", with(func(q *store.ListQuery) { q.After = at(2) }), []string{"a4", "a3b", "a3a"}},
		{"before is strict", with(func(q *store.ListQuery) { q.Before = at(3) }), []string{"a2", "a1"}},
		{"range", with(func(q *store.ListQuery) { q.After, q.Before = at(1), at(4) }), []string{"a3b", "a3a", "a2"}},
		{"empty range", with(func(q *store.ListQuery) { q.After, q.Before = at(3), at(3) }), nil},
		{"before everything", with(func(q *store.ListQuery) { q.Before = at(0) }), nil},
		{"after everything", with(func(q *store.ListQuery) { q.After = at(9) }), nil},
		{"nanosecond bound", with(func(q *store.ListQuery) { q.After = at(3).Add(-time.Nanosecond) }), []string{"a4", "a3b", "a3a"}},
		{"offset", with(func(q *store.ListQuery) { q.Offset = 2 }), []string{"a3a", "a2", "a1"}},
		{"limit", with(func(q *store.ListQuery) { q.Limit = 2 }), []string{"a4", "a3b"}},
		{"offset and limit", with(func(q *store.ListQuery) { q.Offset, q.Limit = 1, 2 }), []string{"a3b", "a3a"}},
		{"offset past end", with(func(q *store.ListQuery) { q.Offset = 10 }), nil},
		{"resume after a job", with(func(q *store.ListQuery) { q.Before, q.BeforeID = at(3), "a3b" }), []string{"a3a", "a2", "a1"}},
		{"resume after the last of a time", with(func(q *store.ListQuery) { q.Before, q.BeforeID = at(3), "a3a" }), []string{"a2", "a1"}},
		{"metadata string", with(func(q *store.ListQuery) { q.Metadata = map[string]string{"team": "blue"} }), []string{"a3b", "a3a", "a1"}},
		{"metadata number", with(func(q *store.ListQuery) { q.Metadata = map[string]string{"n": "5"} }), []string{"a3a", "a2", "a1"}},
		{"metadata bool", with(func(q *store.ListQuery) { q.Metadata = map[string]string{"vip": "true"} }), []string{"a3b"}},
		{"metadata two keys", with(func(q *store.ListQuery) {
			q.Metadata = map[string]string{"team": "blue", "n": "5"}
		}), []string{"a3a", "a1"}},
		{"metadata with status, offset and limit", with(func(q *store.ListQuery) {
			q.Metadata = map[string]string{"team": "blue"}
			q.Statuses = []store.Status{store.StatusDone, store.StatusError}
			q.Offset, q.Limit = 1, 1
		}), []string{"a3a"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := db.ListJobs(tc.q)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(ids(got), tc.want) {
				t.Errorf("ListJobs = %v, want %v", ids(got), tc.want)
			}
		})
	}

	for _, q := range []store.ListQuery{
		{Kind: store.KindLive},
		{Account: "acme"},
		{Account: "acme", Kind: store.KindLive, Offset: -1},
		{Account: "acme", Kind: store.KindLive, Limit: -1},
		{Account: "acme", Kind: store.KindLive, BeforeID: "x"},
	} {
		if _, err := db.ListJobs(q); !errors.Is(err, store.ErrInvalid) {
			t.Errorf("ListJobs(%+v) = %v, want ErrInvalid", q, err)
		}
	}
}

// TestEachJobStops checks that EachJob stops when fn says so, and that
// resuming with Before/BeforeID from the last job seen visits the rest.
func TestEachJobStops(t *testing.T) {
	db := storetest.Open(t)
	for i, id := range []string{"e", "d", "c", "b", "a"} {
		mustCreate(t, db, newJob(id, "acme", store.KindPreRecorded, store.StatusDone, t0.Add(time.Duration(i/2)*time.Second)))
	}
	q := store.ListQuery{Account: "acme", Kind: store.KindPreRecorded}
	var got []string
	for range 10 {
		var batch []*store.Job
		if err := db.EachJob(q, func(j *store.Job) bool { batch = append(batch, j); return len(batch) < 2 }); err != nil {
			t.Fatal(err)
		}
		if len(batch) == 0 {
			break
		}
		got = append(got, ids(batch)...)
		last := batch[len(batch)-1]
		q.Before, q.BeforeID = last.CreatedAt, last.ID
	}
	all, _ := db.ListJobs(store.ListQuery{Account: "acme", Kind: store.KindPreRecorded})
	if !slices.Equal(got, ids(all)) {
		t.Errorf("in batches of 2: %v, want %v", got, ids(all))
	}
}

func TestListFollowsStatus(t *testing.T) {
	db := storetest.Open(t)
	mustCreate(t, db, newJob("j", "acme", store.KindPreRecorded, store.StatusQueued, t0))
	q := store.ListQuery{Account: "acme", Kind: store.KindPreRecorded, Statuses: []store.Status{store.StatusDone}}
	if got, _ := db.ListJobs(q); len(got) != 0 {
		t.Fatalf("queued job listed as done")
	}
	if _, err := db.UpdateJob("j", setStatus(store.StatusDone)); err != nil {
		t.Fatal(err)
	}
	if got, _ := db.ListJobs(q); !slices.Equal(ids(got), []string{"j"}) {
		t.Errorf("done job not listed as done: %v", ids(got))
	}
}

func TestCountJobs(t *testing.T) {
	db := storetest.Open(t)
	mustCreate(t, db,
		newJob("1", "a", store.KindPreRecorded, store.StatusQueued, t0),
		newJob("2", "b", store.KindPreRecorded, store.StatusQueued, t0),
		newJob("3", "a", store.KindPreRecorded, store.StatusDone, t0),
		newJob("4", "a", store.KindLive, store.StatusProcessing, t0),
	)
	tests := []struct {
		kind   store.Kind
		status store.Status
		want   int
	}{
		{store.KindPreRecorded, store.StatusQueued, 2},
		{store.KindPreRecorded, store.StatusDone, 1},
		{store.KindPreRecorded, store.StatusError, 0},
		{store.KindPreRecorded, "", 3},
		{store.KindLive, store.StatusProcessing, 1},
		{store.KindLive, store.StatusQueued, 0},
	}
	for _, tc := range tests {
		if n, err := db.CountJobs(tc.kind, tc.status); err != nil || n != tc.want {
			t.Errorf("CountJobs(%s, %s) = %d, %v; want %d", tc.kind, tc.status, n, err, tc.want)
		}
	}
}
