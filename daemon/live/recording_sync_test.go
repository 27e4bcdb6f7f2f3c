package live_test

import (
	"bytes"
	"errors"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/earshot-dev/earshot/daemon/live"
	"github.com/earshot-dev/earshot/ingest/media"
	"github.com/earshot-dev/earshot/recognizer/recognizertest"
	"github.com/earshot-dev/earshot/store"
	"github.com/earshot-dev/earshot/store/postgres/pgtest"
)

// speechPCM returns the 16-bit PCM of a real speech clip and its format.
func speechPCM(t *testing.T, file string) ([]byte, media.Format) {
	t.Helper()
	f, err := os.Open(filepath.Join(recognizertest.SpeechDir(t), file))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	format, _, err := media.ReadWAVHeader(f)
	if err != nil {
		t.Fatal(err)
	}
	pcm, err := io.ReadAll(f)
	if err != nil {
		t.Fatal(err)
	}
	pcm = pcm[:len(pcm)-len(pcm)%format.FrameSize()]
	return pcm, format
}

func blobBytes(t *testing.T, c live.StoreCluster, name string) []byte {
	t.Helper()
	r, err := c.DB.OpenBlob(name)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	b, err := io.ReadAll(r)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestRecordingSync: while a session records, its recording reaches the
// shared store in rounds, header first as a chunk of its own; the end
// stores the rest and the real header, so the stored blob is the local
// file byte for byte, and the local file is removed. A store that holds
// another size than the sync expects (an append it did not make) gives
// the sync up: finish reports false, for the end to store the file whole.
func TestRecordingSync(t *testing.T) {
	c := openPG(t, pgtest.StartDatabase(t), "a")
	pcm, format := speechPCM(t, "ljspeech-LJ001-0001.wav") // 9.65 s: more than a chunk
	svc := live.NewClusterService(nil, live.Deps{Cluster: c, RecordingSync: 20 * time.Millisecond})
	log := slog.New(slog.DiscardHandler)
	record := func(name string) (*live.Recording, *live.RecordingSync, string) {
		path := filepath.Join(t.TempDir(), name)
		rec, err := live.CreateRecording(live.PlainFiles, path, format)
		if err != nil {
			t.Fatal(err)
		}
		return rec, svc.NewRecordingSync(name, path, log), path
	}
	// waitStored polls the blob's size until it reaches n.
	waitStored := func(name string, n int64) {
		t.Helper()
		deadline := time.Now().Add(30 * time.Second)
		for {
			size, err := c.BlobSize(name)
			if err == nil && size >= n {
				return
			}
			if err != nil && !errors.Is(err, store.ErrNotFound) {
				t.Fatal(err)
			}
			if time.Now().After(deadline) {
				t.Fatalf("blob %s holds %d bytes after 30s, want %d (%v)", name, size, n, err)
			}
			time.Sleep(10 * time.Millisecond) // polling the store
		}
	}

	rec, rs, path := record("live-sync.wav")
	go rs.Run()
	half := len(pcm) / 2
	half -= half % format.FrameSize()
	for i := 0; i < half; i += 3200 {
		if err := rec.Write(pcm[i:min(i+3200, half)]); err != nil {
			t.Fatal(err)
		}
		rs.Wrote(media.WAVHeaderSize + rec.Audio())
	}
	waitStored("live-sync.wav", int64(media.WAVHeaderSize+half))
	if got := blobBytes(t, c, "live-sync.wav"); !bytes.Equal(got[media.WAVHeaderSize:], pcm[:half]) {
		t.Fatalf("stored while recording: %d bytes, not the %d written", len(got), media.WAVHeaderSize+half)
	}
	if err := rec.Write(pcm[half:]); err != nil {
		t.Fatal(err)
	}
	rs.Wrote(media.WAVHeaderSize + rec.Audio())
	rs.Halt()
	if _, err := rec.Finalize(format); err != nil {
		t.Fatal(err)
	}
	local, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !rs.Finish(format, rec.Audio()) {
		t.Fatal("finish = false with the store up")
	}
	if got := blobBytes(t, c, "live-sync.wav"); !bytes.Equal(got, local) {
		t.Errorf("stored recording: %d bytes, not the local file's %d", len(got), len(local))
	}
	if _, err := os.Stat(path); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("local recording left after finish: %v", err)
	}

	// Another writer appended to the blob: the sync gives up.
	rec, rs, _ = record("live-other.wav")
	if err := rec.Write(pcm[:6400]); err != nil {
		t.Fatal(err)
	}
	rs.Wrote(media.WAVHeaderSize + rec.Audio())
	if err := rs.Round(); err != nil {
		t.Fatal(err)
	}
	if _, err := c.AppendBlob("live-other.wav", media.WAVHeaderSize+6400, pcm[:320]); err != nil {
		t.Fatal(err)
	}
	if err := rec.Write(pcm[6400:12800]); err != nil {
		t.Fatal(err)
	}
	rs.Wrote(media.WAVHeaderSize + rec.Audio())
	if err := rs.Round(); !errors.Is(err, store.ErrExists) {
		t.Errorf("round after another append: %v, want store.ErrExists", err)
	}
	if _, err := rec.Finalize(format); err != nil {
		t.Fatal(err)
	}
	if rs.Finish(format, rec.Audio()) {
		t.Error("finish = true after the sync gave up")
	}
}

// TestRecordingSyncRewrite: a recording blanked in place after part of it
// was synced (PII redaction at the end) is not finished chunk by chunk
// (the synced chunks hold the original): rewrite halts the sync, finish
// reports false, and storing the file whole leaves the store with the
// blanked recording only.
func TestRecordingSyncRewrite(t *testing.T) {
	c := openPG(t, pgtest.StartDatabase(t), "a")
	pcm, format := speechPCM(t, "ljspeech-LJ001-0001.wav")
	svc := live.NewClusterService(nil, live.Deps{Cluster: c, RecordingSync: time.Hour})
	path := filepath.Join(t.TempDir(), "live-blank.wav")
	rec, err := live.CreateRecording(live.PlainFiles, path, format)
	if err != nil {
		t.Fatal(err)
	}
	rs := svc.NewRecordingSync("live-blank.wav", path, slog.New(slog.DiscardHandler))
	go rs.Run()
	if err := rec.Write(pcm); err != nil {
		t.Fatal(err)
	}
	rs.Wrote(media.WAVHeaderSize + rec.Audio())
	if err := rs.Round(); err != nil { // the ticker (an hour) never fires: the sync is idle
		t.Fatal(err)
	}
	if got := blobBytes(t, c, "live-blank.wav"); !bytes.Equal(got[media.WAVHeaderSize:], pcm) {
		t.Fatalf("synced %d bytes, not the recording's %d", len(got), media.WAVHeaderSize+len(pcm))
	}
	if _, err := rec.Finalize(format); err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	if err := media.Blank(f, []media.Span{{Start: 0, End: 100}}, media.FillSilence); err != nil {
		t.Fatal(err)
	}
	f.Close()
	rs.Rewrite()
	if rs.Finish(format, rec.Audio()) {
		t.Fatal("finish = true after rewrite: the synced original would stay")
	}
	local, _ := os.ReadFile(path)
	lf, _ := os.Open(path)
	defer lf.Close()
	if _, err := c.DB.WriteBlob("live-blank.wav", lf, 0); err != nil {
		t.Fatal(err)
	}
	got := blobBytes(t, c, "live-blank.wav")
	if !bytes.Equal(got, local) || bytes.Contains(got, pcm[1000:1100]) {
		t.Errorf("stored recording is not the blanked file (%d bytes, local %d)", len(got), len(local))
	}
}
