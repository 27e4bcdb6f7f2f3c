package store_test

import (
	"errors"
	"os"
	"slices"
	"testing"
	"time"

	"github.com/earshot-dev/earshot/store"
	"github.com/earshot-dev/earshot/store/storetest"
)

// retentionFixture creates, relative to cut, jobs of every kind and status
// before and after it, each with a blob named after it, and one old done
// job with a pending callback. It returns the ids ExpireJobs must delete
// per kind, oldest first.
func retentionFixture(t *testing.T, db *store.DB, cut time.Time) map[store.Kind][]string {
	t.Helper()
	want := map[store.Kind][]string{}
	for _, kind := range []store.Kind{store.KindPreRecorded, store.KindLive} {
		for i, st := range []store.Status{store.StatusQueued, store.StatusProcessing, store.StatusDone, store.StatusError} {
			for _, age := range []struct {
				name    string
				created time.Time
				expire  bool
			}{
				{"old", cut.Add(-time.Duration(48+i) * time.Hour), true},
				{"edge", cut, false}, // strictly before only
				{"new", cut.Add(time.Hour), false},
			} {
				id := string(kind) + "-" + string(st) + "-" + age.name
				j := newJob(id, "acme", kind, st, age.created)
				j.Blob = "blob-" + id
				if _, err := db.WriteBlob(j.Blob, bytesReader("audio"), 0); err != nil {
					t.Fatal(err)
				}
				mustCreate(t, db, j)
				if age.expire && (st == store.StatusDone || st == store.StatusError) {
					want[kind] = append(want[kind], id)
				}
			}
		}
	}
	// done before error: both are 48+i hours old, i larger for error.
	for k := range want {
		slices.Reverse(want[k])
	}
	owed := newJob("owed", "acme", store.KindPreRecorded, store.StatusDone, cut.Add(-1000*time.Hour))
	mustCreate(t, db, owed)
	if err := db.EnqueueDelivery(&store.Delivery{JobID: "owed", Account: "acme", URL: "http://127.0.0.1:9/cb"}); err != nil {
		t.Fatal(err)
	}
	return want
}

func TestExpireJobs(t *testing.T) {
	cut := t0
	tests := []struct {
		name  string
		kind  store.Kind
		limit int
		want  int // how many of the kind's expired ids, oldest first
	}{
		{"pre-recorded all", store.KindPreRecorded, 100, 2},
		{"live all", store.KindLive, 100, 2},
		{"limit takes oldest", store.KindPreRecorded, 1, 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			db := storetest.Open(t)
			want := retentionFixture(t, db, cut)
			if len(want[tc.kind]) != 2 {
				t.Fatalf("fixture: %d expirable %s jobs, want 2", len(want[tc.kind]), tc.kind)
			}
			wantIDs := want[tc.kind][:tc.want]
			before, err := db.CountJobs(tc.kind, "")
			if err != nil {
				t.Fatal(err)
			}
			got, err := db.ExpireJobs(tc.kind, cut, tc.limit)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(got, wantIDs) {
				t.Fatalf("ExpireJobs = %v, want %v", got, wantIDs)
			}
			for _, id := range wantIDs {
				if _, err := db.Job(id); !errors.Is(err, store.ErrNotFound) {
					t.Errorf("Job(%s) after expiry = %v, want ErrNotFound", id, err)
				}
				if _, err := os.Stat(db.BlobPath("blob-" + id)); !errors.Is(err, os.ErrNotExist) {
					t.Errorf("blob of %s after expiry: %v, want gone", id, err)
				}
			}
			after, err := db.CountJobs(tc.kind, "")
			if err != nil {
				t.Fatal(err)
			}
			if before-after != len(wantIDs) {
				t.Errorf("jobs of kind %s: %d before, %d after; want %d fewer", tc.kind, before, after, len(wantIDs))
			}
			// A job with a callback still owed stays.
			if _, err := db.Job("owed"); err != nil {
				t.Errorf("job with pending delivery: %v, want kept", err)
			}
			// Nothing left to expire once all were taken; a second call is a no-op.
			if tc.limit >= 2 {
				again, err := db.ExpireJobs(tc.kind, cut, tc.limit)
				if err != nil || len(again) != 0 {
					t.Errorf("second ExpireJobs = %v, %v; want none", again, err)
				}
			}
		})
	}
}

func TestExpireJobsInvalid(t *testing.T) {
	db := storetest.Open(t)
	for _, tc := range []struct {
		name  string
		kind  store.Kind
		limit int
	}{
		{"zero limit", store.KindLive, 0},
		{"unknown kind", "batch", 10},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := db.ExpireJobs(tc.kind, t0, tc.limit); !errors.Is(err, store.ErrInvalid) {
				t.Errorf("ExpireJobs = %v, want ErrInvalid", err)
			}
		})
	}
}

func TestExpireUploads(t *testing.T) {
	db := storetest.Open(t)
	cut := t0
	ups := []struct {
		id      string
		created time.Time
		expire  bool
	}{
		{"u-new", cut.Add(time.Minute), false},
		{"u-old2", cut.Add(-time.Hour), true},
		{"u-edge", cut, false},
		{"u-old1", cut.Add(-2 * time.Hour), true},
	}
	for _, u := range ups {
		blob := "up-" + u.id
		if _, err := db.WriteBlob(blob, bytesReader("audio"), 0); err != nil {
			t.Fatal(err)
		}
		if err := db.PutUpload(&store.Upload{ID: u.id, Account: "acme", CreatedAt: u.created, Blob: blob}); err != nil {
			t.Fatal(err)
		}
	}
	// A job made from an old upload holds its own link to the audio.
	if err := db.LinkBlob("up-u-old1", "job-from-upload"); err != nil {
		t.Fatal(err)
	}

	got, err := db.ExpireUploads(cut, 1)
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"u-old1"}; !slices.Equal(got, want) {
		t.Fatalf("ExpireUploads(limit 1) = %v, want %v (oldest first)", got, want)
	}
	got, err = db.ExpireUploads(cut, 100)
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"u-old2"}; !slices.Equal(got, want) {
		t.Fatalf("ExpireUploads = %v, want %v", got, want)
	}
	for _, u := range ups {
		_, err := db.Upload(u.id)
		_, serr := os.Stat(db.BlobPath("up-" + u.id))
		if u.expire {
			if !errors.Is(err, store.ErrNotFound) || !errors.Is(serr, os.ErrNotExist) {
				t.Errorf("%s: record %v, blob %v; want both gone", u.id, err, serr)
			}
		} else if err != nil || serr != nil {
			t.Errorf("%s: record %v, blob %v; want both kept", u.id, err, serr)
		}
	}
	f, err := db.OpenBlob("job-from-upload")
	if err != nil {
		t.Fatalf("job's link to an expired upload's audio: %v", err)
	}
	f.Close()
	if _, err := db.ExpireUploads(cut, 0); !errors.Is(err, store.ErrInvalid) {
		t.Errorf("ExpireUploads(limit 0) = %v, want ErrInvalid", err)
	}
}
