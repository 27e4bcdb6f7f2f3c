package daemon

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/earshot-dev/earshot/errcode"
	"github.com/earshot-dev/earshot/ingest"
	"github.com/earshot-dev/earshot/params"
	"github.com/earshot-dev/earshot/store"
	"github.com/earshot-dev/earshot/store/storetest/memstore"
)

// uploadSpeech uploads the real speech file for account.
func uploadSpeech(t *testing.T, d *Daemon, account string) *store.Upload {
	t.Helper()
	f, err := os.Open(speech)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	up, err := d.Upload(t.Context(), account, "dir/Speech.WAV", f)
	if err != nil {
		t.Fatalf("Upload: %v", err)
	}
	return up
}

// fileURL is the audio_url naming an upload.
func fileURL(id string) string { return "http://earshot.local/v2/files/" + id }

// TestCreatePreRecordedFromUpload: a job made from an upload is queued
// with its own link to the audio (deleting the upload keeps it), the
// file's name, duration and channels; the account's bytes count the audio
// once; another account cannot name the upload (422), and the queue's
// bound refuses a job at capacity (503) with nothing stored.
func TestCreatePreRecordedFromUpload(t *testing.T) {
	d, db := newTestDaemon(t, func(c *Config) { c.Limits.MaxQueued = 1 })
	up := uploadSpeech(t, d, "acme")
	if up.Filename != "Speech.WAV" || up.Extension != "wav" || up.Channels != 1 || up.AudioDuration < 1 {
		t.Fatalf("upload %+v", up)
	}
	if _, err := d.CreatePreRecorded(t.Context(), "other", "req-0", []byte(`{"audio_url":"`+fileURL(up.ID)+`"}`)); !errors.Is(err, params.ErrCannotServe) {
		t.Fatalf("another account's upload: %v, want ErrCannotServe", err)
	}
	job, err := d.CreatePreRecorded(t.Context(), "acme", "req-1", []byte(`{"audio_url":"`+fileURL(up.ID)+`","custom_metadata":{"n":1}}`))
	if err != nil {
		t.Fatal(err)
	}
	stored, err := db.Job(job.ID)
	if err != nil {
		t.Fatal(err)
	}
	switch {
	case stored.Status != store.StatusQueued || stored.AwaitingAudio || stored.Blob != jobBlob(job.ID):
		t.Errorf("stored %s awaiting %v blob %q", stored.Status, stored.AwaitingAudio, stored.Blob)
	case stored.File == nil || *stored.File.Filename != "Speech.WAV" || *stored.File.Channels != 1 || stored.File.ID != up.ID:
		t.Errorf("file %+v", stored.File)
	case stored.RequestID != "req-1" || stored.CustomMetadata["n"] == nil:
		t.Errorf("request id %q metadata %v", stored.RequestID, stored.CustomMetadata)
	}
	n, _ := db.AccountBytes("acme")
	if n != up.Size {
		t.Errorf("AccountBytes = %d, want %d (the linked audio once)", n, up.Size)
	}
	if err := d.DeleteUpload(t.Context(), "acme", up.ID); err != nil {
		t.Fatal(err)
	}
	if _, ok := db.Blob(up.Blob); ok {
		t.Error("the upload's blob outlived its delete")
	}
	if _, ok := db.Blob(jobBlob(job.ID)); !ok {
		t.Error("deleting the upload took the job's audio")
	}
	_, err = d.CreatePreRecorded(t.Context(), "acme", "req-2", []byte(`{"audio_url":"http://example.com/a.wav"}`))
	if !errors.Is(err, ingest.ErrAtCapacity) || errcode.Status(err) != 503 {
		t.Fatalf("over max_queued: %v (status %d), want ErrAtCapacity 503", err, errcode.Status(err))
	}
	if n, _ := db.CountJobs(store.KindPreRecorded, ""); n != 1 {
		t.Errorf("%d jobs stored, want 1", n)
	}
}

// TestCreatePreRecordedRefused: a body the contract refuses stores nothing.
func TestCreatePreRecordedRefused(t *testing.T) {
	d, db := newTestDaemon(t, nil)
	for _, tc := range []struct {
		name, body string
		status     int
	}{
		{"not json", `{`, 400},
		{"no audio_url", `{}`, 400},
		{"unknown upload", `{"audio_url":"` + fileURL("0f1e2d3c-0000-4000-8000-000000000000") + `"}`, 422},
		{"unserved language", `{"audio_url":"http://example.com/a.wav","language_config":{"languages":["xx"]}}`, 400},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := d.CreatePreRecorded(t.Context(), "acme", "r", []byte(tc.body))
			if got := errcode.Status(err); err == nil || got != tc.status {
				t.Errorf("err %v status %d, want %d", err, got, tc.status)
			}
		})
	}
	if n, _ := db.CountJobs(store.KindPreRecorded, ""); n != 0 {
		t.Errorf("refused bodies stored %d jobs", n)
	}
	if names := db.BlobNames(); len(names) != 0 {
		t.Errorf("refused bodies left blobs %v", names)
	}
}

