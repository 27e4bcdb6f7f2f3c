package storetest

import (
	"errors"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/earshot-dev/earshot/store"
)

func listCases() []Case {
	return []Case{
		{"ListJobs", testListJobs},
		{"EachJobResumes", func(t *testing.T, s store.Store) {
			for i, id := range []string{"e", "d", "c", "b", "a"} {
				mustCreate(t, s, newJob(id, "acme", store.KindPreRecorded, store.StatusDone, t0.Add(time.Duration(i/2)*time.Second)))
			}
			q := store.ListQuery{Account: "acme", Kind: store.KindPreRecorded}
			var got []string
			for range 10 {
				var batch []*store.Job
				if err := s.EachJob(q, func(j *store.Job) bool { batch = append(batch, j); return len(batch) < 2 }); err != nil {
					t.Fatal(err)
				}
				if len(batch) == 0 {
					break
				}
				got = append(got, ids(batch)...)
				last := batch[len(batch)-1]
				q.Before, q.BeforeID = last.CreatedAt, last.ID
			}
			all, _ := s.ListJobs(store.ListQuery{Account: "acme", Kind: store.KindPreRecorded})
			if len(all) != 5 || !slices.Equal(got, ids(all)) {
				t.Errorf("in batches of 2: %v, want %v", got, ids(all))
			}
		}},
		{"CountJobs", func(t *testing.T, s store.Store) {
			mustCreate(t, s,
				newJob("1", "a", store.KindPreRecorded, store.StatusQueued, t0),
				newJob("2", "b", store.KindPreRecorded, store.StatusQueued, t0),
				newJob("3", "a", store.KindPreRecorded, store.StatusDone, t0),
				newJob("4", "a", store.KindLive, store.StatusProcessing, t0),
			)
			for _, tc := range []struct {
				kind   store.Kind
				status store.Status
				want   int
			}{
				{store.KindPreRecorded, store.StatusQueued, 2}, {store.KindPreRecorded, store.StatusDone, 1},
				{store.KindPreRecorded, store.StatusError, 0}, {store.KindPreRecorded, "", 3},
				{store.KindLive, store.StatusProcessing, 1}, {store.KindLive, store.StatusQueued, 0},
			} {
				if n, err := s.CountJobs(tc.kind, tc.status); err != nil || n != tc.want {
					t.Errorf("CountJobs(%s, %s) = %d, %v; want %d", tc.kind, tc.status, n, err, tc.want)
				}
			}
		}},
	}
}

