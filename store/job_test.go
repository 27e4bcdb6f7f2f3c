package store_test

import (
	"encoding/json"
	"errors"
	"reflect"
	"testing"
	"time"

	"github.com/earshot-dev/earshot/store"
	"github.com/earshot-dev/earshot/store/storetest"
)

func TestCreateJobValidation(t *testing.T) {
	db := storetest.Open(t)
	mustCreate(t, db, newJob("dup", "a", store.KindLive, store.StatusQueued, t0))
	tests := []struct {
		name string
		job  *store.Job
		want error
	}{
		{"ok", newJob("ok", "a", store.KindPreRecorded, store.StatusQueued, t0), nil},
		{"duplicate", newJob("dup", "a", store.KindPreRecorded, store.StatusQueued, t0), store.ErrExists},
		{"empty id", newJob("", "a", store.KindLive, store.StatusQueued, t0), store.ErrInvalid},
		{"empty account", newJob("x1", "", store.KindLive, store.StatusQueued, t0), store.ErrInvalid},
		{"empty kind", newJob("x2", "a", "", store.StatusQueued, t0), store.ErrInvalid},
		{"unknown kind", newJob("x3", "a", "batch", store.StatusQueued, t0), store.ErrInvalid},
		{"empty status", newJob("x4", "a", store.KindLive, "", t0), store.ErrInvalid},
		{"unknown status", newJob("x5", "a", store.KindLive, "paused", t0), store.ErrInvalid},
		{"zero created", newJob("x6", "a", store.KindLive, store.StatusQueued, time.Time{}), store.ErrInvalid},
		{"nil", nil, store.ErrInvalid},
		{"bad result JSON", func() *store.Job {
			j := newJob("x7", "a", store.KindLive, store.StatusDone, t0)
			j.Result = json.RawMessage(`{"a":`)
			return j
		}(), store.ErrInvalid},
		{"bad params JSON", func() *store.Job {
			j := newJob("x8", "a", store.KindLive, store.StatusDone, t0)
			j.Params = json.RawMessage(`nope`)
			return j
		}(), store.ErrInvalid},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := db.CreateJob(tc.job)
			if tc.want == nil && err != nil || tc.want != nil && !errors.Is(err, tc.want) {
				t.Errorf("CreateJob = %v, want %v", err, tc.want)
			}
		})
	}
	if n, _ := db.CountJobs(store.KindLive, ""); n != 1 {
		t.Errorf("failed creates left %d live jobs, want 1", n)
	}
}

func TestJobRoundTrip(t *testing.T) {
	db := storetest.Open(t)
	name, dur, ch := "call.wav", 12.5, 2
	in := &store.Job{
		ID: "j1", Account: "acme", Kind: store.KindPreRecorded, Status: store.StatusDone, RequestID: "r1",
		CreatedAt:           t0,
		CompletedAt:         t0.Add(1500 * time.Millisecond),
		CustomMetadata:      map[string]any{"team": "blue", "n": 3.0, "nested": map[string]any{"a": []any{1.0, "x"}}},
		Params:              json.RawMessage(`{"audio_url":"http://x/a.wav","diarization":true}`),
		File:                &store.File{ID: "f1", Filename: &name, AudioDuration: &dur, Channels: &ch},
		Result:              json.RawMessage(`{"transcription":{"full_transcript":"hello"}}`),
		PostSessionMetadata: map[string]any{"k": "v"},
		Blob:                "j1.wav",
		Attempts:            2,
	}
	mustCreate(t, db, in)
	got, err := db.Job("j1")
	if err != nil {
		t.Fatal(err)
	}
	if !got.CreatedAt.Equal(t0) || got.CreatedAt.Location() != time.UTC || got.CreatedAt.Nanosecond() != t0.Nanosecond() {
		t.Errorf("CreatedAt = %v, want %v in UTC with nanoseconds", got.CreatedAt, t0)
	}
	if !got.CompletedAt.Equal(in.CompletedAt) {
		t.Errorf("CompletedAt = %v", got.CompletedAt)
	}
	want := *in
	want.CreatedAt, want.CompletedAt = got.CreatedAt, got.CompletedAt
	if !reflect.DeepEqual(got, &want) {
		t.Errorf("round trip:\n got %+v\nwant %+v", got, &want)
	}
	fj, _ := json.Marshal(got.File)
	if string(fj) != `{"id":"f1","filename":"call.wav","source":null,"audio_duration":12.5,"number_of_channels":2}` {
		t.Errorf("File JSON = %s", fj)
	}
	if _, err := db.Job("nope"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("Job(unknown) = %v, want ErrNotFound", err)
	}
}