// TestCreatePreRecordedAwaitsURL: an audio_url job is queued awaiting its
// download, out of the workers' queue until the fetcher stores the audio.
func TestCreatePreRecordedAwaitsURL(t *testing.T) {
	d, db := newTestDaemon(t, nil)
	job, err := d.CreatePreRecorded(t.Context(), "acme", "r", []byte(`{"audio_url":"http://example.com/a.wav"}`))
	if err != nil {
		t.Fatal(err)
	}
	if !job.AwaitingAudio || job.Blob != "" || job.File == nil || *job.File.Source != "http://example.com/a.wav" {
		t.Fatalf("job %+v", job)
	}
	if _, err := db.ClaimNext(store.KindPreRecorded); !errors.Is(err, store.ErrEmpty) {
		t.Errorf("a job awaiting its audio was claimable: %v", err)
	}
	if got, _ := db.AwaitingAudio(); len(got) != 1 || got[0].ID != job.ID {
		t.Errorf("AwaitingAudio = %v", got)
	}
}

// TestJobLookup: a job is found only by its account and kind; another
// account's is ErrNotOwner (401), a malformed id or the wrong kind is
// ErrNotFound (404) without reaching the store.
func TestJobLookup(t *testing.T) {
	db := memstore.New()
	d := &Daemon{db: db}
	const id = "6f1c2a3b-4d5e-4f60-8a7b-9c0d1e2f3a4b"
	if err := db.CreateJob(&store.Job{ID: id, Account: "acme", Kind: store.KindPreRecorded, Status: store.StatusDone, CreatedAt: time.Now()}); err != nil {
		t.Fatal(err)
	}
	var asked []string
	db.Fault = func(op string) error { asked = append(asked, op); return nil }
	for _, tc := range []struct {
		name, account string
		kind          store.Kind
		id            string
		want          error
		status        int
	}{
		{"own", "acme", store.KindPreRecorded, id, nil, 200},
		{"either kind", "acme", "", id, nil, 200},
		{"other account", "evil", store.KindPreRecorded, id, errcode.ErrNotOwner, 401},
		{"other kind", "acme", store.KindLive, id, store.ErrNotFound, 404},
		{"unknown", "acme", store.KindPreRecorded, "6f1c2a3b-4d5e-4f60-8a7b-000000000000", store.ErrNotFound, 404},
		{"malformed", "acme", store.KindPreRecorded, "../../etc/passwd", store.ErrNotFound, 404},
	} {
		t.Run(tc.name, func(t *testing.T) {
			asked = nil
			j, err := d.Job(t.Context(), tc.account, tc.kind, tc.id)
			if !errors.Is(err, tc.want) || tc.want == nil && (j == nil || j.ID != id) {
				t.Fatalf("Job = %v, %v; want %v", j, err, tc.want)
			}
			if tc.want != nil && errcode.Status(err) != tc.status {
				t.Errorf("status %d, want %d", errcode.Status(err), tc.status)
			}
			if tc.name == "malformed" && len(asked) != 0 {
				t.Errorf("a malformed id reached the store: %v", asked)
			}
		})
	}
}

// TestDeleteJob: deleting a job removes its record, its audio and its
// pending callbacks, cancels the run of a worker of this node and wakes
// the waiters of WaitJob; another account's job stays.
func TestDeleteJob(t *testing.T) {
	d, db := newTestDaemon(t, nil)
	const id = "6f1c2a3b-4d5e-4f60-8a7b-9c0d1e2f3a4b"
	job := &store.Job{ID: id, Account: "acme", Kind: store.KindPreRecorded, Status: store.StatusQueued, CreatedAt: time.Now(), Blob: jobBlob(id)}
	if _, err := db.WriteBlob(job.Blob, strings.NewReader("audio"), 0); err != nil {
		t.Fatal(err)
	}
	if err := db.CreateJob(job); err != nil {
		t.Fatal(err)
	}
	if err := db.EnqueueDelivery(&store.Delivery{JobID: id, Account: "acme", URL: "http://127.0.0.1:1/"}); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	d.running[id] = runningJob{cancel: cancel, attempts: 1}
	woken := d.ends.wait()

	if err := d.DeleteJob(t.Context(), "evil", store.KindPreRecorded, id); !errors.Is(err, errcode.ErrNotOwner) {
		t.Fatalf("another account's delete: %v", err)
	}
	if _, err := db.Job(id); err != nil {
		t.Fatalf("another account's delete removed the job: %v", err)
	}
	if err := d.DeleteJob(t.Context(), "acme", store.KindPreRecorded, id); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Job(id); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("job after delete: %v", err)
	}
	if _, ok := db.Blob(job.Blob); ok {
		t.Error("audio outlived its job")
	}
	if n, _ := db.PendingDeliveries(); n != 0 {
		t.Errorf("%d deliveries outlived their job", n)
	}
	select {
	case <-ctx.Done():
	default:
		t.Error("the running worker's context was not cancelled")
	}
	select {
	case <-woken:
	default:
		t.Error("WaitJob's waiters not woken")
	}
}

