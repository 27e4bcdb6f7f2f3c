package bolt_test

import (
	"testing"
	"time"

	"github.com/earshot-dev/earshot/store/bolt"

	"github.com/earshot-dev/earshot/store"
	"github.com/earshot-dev/earshot/store/storetest"
)

// t0 is an arbitrary creation time with nanoseconds and a non-UTC zone.
var t0 = time.Date(2026, 3, 4, 5, 6, 7, 123456789, time.FixedZone("X", 3600))

func newJob(id, account string, kind store.Kind, status store.Status, created time.Time) *store.Job {
	return &store.Job{ID: id, Account: account, Kind: kind, Status: status, RequestID: "req-" + id, CreatedAt: created}
}

func mustCreate(t testing.TB, db *bolt.DB, jobs ...*store.Job) {
	t.Helper()
	for _, j := range jobs {
		if err := db.CreateJob(j); err != nil {
			t.Fatalf("CreateJob(%s): %v", j.ID, err)
		}
	}
}

func setStatus(s store.Status) func(*store.Job) ([]*store.Delivery, error) {
	return func(j *store.Job) ([]*store.Delivery, error) {
		j.Status = s
		return nil, nil
	}
}

func ids(jobs []*store.Job) []string {
	out := make([]string, 0, len(jobs))
	for _, j := range jobs {
		out = append(out, j.ID)
	}
	return out
}

// runConformanceCase runs the named store/storetest conformance case on a
// fresh bbolt store and returns the store, for bbolt-only checks after it.
func runConformanceCase(t *testing.T, name string) *bolt.DB {
	t.Helper()
	db := storetest.Open(t)
	for _, c := range storetest.Cases() {
		if c.Name == name {
			c.Run(t, db)
			return db
		}
	}
	t.Fatalf("no conformance case %q", name)
	return nil
}