func testListJobs(t *testing.T, s store.Store) {
	at := func(sec int) time.Time { return t0.Add(time.Duration(sec) * time.Second) }
	jobs := []*store.Job{
		newJob("a1", "acme", store.KindPreRecorded, store.StatusDone, at(1)),
		newJob("a2", "acme", store.KindPreRecorded, store.StatusQueued, at(2)),
		newJob("a3b", "acme", store.KindPreRecorded, store.StatusError, at(3)),
		newJob("a3a", "acme", store.KindPreRecorded, store.StatusDone, at(3)),
		newJob("a4", "acme", store.KindPreRecorded, store.StatusProcessing, at(4)),
		newJob("a3B", "acme", store.KindPreRecorded, store.StatusDone, at(3)), // byte order: "B" < "a" < "b"
		newJob("l1", "acme", store.KindLive, store.StatusDone, at(2)),
		newJob("o1", "other", store.KindPreRecorded, store.StatusDone, at(2)),
		newJob("acm", "acm", store.KindPreRecorded, store.StatusDone, at(2)),
	}
	jobs[0].CustomMetadata = map[string]any{"team": "blue", "n": 5.0}
	jobs[1].CustomMetadata = map[string]any{"team": "red", "n": 5.0}
	jobs[2].CustomMetadata = map[string]any{"team": "blue", "vip": true}
	jobs[3].CustomMetadata = map[string]any{"team": "blue", "n": "5"}
	mustCreate(t, s, jobs...)

	pre := store.ListQuery{Account: "acme", Kind: store.KindPreRecorded}
	with := func(f func(q *store.ListQuery)) store.ListQuery { q := pre; f(&q); return q }
	for _, tc := range []struct {
		name string
		q    store.ListQuery
		want []string
	}{
		{"all newest first", pre, []string{"a4", "a3b", "a3a", "a3B", "a2", "a1"}},
		{"live", with(func(q *store.ListQuery) { q.Kind = store.KindLive }), []string{"l1"}},
		{"other account", with(func(q *store.ListQuery) { q.Account = "other" }), []string{"o1"}},
		{"account prefix", with(func(q *store.ListQuery) { q.Account = "acm" }), []string{"acm"}},
		{"unknown account", with(func(q *store.ListQuery) { q.Account = "nobody" }), nil},
		{"status", with(func(q *store.ListQuery) { q.Statuses = []store.Status{store.StatusDone} }), []string{"a3a", "a3B", "a1"}},
		{"statuses", with(func(q *store.ListQuery) {
			q.Statuses = []store.Status{store.StatusQueued, store.StatusProcessing}
		}), []string{"a4", "a2"}},
		{"after is strict", with(func(q *store.ListQuery) { q.After = at(2) }), []string{"a4", "a3b", "a3a", "a3B"}},
		{"before is strict", with(func(q *store.ListQuery) { q.Before = at(3) }), []string{"a2", "a1"}},
		{"range", with(func(q *store.ListQuery) { q.After, q.Before = at(1), at(4) }), []string{"a3b", "a3a", "a3B", "a2"}},
		{"empty range", with(func(q *store.ListQuery) { q.After, q.Before = at(3), at(3) }), nil},
		{"before everything", with(func(q *store.ListQuery) { q.Before = at(0) }), nil},
		{"after everything", with(func(q *store.ListQuery) { q.After = at(9) }), nil},
		{"nanosecond bound", with(func(q *store.ListQuery) { q.After = at(3).Add(-time.Nanosecond) }), []string{"a4", "a3b", "a3a", "a3B"}},
		{"offset", with(func(q *store.ListQuery) { q.Offset = 3 }), []string{"a3B", "a2", "a1"}},
		{"limit", with(func(q *store.ListQuery) { q.Limit = 2 }), []string{"a4", "a3b"}},
		{"offset and limit", with(func(q *store.ListQuery) { q.Offset, q.Limit = 1, 2 }), []string{"a3b", "a3a"}},
		{"offset past end", with(func(q *store.ListQuery) { q.Offset = 10 }), nil},
		{"resume after a job", with(func(q *store.ListQuery) { q.Before, q.BeforeID = at(3), "a3b" }), []string{"a3a", "a3B", "a2", "a1"}},
		{"resume after the last of a time", with(func(q *store.ListQuery) { q.Before, q.BeforeID = at(3), "a3B" }), []string{"a2", "a1"}},
		{"metadata string", with(func(q *store.ListQuery) { q.Metadata = map[string]string{"team": "blue"} }), []string{"a3b", "a3a", "a1"}},
		{"metadata number", with(func(q *store.ListQuery) { q.Metadata = map[string]string{"n": "5"} }), []string{"a3a", "a2", "a1"}},
		{"metadata number as float", with(func(q *store.ListQuery) { q.Metadata = map[string]string{"n": "5.0"} }), []string{"a2", "a1"}},
		{"metadata bool", with(func(q *store.ListQuery) { q.Metadata = map[string]string{"vip": "true"} }), []string{"a3b"}},
		{"metadata two keys", with(func(q *store.ListQuery) {
			q.Metadata = map[string]string{"team": "blue", "n": "5"}
		}), []string{"a3a", "a1"}},
		{"metadata with status, offset and limit", with(func(q *store.ListQuery) {
			q.Metadata = map[string]string{"team": "blue"}
			q.Statuses = []store.Status{store.StatusDone, store.StatusError}
			q.Offset, q.Limit = 1, 1
		}), []string{"a3a"}},
	} {
		got, err := s.ListJobs(tc.q)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if !slices.Equal(ids(got), tc.want) {
			t.Errorf("%s: ListJobs = %v, want %v", tc.name, ids(got), tc.want)
		}
	}
	for _, q := range []store.ListQuery{
		{Kind: store.KindLive}, {Account: "acme"},
		{Account: "acme", Kind: store.KindLive, Offset: -1},
		{Account: "acme", Kind: store.KindLive, Limit: -1},
		{Account: "acme", Kind: store.KindLive, BeforeID: "x"},
	} {
		if _, err := s.ListJobs(q); !errors.Is(err, store.ErrInvalid) {
			t.Errorf("ListJobs(%+v) = %v, want ErrInvalid", q, err)
		}
	}
	// The listing follows status changes.
	if _, err := s.UpdateJob("a2", setStatus(store.StatusDone)); err != nil {
		t.Fatal(err)
	}
	q := with(func(q *store.ListQuery) { q.Statuses = []store.Status{store.StatusDone} })
	if got, _ := s.ListJobs(q); !slices.Equal(ids(got), []string{"a3a", "a3B", "a2", "a1"}) {
		t.Errorf("after a2 is done: %v", ids(got))
	}
}

