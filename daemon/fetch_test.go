package daemon

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"os"
	"sync"
	"testing"

	"github.com/earshot-dev/earshot/store"
)

// TestFetchJob: an audio_url job's download is stored as the job's blob
// over real HTTP, the job leaves AwaitingAudio with the URL's file name
// and enters the queue; a URL that answers 404 ends the job error (422,
// its callback queued) with nothing kept; a job deleted while its audio
// downloads keeps no audio.
func TestFetchJob(t *testing.T) {
	wav, err := os.ReadFile(speech)
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var hold chan struct{} // when set, the next download waits on it
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		h := hold
		mu.Unlock()
		if h != nil {
			<-h
		}
		if r.URL.Path != "/calls/monday.wav" {
			http.NotFound(w, r)
			return
		}
		w.Write(wav)
	}))
	defer srv.Close()
	d, db := newTestDaemon(t, nil)

	job, err := d.CreatePreRecorded(t.Context(), "acme", "r", []byte(`{"audio_url":"`+srv.URL+`/calls/monday.wav"}`))
	if err != nil {
		t.Fatal(err)
	}
	d.fetchJob(t.Context(), job.ID)
	got, _ := db.Job(job.ID)
	if got.AwaitingAudio || got.Blob != jobBlob(job.ID) || got.File == nil || got.File.Filename == nil || *got.File.Filename != "monday.wav" {
		t.Fatalf("after the download: awaiting %v blob %q file %+v", got.AwaitingAudio, got.Blob, got.File)
	}
	if b, _ := db.Blob(got.Blob); !bytes.Equal(b, wav) {
		t.Errorf("stored %d bytes, served %d", len(b), len(wav))
	}
	if claimed, err := db.ClaimNext(store.KindPreRecorded); err != nil || claimed.ID != job.ID {
		t.Errorf("fetched job not in the queue: %v %v", claimed, err)
	}

	missing, err := d.CreatePreRecorded(t.Context(), "acme", "r", []byte(`{"audio_url":"`+srv.URL+`/nope.wav","callback_url":"http://127.0.0.1:1/cb"}`))
	if err != nil {
		t.Fatal(err)
	}
	d.fetchJob(t.Context(), missing.ID)
	got, _ = db.Job(missing.ID)
	if got.Status != store.StatusError || got.ErrorCode != 422 {
		t.Errorf("404 audio_url: %s %d %q", got.Status, got.ErrorCode, got.ErrorMessage)
	}
	if _, ok := db.Blob(jobBlob(missing.ID)); ok {
		t.Error("a failed download left its blob")
	}
	if evs := callbackEvents(t, db, missing.ID); len(evs) != 1 || evs[0].Event != "transcription.error" {
		t.Errorf("callbacks %+v", evs)
	}

	deleted, err := d.CreatePreRecorded(t.Context(), "acme", "r", []byte(`{"audio_url":"`+srv.URL+`/calls/monday.wav"}`))
	if err != nil {
		t.Fatal(err)
	}
	h := make(chan struct{})
	mu.Lock()
	hold = h
	mu.Unlock()
	var wg sync.WaitGroup
	wg.Go(func() { d.fetchJob(t.Context(), deleted.ID) })
	if err := d.DeleteJob(t.Context(), "acme", store.KindPreRecorded, deleted.ID); err != nil {
		t.Fatal(err)
	}
	close(h)
	wg.Wait()
	if _, ok := db.Blob(jobBlob(deleted.ID)); ok {
		t.Error("a job deleted during its download left the audio")
	}
	d.fetchJob(t.Context(), deleted.ID) // gone: nothing to do
}
