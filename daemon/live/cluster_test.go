package live_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/earshot-dev/earshot/daemon/live"
	"github.com/earshot-dev/earshot/ingest/media"
	"github.com/earshot-dev/earshot/params"
	"github.com/earshot-dev/earshot/store"
	"github.com/earshot-dev/earshot/store/postgres"
	"github.com/earshot-dev/earshot/store/postgres/pgtest"
)

// openPG opens the store at dsn as node id.
func openPG(t *testing.T, dsn, id string) live.StoreCluster {
	t.Helper()
	db, err := postgres.Open(t.Context(), dsn, &postgres.Options{NodeID: id})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return live.StoreCluster{DB: db, StaleAfter: time.Minute}
}

// finishedSignals records the statuses of the live jobs the service ended.
type finishedSignals struct {
	mu       sync.Mutex
	finished []store.Status
}

func (f *finishedSignals) Queued(bool, bool)           {}
func (f *finishedSignals) AdmitRecording(string) error { return nil }
func (f *finishedSignals) Audit(store.AuditEntry)      {}
func (f *finishedSignals) Finished(s store.Status) {
	f.mu.Lock()
	f.finished = append(f.finished, s)
	f.mu.Unlock()
}

// TestEndOrphans: node b stops sending heartbeats while it runs a live
// session, 1.5 s and half a frame of its recording in the shared store. A
// survivor ends it once as error 503: the stored recording keeps the whole
// frames, its header giving their length, the job's file record their
// duration; b's late end cannot overwrite that end. While b still beats,
// nothing is taken.
func TestEndOrphans(t *testing.T) {
	dsn := pgtest.StartDatabase(t)
	a, b := openPG(t, dsn, "a"), openPG(t, dsn, "b")
	a.StaleAfter = 300 * time.Millisecond
	pcm, format := speechPCM(t, "ljspeech-LJ001-0002.wav")
	p, err := params.DecodeLiveOptions(nil) // every default, as a request's
	if err != nil {
		t.Fatal(err)
	}
	if err := p.SetFormat(params.EncodingPCM, 16, format.SampleRate, 1); err != nil {
		t.Fatal(err)
	}
	raw, err := json.Marshal(p)
	if err != nil {
		t.Fatal(err)
	}
	if err := b.DB.Cluster().Heartbeat(store.Node{LiveCapacity: 1, LiveFree: 1}); err != nil {
		t.Fatal(err)
	}
	id := uuid.NewString()
	blob := "live-" + id + ".wav"
	job := &store.Job{ID: id, Account: "acme", Kind: store.KindLive, Status: store.StatusProcessing,
		CreatedAt: time.Now().UTC(), Blob: blob, Params: raw}
	if n, err := b.Place(job, 1, false); err != nil || n.ID != "b" {
		t.Fatalf("Place on b: %+v, %v", n, err)
	}
	whole := format.SampleRate * 3 / 2 * format.FrameSize()
	if _, err := b.AppendBlob(blob, 0, media.AppendWAVHeader(nil, format, -1)); err != nil {
		t.Fatal(err)
	}
	if _, err := b.AppendBlob(blob, media.WAVHeaderSize, pcm[:whole+1]); err != nil {
		t.Fatal(err)
	}
	sig := &finishedSignals{}
	svc := live.NewClusterService(a.DB, live.Deps{Cluster: a, NodeID: "a", Signals: sig})
	if err := svc.EndOrphans(); err != nil {
		t.Fatal(err)
	}
	if j, err := a.DB.Job(id); err != nil || j.Status != store.StatusProcessing {
		t.Fatalf("the session of a node that beats: %v, %v; want it left processing", j.Status, err)
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		if err := svc.EndOrphans(); err != nil {
			t.Fatal(err)
		}
		j, err := a.DB.Job(id)
		if err != nil {
			t.Fatal(err)
		}
		if j.Status != store.StatusProcessing {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the session of a stopped node still processing after 30s")
		}
		time.Sleep(50 * time.Millisecond) // polling until b counts as stopped
	}
	j, err := a.DB.Job(id)
	if err != nil {
		t.Fatal(err)
	}
	if j.Status != store.StatusError || j.ErrorCode != live.OrphanCode || j.File == nil || j.File.AudioDuration == nil || *j.File.AudioDuration != 1.5 {
		dur := -1.0
		if j.File != nil && j.File.AudioDuration != nil {
			dur = *j.File.AudioDuration
		}
		t.Fatalf("ended as %s %d with %v s of audio; want error 503 with 1.5 s", j.Status, j.ErrorCode, dur)
	}
	got := blobBytes(t, a, blob)
	if len(got) < media.WAVHeaderSize || !bytes.Equal(got[:media.WAVHeaderSize], media.AppendWAVHeader(nil, format, int64(whole))) ||
		!bytes.Equal(got[media.WAVHeaderSize:media.WAVHeaderSize+whole], pcm[:whole]) {
		t.Errorf("stored recording: %d bytes, header %x; want the header of %d bytes of audio, then them", len(got), got[:min(len(got), media.WAVHeaderSize)], whole)
	}
	if _, err := b.DB.UpdateJob(id, func(j *store.Job) ([]*store.Delivery, error) { return nil, live.CheckOpen(j) }); !errors.Is(err, live.ErrEndedElsewhere) {
		t.Errorf("b's late end: %v, want errEndedElsewhere", err)
	}
	if err := svc.EndOrphans(); err != nil {
		t.Fatal(err)
	}
	sig.mu.Lock()
	defer sig.mu.Unlock()
	if len(sig.finished) != 1 || sig.finished[0] != store.StatusError {
		t.Errorf("finished %v, want one error", sig.finished)
	}
}

