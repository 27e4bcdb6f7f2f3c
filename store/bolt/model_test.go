package bolt_test

import (
	"cmp"
	"errors"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/earshot-dev/earshot/store/bolt"

	"github.com/earshot-dev/earshot/store"
)

var (
	seedFlag  = flag.Uint64("seed", 0, "seed for TestRandomJobs (0: EARSHOT_STORE_SEED or the clock)")
	stepsFlag = flag.Int("steps", 600, "steps of TestRandomJobs")
)

// modelJob is what the in-memory model knows of a job.
type modelJob struct {
	id       string
	account  string
	kind     store.Kind
	status   store.Status
	created  time.Time
	md       map[string]any
	attempts int
}

func testSeed(t *testing.T) uint64 {
	seed := *seedFlag
	if seed == 0 {
		if s, err := strconv.ParseUint(os.Getenv("EARSHOT_STORE_SEED"), 10, 64); err == nil {
			seed = s
		}
	}
	if seed == 0 {
		seed = uint64(time.Now().UnixNano())
	}
	t.Logf("seed %d (rerun with -seed=%d or EARSHOT_STORE_SEED=%d)", seed, seed, seed)
	return seed
}

// TestRandomJobs applies random creates, status changes, deletes, claims,
// recoveries and reopenings to the store and to an in-memory model, and
// after every step compares a random ListJobs, every counter, and Check.
func TestRandomJobs(t *testing.T) {
	seed := testSeed(t)
	rng := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	dir := t.TempDir()
	db, err := bolt.Open(dir, &bolt.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { db.Close() }()

	accounts := []string{"a", "b", "ab"}
	kinds := []store.Kind{store.KindPreRecorded, store.KindLive}
	statuses := []store.Status{store.StatusQueued, store.StatusProcessing, store.StatusDone, store.StatusError}
	teams := []string{"red", "blue"}
	base := time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC)
	// Few distinct instants so that ties and exact bounds are common.
	instant := func() time.Time {
		return base.Add(time.Duration(rng.IntN(30))*time.Second + time.Duration(rng.IntN(2)))
	}
	model := map[string]*modelJob{}
	pick := func() *modelJob {
		if len(model) == 0 {
			return nil
		}
		keys := slices.Sorted(func(yield func(string) bool) {
			for k := range model {
				if !yield(k) {
					return
				}
			}
		})
		return model[keys[rng.IntN(len(keys))]]
	}
	older := func(a, b *modelJob) int {
		return cmp.Or(a.created.Compare(b.created), cmp.Compare(a.id, b.id))
	}

	for step := range *stepsFlag {
		fail := func(format string, args ...any) {
			t.Helper()
			t.Fatalf("seed %d step %d: %s", seed, step, fmt.Sprintf(format, args...))
		}
		switch op := rng.IntN(100); {
		case op < 35: // create
			m := &modelJob{
				id:      fmt.Sprintf("j%03d", rng.IntN(1000)),
				account: accounts[rng.IntN(len(accounts))],
				kind:    kinds[rng.IntN(2)],
				status:  statuses[rng.IntN(4)],
				created: instant(),
				md:      map[string]any{},
			}
			if rng.IntN(3) > 0 {
				m.md["team"] = teams[rng.IntN(2)]
			}
			if rng.IntN(2) == 0 {
				m.md["n"] = float64(rng.IntN(3))
			}
			j := newJob(m.id, m.account, m.kind, m.status, m.created)
			j.CustomMetadata = m.md
			err := db.CreateJob(j)
			if _, dup := model[m.id]; dup {
				if !errors.Is(err, store.ErrExists) {
					fail("CreateJob(duplicate %s) = %v", m.id, err)
				}
				break
			}
			if err != nil {
				fail("CreateJob: %v", err)
			}
			model[m.id] = m
		case op < 55: // status change
			m := pick()
			if m == nil {
				break
			}
			s := statuses[rng.IntN(4)]
			j, err := db.UpdateJob(m.id, setStatus(s))
			if err != nil || j.Status != s {
				fail("UpdateJob(%s, %s) = %v", m.id, s, err)
			}
			m.status = s
		case op < 65: // delete
			m := pick()
			if m == nil || rng.IntN(5) == 0 {
				id := fmt.Sprintf("missing%d", step)
				if err := db.DeleteJob(id); !errors.Is(err, store.ErrNotFound) {
					fail("DeleteJob(unknown) = %v", err)
				}
				break
			}
			if err := db.DeleteJob(m.id); err != nil {
				fail("DeleteJob(%s): %v", m.id, err)
			}
			delete(model, m.id)
		case op < 80: // claim
			kind := kinds[rng.IntN(2)]
			var want *modelJob
			for _, m := range model {
				if m.kind == store.KindPreRecorded && kind == store.KindPreRecorded && m.status == store.StatusQueued &&
					(want == nil || older(m, want) < 0) {
					want = m
				}
			}
			j, err := db.ClaimNext(kind)
			if want == nil {
				if !errors.Is(err, store.ErrEmpty) {
					fail("ClaimNext(%s) = %v, want ErrEmpty", kind, err)
				}
				break
			}
			want.status = store.StatusProcessing
			want.attempts++
			if err != nil || j.ID != want.id || j.Attempts != want.attempts {
				fail("ClaimNext(%s) = %+v, %v; want %s attempts %d", kind, j, err, want.id, want.attempts)
			}
		case op < 85: // recover
			var requeued, live []*modelJob
			for _, m := range model {
				switch {
				case m.kind == store.KindPreRecorded && m.status == store.StatusProcessing:
					requeued = append(requeued, m)
				case m.kind == store.KindLive && (m.status == store.StatusQueued || m.status == store.StatusProcessing):
					live = append(live, m)
				}
			}
			slices.SortFunc(requeued, older)
			slices.SortFunc(live, older)
			rep, err := db.Recover(store.RecoverOptions{})
			if err != nil {
				fail("Recover: %v", err)
			}
			for _, m := range requeued {
				m.status = store.StatusQueued
			}
			if !slices.Equal(rep.Requeued, modelIDs(requeued)) || !slices.Equal(rep.Live, modelIDs(live)) {
				fail("Recover = %+v, want requeued %v live %v", rep, modelIDs(requeued), modelIDs(live))
			}
		case op < 88: // reopen
			if err := db.Close(); err != nil {
				fail("Close: %v", err)
			}
			if db, err = bolt.Open(dir, &bolt.Options{NoSync: true}); err != nil {
				fail("reopen: %v", err)
			}
		default: // read one
			m := pick()
			if m == nil {
				break
			}
			j, err := db.Job(m.id)
			if err != nil || j.Status != m.status || j.Account != m.account || !j.CreatedAt.Equal(m.created) || j.Attempts != m.attempts {
				fail("Job(%s) = %+v, %v; model %+v", m.id, j, err, m)
			}
		}

		// A random list query against the model.
		q := store.ListQuery{Account: accounts[rng.IntN(len(accounts))], Kind: kinds[rng.IntN(2)]}
		for _, s := range statuses {
			if rng.IntN(4) == 0 {
				q.Statuses = append(q.Statuses, s)
			}
		}
		if rng.IntN(3) == 0 {
			q.After = instant()
		}
		if rng.IntN(3) == 0 {
			q.Before = instant()
		}
		if rng.IntN(4) == 0 {
			q.Metadata = map[string]string{"team": teams[rng.IntN(2)]}
		}
		if rng.IntN(6) == 0 {
			if q.Metadata == nil {
				q.Metadata = map[string]string{}
			}
			q.Metadata["n"] = strconv.Itoa(rng.IntN(3))
		}
		if rng.IntN(3) == 0 {
			q.Offset = rng.IntN(4)
		}
		if rng.IntN(2) == 0 {
			q.Limit = 1 + rng.IntN(5)
		}
		got, err := db.ListJobs(q)
		if err != nil {
			fail("ListJobs(%+v): %v", q, err)
		}
		if want := modelList(model, q); !slices.Equal(ids(got), want) {
			fail("ListJobs(%+v) = %v, want %v", q, ids(got), want)
		}
		for _, k := range kinds {
			for _, s := range statuses {
				want := 0
				for _, m := range model {
					if m.kind == k && m.status == s {
						want++
					}
				}
				if n, err := db.CountJobs(k, s); err != nil || n != want {
					fail("CountJobs(%s, %s) = %d, %v; want %d", k, s, n, err, want)
				}
			}
		}
		if err := db.Check(); err != nil {
			fail("Check: %v", err)
		}
	}
	t.Logf("%d jobs at the end", len(model))
}

