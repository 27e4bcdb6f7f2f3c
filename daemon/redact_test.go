package daemon

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/earshot-dev/earshot/store/bolt"
	"github.com/earshot-dev/earshot/store/storetest/memstore"

	"github.com/earshot-dev/earshot/ingest/media"
	"github.com/earshot-dev/earshot/recognizer/pipeline"
	"github.com/earshot-dev/earshot/store"
)

// TestRedactedAudioCrashOrder walks a pii_redaction job's audio through
// the two places a crash can stop the worker (redact.go), on the embedded
// store, each followed by what the next start does (SweepBlobs): before
// the commit the job is processing on its original audio, and the
// redacted blob, named by nothing, goes; after the commit the job names
// the redacted WAV (audio/wav), and the original, named by nothing, goes.
// At no point does a record name the original once the job is done.
func TestRedactedAudioCrashOrder(t *testing.T) {
	const id = "6f1c2a3b-4d5e-4f60-8a7b-9c0d1e2f3a4b"
	dir := t.TempDir()
	open := func() *bolt.DB {
		db, err := bolt.Open(dir, &bolt.Options{NoSync: true})
		if err != nil {
			t.Fatal(err)
		}
		return db
	}
	db := open()
	original := []byte("original audio: the name is in here")
	if _, err := db.WriteBlob(jobBlob(id), bytes.NewReader(original), 0); err != nil {
		t.Fatal(err)
	}
	job := &store.Job{ID: id, Account: "acme", Kind: store.KindPreRecorded, Status: store.StatusProcessing,
		Attempts: 1, CreatedAt: time.Now(), Blob: jobBlob(id)}
	if err := db.CreateJob(job); err != nil {
		t.Fatal(err)
	}
	d := &Daemon{db: db, log: slog.New(slog.DiscardHandler), cfg: Config{DataDir: dir}}
	pcm := make([]int16, 16000)
	for i := range pcm {
		pcm[i] = 5000
	}
	ra := &pipeline.RedactedAudio{Channels: [][]int16{pcm}, Spans: []media.Span{{Start: 0.25, End: 0.5}}, Fill: media.FillSilence}

	// A crash after the redacted audio is written, before the commit.
	name, err := d.storeRedactedAudio(job, ra)
	if err != nil || name != redactedBlob(id, 1) {
		t.Fatalf("storeRedactedAudio = %q, %v", name, err)
	}
	db.Close()
	db = open()
	swept, err := db.SweepBlobs()
	if err != nil || len(swept) != 1 || swept[0] != name {
		t.Fatalf("start after a crash before the commit swept %v, %v; want the redacted blob only", swept, err)
	}
	if j, _ := db.Job(id); j.Status != store.StatusProcessing || j.Blob != jobBlob(id) {
		t.Fatalf("job %s naming %s, want processing on its original", j.Status, j.Blob)
	}

	// The next run writes it again and commits, then crashes before
	// removing the original.
	d.db = db
	job.Attempts = 2
	if name, err = d.storeRedactedAudio(job, ra); err != nil {
		t.Fatal(err)
	}
	if _, err := db.UpdateJob(id, func(j *store.Job) ([]*store.Delivery, error) {
		j.Status, j.Blob = store.StatusDone, name // what finishJob does
		return nil, nil
	}); err != nil {
		t.Fatal(err)
	}
	db.Close()
	db = open()
	defer db.Close()
	d.db = db
	swept, err = db.SweepBlobs()
	if err != nil || len(swept) != 1 || swept[0] != jobBlob(id) {
		t.Fatalf("start after a crash after the commit swept %v, %v; want the original only", swept, err)
	}
	f, ctype, err := d.OpenJobAudio(context.Background(), "acme", store.KindPreRecorded, id)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	wav, _ := io.ReadAll(f)
	if ctype != "audio/wav" || len(wav) != media.WAVHeaderSize+2*16000 || bytes.Contains(wav, original) {
		t.Fatalf("the done job's audio: %s, %d bytes", ctype, len(wav))
	}
	for i := 4000; i < 8000; i++ { // 0.25-0.5 s
		if wav[media.WAVHeaderSize+2*i] != 0 || wav[media.WAVHeaderSize+2*i+1] != 0 {
			t.Fatalf("sample %d not silent", i)
		}
	}
	if wav[media.WAVHeaderSize+2*10000] == 0 {
		t.Fatal("audio outside the span silenced")
	}
}

// TestRedactedAudioSealedInMemory: on a sealed store a job's redacted
// audio is made in memory, never under data_dir (here data_dir/scratch
// cannot be made: a file holds its name), and stored sealed, blanked.
// Before (until 2026-11-30) it went through a clear WAV in
// data_dir/scratch, which a crash could leave behind.
func TestRedactedAudioSealedInMemory(t *testing.T) {
	const id = "6f1c2a3b-4d5e-4f60-8a7b-9c0d1e2f3a4c"
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "scratch"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	db, _ := sealedOver(t, memstore.New())
	d := &Daemon{db: db, log: slog.New(slog.DiscardHandler), cfg: Config{DataDir: dir}}
	pcm := make([]int16, 16000)
	for i := range pcm {
		pcm[i] = 5000
	}
	ra := &pipeline.RedactedAudio{Channels: [][]int16{pcm}, Spans: []media.Span{{Start: 0.25, End: 0.5}}, Fill: media.FillSilence}
	job := &store.Job{ID: id, Account: "acme", Kind: store.KindPreRecorded, Status: store.StatusProcessing, Attempts: 1}
	name, err := d.storeRedactedAudio(job, ra)
	if err != nil {
		t.Fatalf("storeRedactedAudio: %v", err)
	}
	r, err := db.OpenBlob(name)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	wav, _ := io.ReadAll(r)
	if len(wav) != media.WAVHeaderSize+2*16000 || wav[media.WAVHeaderSize+2*5000] != 0 || wav[media.WAVHeaderSize+2*10000] == 0 {
		t.Fatalf("stored redacted audio: %d bytes, not blanked over 0.25-0.5 s only", len(wav))
	}
}
