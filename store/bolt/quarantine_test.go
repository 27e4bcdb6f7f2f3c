package bolt

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/earshot-dev/earshot/store"

	"go.etcd.io/bbolt"
)

// overwriteHead replaces the stored head of job id with head (Params and
// Result empty), as an older version or a bug would have left it.
func overwriteHead(t *testing.T, db *DB, id string, head []byte) {
	t.Helper()
	rec := []byte{jobFormat}
	for _, part := range [][]byte{head, nil, nil} {
		rec = binary.AppendUvarint(rec, uint64(len(part)))
		rec = append(rec, part...)
	}
	if err := db.bolt.Update(func(tx *bbolt.Tx) error { return tx.Bucket(bucketJobs).Put([]byte(id), rec) }); err != nil {
		t.Fatal(err)
	}
}

// headWith is j's head with field's value replaced by raw JSON.
func headWith(t *testing.T, j *store.Job, field, raw string) []byte {
	t.Helper()
	h, err := json.Marshal(j)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(h, &m); err != nil {
		t.Fatal(err)
	}
	m[field] = json.RawMessage(raw)
	out, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestQuarantineUnreadableRecord: a queued job whose record has a field
// that does not decode (here custom_metadata holding an array, as a
// float64-only decoder met 1e309) does not stop the box: reads show it
// ended error naming the field, the claim passes it by to the next job and
// writes it back ended, Recover starts, and the store stays consistent.
func TestQuarantineUnreadableRecord(t *testing.T) {
	db := openInternal(t, t.TempDir(), migrations())
	defer db.Close()
	t0 := time.Date(2026, 11, 29, 5, 0, 0, 0, time.UTC)
	bad := &store.Job{ID: "bad", Account: "mallory", Kind: store.KindPreRecorded, Status: store.StatusQueued, CreatedAt: t0}
	good := &store.Job{ID: "good", Account: "bob", Kind: store.KindPreRecorded, Status: store.StatusQueued, CreatedAt: t0.Add(time.Second)}
	for _, j := range []*store.Job{bad, good} {
		if err := db.CreateJob(j); err != nil {
			t.Fatal(err)
		}
	}
	overwriteHead(t, db, "bad", headWith(t, bad, "custom_metadata", `[1e309]`))

	got, err := db.Job("bad")
	if err != nil {
		t.Fatalf("Job(bad): %v", err)
	}
	if got.Status != store.StatusError || got.ErrorCode != 500 || !slices.Equal(got.PostSessionMetadata["unreadable_fields"].([]string), []string{"custom_metadata"}) {
		t.Fatalf("Job(bad) = status %s code %d psm %v; want error 500 naming custom_metadata", got.Status, got.ErrorCode, got.PostSessionMetadata)
	}
	if list, err := db.ListJobs(store.ListQuery{Account: "mallory", Kind: store.KindPreRecorded}); err != nil || len(list) != 1 {
		t.Fatalf("ListJobs = %v, %v", list, err)
	}
	claimed, err := db.ClaimNext(store.KindPreRecorded)
	if err != nil || claimed.ID != "good" {
		t.Fatalf("ClaimNext = %v, %v; want good (bad quarantined on the way)", claimed, err)
	}
	if _, err := db.ClaimNext(store.KindPreRecorded); !errors.Is(err, store.ErrEmpty) {
		t.Fatalf("second ClaimNext = %v; want ErrEmpty", err)
	}
	if err := db.Check(); err != nil {
		t.Fatalf("Check after the claim: %v", err)
	}
	if err := db.DeleteJob("bad"); err != nil {
		t.Fatalf("DeleteJob(bad): %v", err)
	}
}

// TestRecoverQuarantines: Recover (the start) ends unfinished jobs whose
// records have unreadable fields and reports them and the records that
// cannot be read at all, instead of failing; the rest recovers as usual.
func TestRecoverQuarantines(t *testing.T) {
	db := openInternal(t, t.TempDir(), migrations())
	defer db.Close()
	t0 := time.Date(2026, 11, 29, 5, 0, 0, 0, time.UTC)
	jobs := []*store.Job{
		{ID: "proc", Account: "a", Kind: store.KindPreRecorded, Status: store.StatusProcessing, CreatedAt: t0},
		{ID: "live", Account: "a", Kind: store.KindLive, Status: store.StatusProcessing, CreatedAt: t0.Add(time.Second)},
		{ID: "gone", Account: "a", Kind: store.KindPreRecorded, Status: store.StatusQueued, CreatedAt: t0.Add(2 * time.Second)},
		{ID: "fine", Account: "b", Kind: store.KindPreRecorded, Status: store.StatusProcessing, CreatedAt: t0.Add(3 * time.Second)},
	}
	for _, j := range jobs {
		if err := db.CreateJob(j); err != nil {
			t.Fatal(err)
		}
	}
	overwriteHead(t, db, "proc", headWith(t, jobs[0], "attempts", `"x"`))
	overwriteHead(t, db, "live", headWith(t, jobs[1], "post_session_metadata", `1e309`))
	overwriteHead(t, db, "gone", bytes.Repeat([]byte("{"), 3))

	rep, err := db.Recover(store.RecoverOptions{})
	if err != nil {
		t.Fatalf("Recover: %v", err)
	}
	if !slices.Equal(rep.Quarantined, []string{"proc", "live"}) || !slices.Equal(rep.Corrupt, []string{"gone"}) ||
		!slices.Equal(rep.Requeued, []string{"fine"}) || len(rep.Live) != 0 {
		t.Fatalf("Recover = %+v", rep)
	}
	for _, id := range []string{"proc", "live"} {
		j, err := db.Job(id)
		if err != nil || j.Status != store.StatusError || j.WasQuarantined() {
			t.Fatalf("Job(%s) after Recover = %+v, %v; want written back ended error", id, j, err)
		}
	}
	if j, err := db.ClaimNext(store.KindPreRecorded); err != nil || j.ID != "fine" {
		t.Fatalf("ClaimNext = %v, %v; want fine", j, err)
	}
}