func modelIDs(ms []*modelJob) []string {
	out := []string{}
	for _, m := range ms {
		out = append(out, m.id)
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

// modelList is ListJobs written the slow, obvious way.
func modelList(model map[string]*modelJob, q store.ListQuery) []string {
	var match []*modelJob
	for _, m := range model {
		if m.account != q.Account || m.kind != q.Kind {
			continue
		}
		if len(q.Statuses) > 0 && !slices.Contains(q.Statuses, m.status) {
			continue
		}
		if !q.After.IsZero() && !m.created.After(q.After) || !q.Before.IsZero() && !m.created.Before(q.Before) {
			continue
		}
		ok := true
		for k, v := range q.Metadata {
			switch x := m.md[k].(type) {
			case string:
				ok = ok && x == v
			case float64:
				ok = ok && strconv.FormatFloat(x, 'f', -1, 64) == v
			default:
				ok = false
			}
		}
		if ok {
			match = append(match, m)
		}
	}
	slices.SortFunc(match, func(a, b *modelJob) int {
		return cmp.Or(b.created.Compare(a.created), cmp.Compare(b.id, a.id))
	})
	if q.Offset >= len(match) {
		return nil
	}
	match = match[q.Offset:]
	if q.Limit > 0 && len(match) > q.Limit {
		match = match[:q.Limit]
	}
	return modelIDs(match)
}
