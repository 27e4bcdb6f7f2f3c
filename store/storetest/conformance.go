package storetest

import (
	"io"
	"strings"
	"testing"
	"time"

	"github.com/earshot-dev/earshot/store"
)

// Opener opens an empty store for one test; it registers the cleanup that
// checks (store.Store.Check) and closes it, as Open does.
type Opener func(t testing.TB) store.Store

// Case is one conformance case: a function of a fresh, empty store.
type Case struct {
	Name string
	Run  func(t *testing.T, s store.Store)
}

// Cases lists the conformance cases: every behaviour of store.Store the
// daemon relies on, stated once and run against each backend.
func Cases() []Case {
	var cs []Case
	cs = append(cs, keyCases()...)
	cs = append(cs, jobCases()...)
	cs = append(cs, metadataCases()...)
	cs = append(cs, listCases()...)
	cs = append(cs, queueCases()...)
	cs = append(cs, batchPassCases()...)
	cs = append(cs, outboxCases()...)
	cs = append(cs, uploadCases()...)
	cs = append(cs, blobCases()...)
	cs = append(cs, retentionCases()...)
	cs = append(cs, auditCases()...)
	return cs
}

// Run runs every case of Cases, each in parallel on its own store from
// open, so one backend's run costs about its slowest case.
func Run(t *testing.T, open Opener) {
	t.Helper()
	for _, c := range Cases() {
		t.Run(c.Name, func(t *testing.T) {
			t.Parallel()
			c.Run(t, open(t))
		})
	}
}

// t0 is an arbitrary creation time with nanoseconds and a non-UTC zone.
var t0 = time.Date(2026, 3, 4, 5, 6, 7, 123456789, time.FixedZone("X", 3600))

func newJob(id, account string, kind store.Kind, status store.Status, created time.Time) *store.Job {
	return &store.Job{ID: id, Account: account, Kind: kind, Status: status, RequestID: "req-" + id, CreatedAt: created}
}

func mustCreate(t testing.TB, s store.Store, jobs ...*store.Job) {
	t.Helper()
	for _, j := range jobs {
		if err := s.CreateJob(j); err != nil {
			t.Fatalf("CreateJob(%s): %v", j.ID, err)
		}
	}
}

func setStatus(st store.Status) func(*store.Job) ([]*store.Delivery, error) {
	return func(j *store.Job) ([]*store.Delivery, error) {
		j.Status = st
		return nil, nil
	}
}

func ids(jobs []*store.Job) []string {
	var out []string
	for _, j := range jobs {
		out = append(out, j.ID)
	}
	return out
}

func deliveryIDs(ds []*store.Delivery) []string {
	out := []string{}
	for _, d := range ds {
		out = append(out, d.ID)
	}
	return out
}

func writeBlob(t testing.TB, s store.Store, name, data string) {
	t.Helper()
	if _, err := s.WriteBlob(name, strings.NewReader(data), 0); err != nil {
		t.Fatalf("WriteBlob(%s): %v", name, err)
	}
}

// readBlob returns the whole blob, checking that Stat's size agrees.
func readBlob(t testing.TB, s store.Store, name string) string {
	t.Helper()
	r, err := s.OpenBlob(name)
	if err != nil {
		t.Fatalf("OpenBlob(%s): %v", name, err)
	}
	defer r.Close()
	fi, err := r.Stat()
	if err != nil {
		t.Fatalf("Stat(%s): %v", name, err)
	}
	b, err := io.ReadAll(r)
	if err != nil {
		t.Fatalf("read blob %s: %v", name, err)
	}
	if fi.Size() != int64(len(b)) {
		t.Errorf("blob %s: Stat says %d bytes, read %d", name, fi.Size(), len(b))
	}
	return string(b)
}

// blobExists reports whether OpenBlob finds name.
func blobExists(t testing.TB, s store.Store, name string) bool {
	t.Helper()
	r, err := s.OpenBlob(name)
	if err != nil {
		return false
	}
	r.Close()
	return true
}