// TestEndOrphansDropsUnredacted: the session a stopped node ran with
// pii_redaction never had its recording blanked (its end would have): the
// survivor ends it as error 503 without keeping the recording.
func TestEndOrphansDropsUnredacted(t *testing.T) {
	dsn := pgtest.StartDatabase(t)
	p, err := params.DecodeLiveOptions(map[string]any{"pii_redaction": true})
	if err != nil {
		t.Fatal(err)
	}
	pcm, format := speechPCM(t, "ljspeech-LJ001-0002.wav")
	if err := p.SetFormat(params.EncodingPCM, 16, format.SampleRate, 1); err != nil {
		t.Fatal(err)
	}
	raw, _ := json.Marshal(p)
	// Parameters that cannot be read may have asked for redaction: that
	// recording is not kept either.
	for i, stored := range [][]byte{raw, []byte(`{"sample_rate":22050}`)} {
		a, b := openPG(t, dsn, fmt.Sprintf("a%d", i)), openPG(t, dsn, fmt.Sprintf("b%d", i))
		a.StaleAfter = 300 * time.Millisecond
		endOrphanDropped(t, a, b, fmt.Sprintf("a%d", i), stored, pcm[:32000], format)
	}
}

// endOrphanDropped places a live session with stored params on b, with
// audio in its recording, and checks that a, once b counts as stopped,
// ends it as error without keeping the recording.
func endOrphanDropped(t *testing.T, a, b live.StoreCluster, nodeA string, stored, pcm []byte, format media.Format) {
	t.Helper()
	if err := b.DB.Cluster().Heartbeat(store.Node{LiveCapacity: 1, LiveFree: 1}); err != nil {
		t.Fatal(err)
	}
	id := uuid.NewString()
	blob := "live-" + id + ".wav"
	job := &store.Job{ID: id, Account: "acme", Kind: store.KindLive, Status: store.StatusProcessing,
		CreatedAt: time.Now().UTC(), Blob: blob, Params: stored}
	if _, err := b.Place(job, 1, false); err != nil {
		t.Fatal(err)
	}
	if _, err := b.AppendBlob(blob, 0, media.AppendWAVHeader(nil, format, -1), pcm); err != nil {
		t.Fatal(err)
	}
	svc := live.NewClusterService(a.DB, live.Deps{Cluster: a, NodeID: nodeA, Signals: &finishedSignals{}})
	var j *store.Job
	for deadline := time.Now().Add(30 * time.Second); ; {
		if err := svc.EndOrphans(); err != nil {
			t.Fatal(err)
		}
		var err error
		if j, err = a.DB.Job(id); err != nil {
			t.Fatal(err)
		}
		if j.Status != store.StatusProcessing {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the session of a stopped node still processing after 30s")
		}
		time.Sleep(50 * time.Millisecond) // polling until b counts as stopped
	}
	if _, err := a.DB.OpenBlob(blob); j.Status != store.StatusError || j.Blob != "" || !errors.Is(err, store.ErrNotFound) {
		t.Errorf("params %.40s: ended %s naming %q, the recording %v; want error, no recording kept", stored, j.Status, j.Blob, err)
	}
}