func queueCases() []Case {
	return []Case{
		{"ClaimNextOrder", func(t *testing.T, s store.Store) {
			at := func(sec int) time.Time { return t0.Add(time.Duration(sec) * time.Second) }
			mustCreate(t, s,
				newJob("c", "a", store.KindPreRecorded, store.StatusQueued, at(3)),
				newJob("a", "b", store.KindPreRecorded, store.StatusQueued, at(1)),
				newJob("live", "a", store.KindLive, store.StatusQueued, at(0)),
				newJob("done", "a", store.KindPreRecorded, store.StatusDone, at(0)),
				newJob("b2", "a", store.KindPreRecorded, store.StatusQueued, at(2)),
				newJob("b1", "a", store.KindPreRecorded, store.StatusQueued, at(2)),
			)
			var got []string
			for {
				j, err := s.ClaimNext(store.KindPreRecorded)
				if errors.Is(err, store.ErrEmpty) {
					break
				}
				if err != nil {
					t.Fatal(err)
				}
				stored, _ := s.Job(j.ID)
				if j.Status != store.StatusProcessing || j.Attempts != 1 || stored.Status != store.StatusProcessing || stored.Attempts != 1 {
					t.Errorf("claimed %s: %+v, stored %+v", j.ID, j, stored)
				}
				got = append(got, j.ID)
			}
			if want := []string{"a", "b1", "b2", "c"}; !slices.Equal(got, want) {
				t.Errorf("claim order %v, want %v", got, want)
			}
			if _, err := s.ClaimNext(store.KindLive); !errors.Is(err, store.ErrEmpty) {
				t.Errorf("ClaimNext(live) = %v, want ErrEmpty", err)
			}
			if _, err := s.ClaimNext("nope"); !errors.Is(err, store.ErrInvalid) {
				t.Errorf("ClaimNext(bad kind) = %v, want ErrInvalid", err)
			}
			if _, err := s.UpdateJob("b1", setStatus(store.StatusQueued)); err != nil {
				t.Fatal(err)
			}
			if j, err := s.ClaimNext(store.KindPreRecorded); err != nil || j.ID != "b1" || j.Attempts != 2 {
				t.Errorf("re-claim = %+v, %v; want b1 with 2 attempts", j, err)
			}
		}},
		{"ClaimNextConcurrent", func(t *testing.T, s store.Store) {
			const n = 200
			for i := range n {
				mustCreate(t, s, newJob(time.Duration(i).String(), "a", store.KindPreRecorded, store.StatusQueued, t0.Add(time.Duration(i))))
			}
			var mu sync.Mutex
			seen := map[string]int{}
			var wg sync.WaitGroup
			for range 4 {
				wg.Go(func() {
					for {
						j, err := s.ClaimNext(store.KindPreRecorded)
						if err != nil {
							if !errors.Is(err, store.ErrEmpty) {
								t.Error(err)
							}
							return
						}
						mu.Lock()
						seen[j.ID]++
						mu.Unlock()
					}
				})
			}
			wg.Wait()
			for id, c := range seen {
				if c != 1 {
					t.Errorf("%s claimed %d times", id, c)
				}
			}
			if len(seen) != n {
				t.Errorf("claimed %d jobs, want %d", len(seen), n)
			}
		}},
		{"ClaimNextAfter", func(t *testing.T, s store.Store) {
			at := func(sec int) time.Time { return t0.Add(time.Duration(sec) * time.Second) }
			mustCreate(t, s,
				newJob("h1", "hog", store.KindPreRecorded, store.StatusQueued, at(1)),
				newJob("h2", "hog", store.KindPreRecorded, store.StatusQueued, at(2)),
				newJob("h3", "hog", store.KindPreRecorded, store.StatusQueued, at(3)),
				newJob("o1", "other", store.KindPreRecorded, store.StatusQueued, at(4)),
				newJob("a1", "acme", store.KindPreRecorded, store.StatusQueued, at(5)),
				newJob("B1", "Bee", store.KindPreRecorded, store.StatusQueued, at(6)), // "Bee" < "acme" byte-wise
			)
			var got []string
			last := "hog"
			for {
				j, err := s.ClaimNextAfter(store.KindPreRecorded, last)
				if errors.Is(err, store.ErrEmpty) {
					break
				}
				if err != nil {
					t.Fatal(err)
				}
				got = append(got, j.ID)
				last = j.Account
			}
			if want := []string{"o1", "B1", "a1", "h1", "h2", "h3"}; !slices.Equal(got, want) {
				t.Errorf("claim order %v, want %v", got, want)
			}
		}},
		{"AwaitingAudio", func(t *testing.T, s store.Store) {
			j := newJob("f", "a", store.KindPreRecorded, store.StatusQueued, t0)
			j.AwaitingAudio = true
			mustCreate(t, s, j)
			if _, err := s.ClaimNext(store.KindPreRecorded); !errors.Is(err, store.ErrEmpty) {
				t.Fatalf("claim of a job awaiting audio: %v, want ErrEmpty", err)
			}
			if got, err := s.AwaitingAudio(); err != nil || len(got) != 1 || got[0].ID != "f" {
				t.Fatalf("AwaitingAudio = %v, %v", got, err)
			}
			if err := s.Check(); err != nil {
				t.Fatalf("Check with a job awaiting audio: %v", err)
			}
			if _, err := s.UpdateJob("f", func(j *store.Job) ([]*store.Delivery, error) {
				j.AwaitingAudio, j.Blob = false, "job-f"
				return nil, nil
			}); err != nil {
				t.Fatal(err)
			}
			if got, err := s.AwaitingAudio(); err != nil || len(got) != 0 {
				t.Fatalf("AwaitingAudio after the fetch = %v, %v", got, err)
			}
			if err := s.Check(); err != nil {
				t.Fatalf("Check after the fetch: %v", err)
			}
			if c, err := s.ClaimNext(store.KindPreRecorded); err != nil || c.ID != "f" {
				t.Fatalf("claim after the fetch = %v, %v", c, err)
			}
		}},
		{"Recover", func(t *testing.T, s store.Store) {
			at := func(sec int) time.Time { return t0.Add(time.Duration(sec) * time.Second) }
			mustCreate(t, s,
				newJob("p1", "a", store.KindPreRecorded, store.StatusQueued, at(1)),
				newJob("p2", "a", store.KindPreRecorded, store.StatusQueued, at(2)),
				newJob("p3", "a", store.KindPreRecorded, store.StatusQueued, at(3)),
				newJob("l2", "a", store.KindLive, store.StatusProcessing, at(2)),
				newJob("l1", "a", store.KindLive, store.StatusQueued, at(1)),
				newJob("l0", "a", store.KindLive, store.StatusDone, at(0)),
			)
			for range 2 {
				if _, err := s.ClaimNext(store.KindPreRecorded); err != nil {
					t.Fatal(err)
				}
			}
			rep, err := s.Recover(store.RecoverOptions{Crashed: true})
			if err != nil || !slices.Equal(rep.Suspects, []string{"p1", "p2"}) || len(rep.Requeued) != 0 ||
				!slices.Equal(rep.Live, []string{"l1", "l2"}) {
				t.Fatalf("Recover(crashed) = %+v, %v", rep, err)
			}
			// After a crash of the process itself the suspects stay
			// processing and queued jobs stay queued.
			for id, want := range map[string]store.Status{"p1": store.StatusProcessing, "p2": store.StatusProcessing, "p3": store.StatusQueued} {
				if j, err := s.Job(id); err != nil || j.Status != want {
					t.Errorf("after Recover(crashed) %s = %+v, %v; want %s", id, j, err, want)
				}
			}
			rep, err = s.Recover(store.RecoverOptions{})
			if err != nil || !slices.Equal(rep.Requeued, []string{"p1", "p2"}) || len(rep.Suspects) != 0 {
				t.Fatalf("Recover = %+v, %v", rep, err)
			}
			var order []string
			for {
				j, err := s.ClaimNext(store.KindPreRecorded)
				if err != nil {
					break
				}
				order = append(order, j.ID)
				if j.ID != "p3" && j.Attempts != 2 {
					t.Errorf("requeued %s has %d attempts, want 2", j.ID, j.Attempts)
				}
			}
			if !slices.Equal(order, []string{"p1", "p2", "p3"}) {
				t.Errorf("claims after Recover: %v", order)
			}
		}},
	}
}
