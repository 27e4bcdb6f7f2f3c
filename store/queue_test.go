package store_test

import (
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/earshot-dev/earshot/store"
	"github.com/earshot-dev/earshot/store/storetest"
)

func TestClaimNextOrder(t *testing.T) {
	db := storetest.Open(t)
	at := func(s int) time.Time { return t0.Add(time.Duration(s) * time.Second) }
	// Inserted out of order; claimed oldest first, ID breaking ties.
	mustCreate(t, db,
		newJob("c", "a", store.KindPreRecorded, store.StatusQueued, at(3)),
		newJob("a", "b", store.KindPreRecorded, store.StatusQueued, at(1)),
		newJob("live", "a", store.KindLive, store.StatusQueued, at(0)),
		newJob("done", "a", store.KindPreRecorded, store.StatusDone, at(0)),
		newJob("b2", "a", store.KindPreRecorded, store.StatusQueued, at(2)),
		newJob("b1", "a", store.KindPreRecorded, store.StatusQueued, at(2)),
	)
	var got []string
	for {
		j, err := db.ClaimNext(store.KindPreRecorded)
		if errors.Is(err, store.ErrEmpty) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if j.Status != store.StatusProcessing || j.Attempts != 1 {
			t.Errorf("claimed %s: status %s attempts %d", j.ID, j.Status, j.Attempts)
		}
		stored, _ := db.Job(j.ID)
		if stored.Status != store.StatusProcessing || stored.Attempts != 1 {
			t.Errorf("claim of %s not stored: %+v", j.ID, stored)
		}
		got = append(got, j.ID)
	}
	if want := []string{"a", "b1", "b2", "c"}; !slices.Equal(got, want) {
		t.Errorf("claim order %v, want %v", got, want)
	}
	if _, err := db.ClaimNext(store.KindLive); !errors.Is(err, store.ErrEmpty) {
		t.Errorf("ClaimNext(live) = %v, want ErrEmpty", err)
	}
	if _, err := db.ClaimNext("nope"); !errors.Is(err, store.ErrInvalid) {
		t.Errorf("ClaimNext(bad kind) = %v, want ErrInvalid", err)
	}

	// Put back by UpdateJob: claimable again, Attempts grows.
	if _, err := db.UpdateJob("b1", setStatus(store.StatusQueued)); err != nil {
		t.Fatal(err)
	}
	j, err := db.ClaimNext(store.KindPreRecorded)
	if err != nil || j.ID != "b1" || j.Attempts != 2 {
		t.Errorf("re-claim = %+v, %v; want b1 with 2 attempts", j, err)
	}
}

// TestClaimNextConcurrent checks that concurrent workers never claim the
// same job twice.
func TestClaimNextConcurrent(t *testing.T) {
	db := storetest.Open(t)
	const n = 200
	for i := range n {
		mustCreate(t, db, newJob(string(rune('A'+i%26))+time.Duration(i).String(), "a",
			store.KindPreRecorded, store.StatusQueued, t0.Add(time.Duration(i))))
	}
	results := make(chan []string, 4)
	for range 4 {
		go func() {
			var mine []string
			for {
				j, err := db.ClaimNext(store.KindPreRecorded)
				if err != nil {
					results <- mine
					return
				}
				mine = append(mine, j.ID)
			}
		}()
	}
	seen := map[string]bool{}
	for range 4 {
		for _, id := range <-results {
			if seen[id] {
				t.Errorf("%s claimed twice", id)
			}
			seen[id] = true
		}
	}
	if len(seen) != n {
		t.Errorf("claimed %d jobs, want %d", len(seen), n)
	}
}

// TestClaimNextAfter: claims take turns between accounts in name order,
// each account's oldest job first, wrapping around.
func TestClaimNextAfter(t *testing.T) {
	db := storetest.Open(t)
	at := func(s int) time.Time { return t0.Add(time.Duration(s) * time.Second) }
	mustCreate(t, db,
		newJob("h1", "hog", store.KindPreRecorded, store.StatusQueued, at(1)),
		newJob("h2", "hog", store.KindPreRecorded, store.StatusQueued, at(2)),
		newJob("h3", "hog", store.KindPreRecorded, store.StatusQueued, at(3)),
		newJob("o1", "other", store.KindPreRecorded, store.StatusQueued, at(4)),
		newJob("a1", "acme", store.KindPreRecorded, store.StatusQueued, at(5)),
	)
	var got []string
	last := "hog"
	for {
		j, err := db.ClaimNextAfter(store.KindPreRecorded, last)
		if errors.Is(err, store.ErrEmpty) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, j.ID)
		last = j.Account
	}
	if want := []string{"o1", "a1", "h1", "h2", "h3"}; !slices.Equal(got, want) {
		t.Errorf("claim order %v, want %v", got, want)
	}
}

// TestAwaitingAudio: a queued job awaiting its audio stays out of the
// queue until the flag is cleared, and is listed by AwaitingAudio.
func TestAwaitingAudio(t *testing.T) {
	db := storetest.Open(t)
	j := newJob("f", "a", store.KindPreRecorded, store.StatusQueued, t0)
	j.AwaitingAudio = true
	mustCreate(t, db, j)
	if _, err := db.ClaimNext(store.KindPreRecorded); !errors.Is(err, store.ErrEmpty) {
		t.Fatalf("claim of a job awaiting audio: %v, want ErrEmpty", err)
	}
	if got, err := db.AwaitingAudio(); err != nil || len(got) != 1 || got[0].ID != "f" {
		t.Fatalf("AwaitingAudio = %v, %v", got, err)
	}
	if err := db.Check(); err != nil {
		t.Fatalf("Check with a job awaiting audio: %v", err)
	}
	if _, err := db.UpdateJob("f", func(j *store.Job) ([]*store.Delivery, error) {
		j.AwaitingAudio, j.Blob = false, "job-f"
		return nil, nil
	}); err != nil {
		t.Fatal(err)
	}
	if got, err := db.AwaitingAudio(); err != nil || len(got) != 0 {
		t.Fatalf("AwaitingAudio after the fetch = %v, %v", got, err)
	}
	if err := db.Check(); err != nil {
		t.Fatalf("Check after the fetch: %v", err)
	}
	if c, err := db.ClaimNext(store.KindPreRecorded); err != nil || c.ID != "f" {
		t.Fatalf("claim after the fetch = %v, %v", c, err)
	}
}
