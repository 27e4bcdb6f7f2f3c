package store_test

import (
	"errors"
	"testing"

	"github.com/earshot-dev/earshot/store"
	"github.com/earshot-dev/earshot/store/storetest"
)

// TestBatchPassQueue: a live job's batch pass is queued beside, not among,
// the pre-recorded jobs; it is claimed once, survives a restart (Recover
// puts a running one back), leaves the job's status alone, and leaves the
// queue with the pass or the job.
func TestBatchPassQueue(t *testing.T) {
	db := storetest.Open(t)
	mustCreate(t, db,
		newJob("live1", "a", store.KindLive, store.StatusDone, t0),
		newJob("live2", "a", store.KindLive, store.StatusDone, t0.Add(1)),
	)
	for _, id := range []string{"live1", "live2"} {
		if _, err := db.UpdateJob(id, func(j *store.Job) ([]*store.Delivery, error) {
			j.BatchPass = store.BatchPassQueued
			return nil, nil
		}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := db.ClaimNext(store.KindPreRecorded); !errors.Is(err, store.ErrEmpty) {
		t.Errorf("ClaimNext(pre-recorded) with only batch passes queued = %v, want ErrEmpty", err)
	}
	if _, err := db.ClaimNext(store.KindLive); !errors.Is(err, store.ErrEmpty) {
		t.Errorf("ClaimNext(live) = %v, want ErrEmpty", err)
	}
	if n, err := db.PendingBatchPasses(); err != nil || n != 2 {
		t.Errorf("PendingBatchPasses = %d, %v; want 2", n, err)
	}
	j, err := db.ClaimBatchPass()
	if err != nil || j.ID != "live1" || j.BatchPass != store.BatchPassRunning || j.Status != store.StatusDone || j.Attempts != 1 {
		t.Fatalf("ClaimBatchPass = %+v, %v; want live1 running, still done, attempt 1", j, err)
	}
	if j, err := db.ClaimBatchPass(); err != nil || j.ID != "live2" {
		t.Fatalf("second ClaimBatchPass = %+v, %v; want live2", j, err)
	}
	if _, err := db.ClaimBatchPass(); !errors.Is(err, store.ErrEmpty) {
		t.Fatalf("third ClaimBatchPass = %v, want ErrEmpty", err)
	}
	rep, err := db.Recover(store.RecoverOptions{})
	if err != nil || len(rep.BatchPasses) != 2 || len(rep.Live) != 0 {
		t.Fatalf("Recover = %+v, %v; want both batch passes requeued and no live session to finalise", rep, err)
	}
	if err := db.Check(); err != nil {
		t.Fatal(err)
	}
	if j, err := db.ClaimBatchPass(); err != nil || j.ID != "live1" || j.Attempts != 2 {
		t.Fatalf("ClaimBatchPass after Recover = %+v, %v; want live1, attempt 2", j, err)
	}
	// Finishing the pass takes the job out of the queue; deleting one
	// with a pass queued does too.
	if _, err := db.UpdateJob("live1", func(j *store.Job) ([]*store.Delivery, error) {
		j.BatchPass = ""
		return nil, nil
	}); err != nil {
		t.Fatal(err)
	}
	if err := db.DeleteJob("live2"); err != nil {
		t.Fatal(err)
	}
	if _, err := db.ClaimBatchPass(); !errors.Is(err, store.ErrEmpty) {
		t.Fatalf("ClaimBatchPass after the passes ended = %v, want ErrEmpty", err)
	}
	if n, err := db.PendingBatchPasses(); err != nil || n != 0 {
		t.Errorf("PendingBatchPasses after the passes ended = %d, %v; want 0", n, err)
	}
	if err := db.Check(); err != nil {
		t.Fatal(err)
	}
	// Only live jobs take a batch pass.
	mustCreate(t, db, newJob("pre", "a", store.KindPreRecorded, store.StatusDone, t0))
	if _, err := db.UpdateJob("pre", func(j *store.Job) ([]*store.Delivery, error) {
		j.BatchPass = store.BatchPassQueued
		return nil, nil
	}); !errors.Is(err, store.ErrInvalid) {
		t.Fatalf("batch pass on a pre-recorded job = %v, want ErrInvalid", err)
	}
}