func TestUpdateJob(t *testing.T) {
	db := storetest.Open(t)
	mustCreate(t, db, newJob("j", "acme", store.KindPreRecorded, store.StatusQueued, t0))
	boom := errors.New("boom")
	tests := []struct {
		name string
		fn   func(j *store.Job) ([]*store.Delivery, error)
		want error
	}{
		{"change id", func(j *store.Job) ([]*store.Delivery, error) { j.ID = "k"; return nil, nil }, store.ErrInvalid},
		{"change account", func(j *store.Job) ([]*store.Delivery, error) { j.Account = "x"; return nil, nil }, store.ErrInvalid},
		{"change kind", func(j *store.Job) ([]*store.Delivery, error) { j.Kind = store.KindLive; return nil, nil }, store.ErrInvalid},
		{"change created", func(j *store.Job) ([]*store.Delivery, error) {
			j.CreatedAt = j.CreatedAt.Add(time.Nanosecond)
			return nil, nil
		}, store.ErrInvalid},
		{"bad status", setStatus("paused"), store.ErrInvalid},
		{"fn error", func(j *store.Job) ([]*store.Delivery, error) {
			j.Status = store.StatusDone
			return nil, boom
		}, boom},
		{"bad delivery", func(j *store.Job) ([]*store.Delivery, error) {
			j.Status = store.StatusDone
			return []*store.Delivery{{URL: ""}}, nil
		}, store.ErrInvalid},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := db.UpdateJob("j", tc.fn); !errors.Is(err, tc.want) {
				t.Fatalf("UpdateJob = %v, want %v", err, tc.want)
			}
			j, err := db.Job("j")
			if err != nil || j.Status != store.StatusQueued || j.ID != "j" {
				t.Fatalf("rejected update was written: %+v %v", j, err)
			}
			if n, _ := db.PendingDeliveries(); n != 0 {
				t.Fatalf("rejected update enqueued %d deliveries", n)
			}
		})
	}
	if _, err := db.UpdateJob("nope", setStatus(store.StatusDone)); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("UpdateJob(unknown) = %v, want ErrNotFound", err)
	}

	// A good update: status, result, and a callback committed together.
	d := &store.Delivery{URL: "http://cb/", Body: []byte(`{"id":"j"}`)}
	got, err := db.UpdateJob("j", func(j *store.Job) ([]*store.Delivery, error) {
		j.Status = store.StatusDone
		j.CompletedAt = t0.Add(time.Minute)
		j.Result = json.RawMessage(`{"ok":true}`)
		return []*store.Delivery{d}, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if got.Status != store.StatusDone || string(got.Result) != `{"ok":true}` {
		t.Errorf("UpdateJob returned %+v", got)
	}
	if d.ID == "" || d.JobID != "j" || d.Account != "acme" || d.Method != "POST" {
		t.Errorf("delivery defaults not filled: %+v", d)
	}
	due, err := db.DueDeliveries(time.Now(), 0)
	if err != nil || len(due) != 1 || due[0].ID != d.ID {
		t.Errorf("DueDeliveries = %v, %v", due, err)
	}
	if _, err := db.ClaimNext(store.KindPreRecorded); !errors.Is(err, store.ErrEmpty) {
		t.Errorf("done job still claimable: %v", err)
	}
	for _, tc := range []struct {
		status store.Status
		n      int
	}{{store.StatusQueued, 0}, {store.StatusDone, 1}} {
		if n, _ := db.CountJobs(store.KindPreRecorded, tc.status); n != tc.n {
			t.Errorf("CountJobs(%s) = %d, want %d", tc.status, n, tc.n)
		}
	}
}

func TestDeleteJob(t *testing.T) {
	db := storetest.Open(t)
	j := newJob("j", "acme", store.KindPreRecorded, store.StatusQueued, t0)
	j.Blob = "j-audio"
	other := newJob("k", "acme", store.KindPreRecorded, store.StatusQueued, t0.Add(time.Second))
	mustCreate(t, db, j, other)
	for _, name := range []string{"j-audio", "k-audio"} {
		if _, err := db.WriteBlob(name, bytesReader("audio"), 0); err != nil {
			t.Fatal(err)
		}
	}
	for _, d := range []*store.Delivery{{JobID: "j", URL: "http://a/"}, {JobID: "j", URL: "http://b/"}, {JobID: "k", URL: "http://c/"}} {
		if err := db.EnqueueDelivery(d); err != nil {
			t.Fatal(err)
		}
	}
	if err := db.DeleteJob("j"); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Job("j"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("Job after delete = %v, want ErrNotFound", err)
	}
	if err := db.DeleteJob("j"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("second DeleteJob = %v, want ErrNotFound", err)
	}
	if _, err := db.OpenBlob("j-audio"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("blob after delete: %v", err)
	}
	if f, err := db.OpenBlob("k-audio"); err != nil {
		t.Errorf("other job's blob: %v", err)
	} else {
		f.Close()
	}
	if n, _ := db.PendingDeliveries(); n != 1 {
		t.Errorf("PendingDeliveries = %d, want 1 (only k's)", n)
	}
	if got, err := db.ClaimNext(store.KindPreRecorded); err != nil || got.ID != "k" {
		t.Errorf("ClaimNext = %v, %v; want k", got, err)
	}
	if list, _ := db.ListJobs(store.ListQuery{Account: "acme", Kind: store.KindPreRecorded}); len(list) != 1 {
		t.Errorf("ListJobs after delete = %v", ids(list))
	}
}