// TestUploadRefused: an upload over limits.max_upload_bytes is 413 and a
// file that is not audio 422; neither leaves bytes or a record behind.
func TestUploadRefused(t *testing.T) {
	d, db := newTestDaemon(t, func(c *Config) { c.Limits.MaxUploadBytes = 64 << 10 })
	big := bytes.Repeat([]byte{1}, 65<<10)
	if _, err := d.Upload(t.Context(), "acme", "big.wav", bytes.NewReader(big)); !errors.Is(err, errcode.ErrTooLarge) || errcode.Status(err) != 413 {
		t.Errorf("too large: %v (%d)", err, errcode.Status(err))
	}
	_, err := d.Upload(t.Context(), "acme", "notes.txt", strings.NewReader("these are not audio samples at all"))
	if err == nil || errcode.Status(err) != 422 {
		t.Errorf("not audio: %v (%d), want 422", err, errcode.Status(err))
	}
	if names := db.BlobNames(); len(names) != 0 {
		t.Errorf("refused uploads left %v", names)
	}
	if n, _ := db.AccountBytes("acme"); n != 0 {
		t.Errorf("refused uploads count %d bytes", n)
	}
}

// TestUploadAccess: an upload opens and deletes only for its account; a
// dropped upload (the /v1 door's) goes like a deleted one.
func TestUploadAccess(t *testing.T) {
	d, db := newTestDaemon(t, nil)
	up := uploadSpeech(t, d, "acme")
	if _, _, err := d.OpenUpload(t.Context(), "evil", up.ID); !errors.Is(err, errcode.ErrNotOwner) {
		t.Errorf("OpenUpload by another account: %v", err)
	}
	if _, _, err := d.OpenUpload(t.Context(), "acme", "no/such"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("OpenUpload of a malformed id: %v", err)
	}
	r, got, err := d.OpenUpload(t.Context(), "acme", up.ID)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(r)
	r.Close()
	want, _ := os.ReadFile(speech)
	if got.ID != up.ID || !bytes.Equal(b, want) {
		t.Errorf("OpenUpload read %d bytes of %d", len(b), len(want))
	}
	if err := d.DeleteUpload(t.Context(), "evil", up.ID); !errors.Is(err, errcode.ErrNotOwner) {
		t.Errorf("DeleteUpload by another account: %v", err)
	}
	if err := d.DropUpload(t.Context(), "acme", up.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Upload(up.ID); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("dropped upload still stored: %v", err)
	}
	if _, ok := db.Blob(up.Blob); ok {
		t.Error("dropped upload's bytes still stored")
	}
	if err := d.DeleteUpload(t.Context(), "acme", up.ID); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("second delete: %v", err)
	}
}

// TestOpenJobAudio: a job's audio opens with the type of what it holds:
// WAV for a live recording or redacted audio, the uploaded file's type by
// its extension, else octet-stream; a job with no audio yet is 404.
func TestOpenJobAudio(t *testing.T) {
	db := memstore.New()
	d := &Daemon{db: db}
	name := func(s string) *string { return &s }
	for i, tc := range []struct {
		job  store.Job
		want string
	}{
		{store.Job{Kind: store.KindLive}, "audio/wav"},
		{store.Job{Kind: store.KindPreRecorded, File: &store.File{Filename: name("call.MP3")}}, "audio/mpeg"},
		{store.Job{Kind: store.KindPreRecorded, File: &store.File{Filename: name("noext")}}, "application/octet-stream"},
		{store.Job{Kind: store.KindPreRecorded}, "application/octet-stream"},
		{store.Job{Kind: store.KindPreRecorded, File: &store.File{Filename: name("call.mp3")}}, "audio/wav"}, // redacted
	} {
		j := tc.job
		j.ID = "6f1c2a3b-4d5e-4f60-8a7b-00000000000" + string(rune('0'+i))
		j.Account, j.Status, j.CreatedAt, j.Blob = "acme", store.StatusDone, time.Now(), "b"+j.ID
		if i == 4 {
			j.Blob = redactedBlob(j.ID, 1)
		}
		if _, err := db.WriteBlob(j.Blob, strings.NewReader("x"), 0); err != nil {
			t.Fatal(err)
		}
		if err := db.CreateJob(&j); err != nil {
			t.Fatal(err)
		}
		r, ctype, err := d.OpenJobAudio(t.Context(), "acme", "", j.ID)
		if err != nil {
			t.Fatalf("%d: %v", i, err)
		}
		r.Close()
		if ctype != tc.want {
			t.Errorf("%d: type %q, want %q", i, ctype, tc.want)
		}
	}
	const none = "6f1c2a3b-4d5e-4f60-8a7b-aaaaaaaaaaaa"
	if err := db.CreateJob(&store.Job{ID: none, Account: "acme", Kind: store.KindPreRecorded, Status: store.StatusQueued, CreatedAt: time.Now()}); err != nil {
		t.Fatal(err)
	}
	if _, _, err := d.OpenJobAudio(t.Context(), "acme", "", none); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("job without audio: %v", err)
	}
}
