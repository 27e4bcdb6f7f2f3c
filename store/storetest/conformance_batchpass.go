package storetest

import (
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/earshot-dev/earshot/store"
)

func batchPassCases() []Case {
	return []Case{
		{"BatchPassQueue", batchPassQueue},
		{"BatchPassClaimConcurrent", batchPassClaimConcurrent},
	}
}

// batchPassQueue: a live job's batch pass is queued beside, not among, the
// pre-recorded jobs; it is claimed once, survives a restart (Recover puts a
// running one back), leaves the job's status alone, and leaves the queue
// with the pass or the job.
func batchPassQueue(t *testing.T, s store.Store) {
	mustCreate(t, s,
		newJob("live1", "a", store.KindLive, store.StatusDone, t0),
		newJob("live2", "a", store.KindLive, store.StatusDone, t0.Add(1)),
	)
	for _, id := range []string{"live1", "live2"} {
		if _, err := s.UpdateJob(id, func(j *store.Job) ([]*store.Delivery, error) {
			j.BatchPass = store.BatchPassQueued
			return nil, nil
		}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := s.ClaimNext(store.KindPreRecorded); !errors.Is(err, store.ErrEmpty) {
		t.Errorf("ClaimNext(pre-recorded) with only batch passes queued = %v, want ErrEmpty", err)
	}
	if _, err := s.ClaimNext(store.KindLive); !errors.Is(err, store.ErrEmpty) {
		t.Errorf("ClaimNext(live) = %v, want ErrEmpty", err)
	}
	if _, err := s.ClaimNextAfter(store.KindLive, ""); !errors.Is(err, store.ErrEmpty) {
		t.Errorf("ClaimNextAfter(live) = %v, want ErrEmpty", err)
	}
	if n, err := s.PendingBatchPasses(); err != nil || n != 2 {
		t.Errorf("PendingBatchPasses = %d, %v; want 2", n, err)
	}
	j, err := s.ClaimBatchPass()
	if err != nil || j.ID != "live1" || j.BatchPass != store.BatchPassRunning || j.Status != store.StatusDone || j.Attempts != 1 {
		t.Fatalf("ClaimBatchPass = %+v, %v; want live1 running, still done, attempt 1", j, err)
	}
	if got, err := s.Job("live1"); err != nil || got.BatchPass != store.BatchPassRunning || got.Attempts != 1 {
		t.Fatalf("Job(live1) after the claim = %+v, %v; want running, attempt 1", got, err)
	}
	if j, err := s.ClaimBatchPass(); err != nil || j.ID != "live2" {
		t.Fatalf("second ClaimBatchPass = %+v, %v; want live2", j, err)
	}
	if _, err := s.ClaimBatchPass(); !errors.Is(err, store.ErrEmpty) {
		t.Fatalf("third ClaimBatchPass = %v, want ErrEmpty", err)
	}
	if n, err := s.PendingBatchPasses(); err != nil || n != 2 {
		t.Errorf("PendingBatchPasses with both running = %d, %v; want 2", n, err)
	}
	rep, err := s.Recover(store.RecoverOptions{})
	if err != nil || len(rep.BatchPasses) != 2 || len(rep.Live) != 0 {
		t.Fatalf("Recover = %+v, %v; want both batch passes requeued and no live session to finalise", rep, err)
	}
	if err := s.Check(); err != nil {
		t.Fatal(err)
	}
	if j, err := s.ClaimBatchPass(); err != nil || j.ID != "live1" || j.Attempts != 2 {
		t.Fatalf("ClaimBatchPass after Recover = %+v, %v; want live1, attempt 2", j, err)
	}
	// Finishing the pass takes the job out of the queue; deleting one
	// with a pass queued does too.
	if _, err := s.UpdateJob("live1", func(j *store.Job) ([]*store.Delivery, error) {
		j.BatchPass = ""
		return nil, nil
	}); err != nil {
		t.Fatal(err)
	}
	if err := s.DeleteJob("live2"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.ClaimBatchPass(); !errors.Is(err, store.ErrEmpty) {
		t.Fatalf("ClaimBatchPass after the passes ended = %v, want ErrEmpty", err)
	}
	if n, err := s.PendingBatchPasses(); err != nil || n != 0 {
		t.Errorf("PendingBatchPasses after the passes ended = %d, %v; want 0", n, err)
	}
	if err := s.Check(); err != nil {
		t.Fatal(err)
	}
	// Only live jobs take a batch pass.
	mustCreate(t, s, newJob("pre", "a", store.KindPreRecorded, store.StatusDone, t0))
	if _, err := s.UpdateJob("pre", func(j *store.Job) ([]*store.Delivery, error) {
		j.BatchPass = store.BatchPassQueued
		return nil, nil
	}); !errors.Is(err, store.ErrInvalid) {
		t.Fatalf("batch pass on a pre-recorded job = %v, want ErrInvalid", err)
	}
	bad := newJob("pre2", "a", store.KindPreRecorded, store.StatusQueued, t0)
	bad.BatchPass = store.BatchPassQueued
	if err := s.CreateJob(bad); !errors.Is(err, store.ErrInvalid) {
		t.Fatalf("CreateJob of a pre-recorded job with a batch pass = %v, want ErrInvalid", err)
	}
}

// batchPassClaimConcurrent: claimers racing over the queued batch passes
// take each one exactly once.
func batchPassClaimConcurrent(t *testing.T, s store.Store) {
	const n = 20
	for i := range n {
		j := newJob(string(rune('a'+i)), "acct", store.KindLive, store.StatusDone, t0.Add(time.Duration(i)))
		j.BatchPass = store.BatchPassQueued
		mustCreate(t, s, j)
	}
	var mu sync.Mutex
	seen := map[string]int{}
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			for {
				j, err := s.ClaimBatchPass()
				if errors.Is(err, store.ErrEmpty) {
					return
				}
				if err != nil {
					t.Error(err)
					return
				}
				mu.Lock()
				seen[j.ID]++
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	if len(seen) != n {
		t.Errorf("claimed %d distinct passes, want %d", len(seen), n)
	}
	for id, c := range seen {
		if c != 1 {
			t.Errorf("pass %s claimed %d times", id, c)
		}
	}
}
