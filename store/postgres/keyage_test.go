package postgres_test

import (
	"bytes"
	"io"
	"slices"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/earshot-dev/earshot/store"
	"github.com/earshot-dev/earshot/store/postgres"
	"github.com/earshot-dev/earshot/store/sealed"
)

// TestKeySweepSparesOtherNodesWrites: node B is writing a sealed blob (its
// data key made, the blob not yet named: that happens when the write
// commits) while node A starts (SweepBlobs) and expires a job (ExpireJobs):
// neither destroys B's key, and the blob reads back on A once written. A
// key whose blob is gone is destroyed once it is older than A's
// sweep_after. Before, both sweeps took every key without its blob, so a
// node's restart or retention run during another node's upload or
// recording commit left that blob sealed under a destroyed key:
// unreadable.
func TestKeySweepSparesOtherNodesWrites(t *testing.T) {
	dsn := pg.NewDatabase(t)
	kek := keyFile(t, t.TempDir(), "kek")
	dbA, err := postgres.Open(t.Context(), dsn, &postgres.Options{NodeID: "a", SweepAfter: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { dbA.Close() })
	a, err := sealed.Open(dbA, sealed.Options{Keys: []*sealed.KEK{kek}, Keyring: dbA.Keyring()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { a.Close() })
	dbB := openNode(t, dsn, "b")
	b, err := sealed.Open(dbB, sealed.Options{Keys: []*sealed.KEK{kek}, Keyring: dbB.Keyring()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	conn, err := pgx.Connect(t.Context(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close(t.Context()) })
	hasKey := func(id string) bool {
		var n int
		if err := conn.QueryRow(t.Context(), "SELECT count(*) FROM data_keys WHERE id = $1", id).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n == 1
	}

	// B's write, held after its first bytes until A has swept.
	audio := bytes.Repeat([]byte("RIFF call audio "), 8192) // 128 KiB, more than one chunk
	pr, pw := io.Pipe()
	t.Cleanup(func() { pw.CloseWithError(io.ErrUnexpectedEOF) }) // before B closes, should the test stop early
	written := make(chan error, 1)
	go func() {
		_, err := b.WriteBlob("call.wav", pr, 0)
		written <- err
	}()
	if _, err := pw.Write(audio[:1024]); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(10 * time.Second); !hasKey("b:call.wav"); {
		if time.Now().After(deadline) {
			t.Fatal("B's data key for call.wav never reached the keyring")
		}
		time.Sleep(10 * time.Millisecond) // polling a real database
	}

	old := &store.Job{ID: "old", Account: "acme", Kind: store.KindPreRecorded, Status: store.StatusDone, CreatedAt: time.Now().Add(-48 * time.Hour)}
	if err := a.CreateJob(old); err != nil {
		t.Fatal(err)
	}
	if _, err := a.SweepBlobs(); err != nil {
		t.Fatal(err)
	}
	if ids, err := a.ExpireJobs(store.KindPreRecorded, store.Cutoff{Before: time.Now().Add(-time.Hour)}, 10); err != nil || !slices.Equal(ids, []string{"old"}) {
		t.Fatalf("ExpireJobs = %v, %v", ids, err)
	}
	if !hasKey("b:call.wav") {
		t.Error("node A's sweeps destroyed the data key of the blob node B is writing")
	}
	if _, err := pw.Write(audio[1024:]); err != nil {
		t.Fatal(err)
	}
	pw.Close()
	if err := <-written; err != nil {
		t.Fatal(err)
	}
	r, err := a.OpenBlob("call.wav")
	if err != nil {
		t.Fatalf("B's blob opened on A: %v", err)
	}
	got, err := io.ReadAll(r)
	r.Close()
	if err != nil || !bytes.Equal(got, audio) {
		t.Fatalf("B's blob read on A: %d bytes, %v", len(got), err)
	}

	// A key whose blob is gone (removed under the layer, as a crash
	// between the removal and the key's destruction leaves it) goes once
	// it is older than sweep_after.
	if _, err := b.WriteBlob("orphan.wav", bytes.NewReader(audio[:100]), 0); err != nil {
		t.Fatal(err)
	}
	if err := dbB.RemoveBlob("orphan.wav"); err != nil {
		t.Fatal(err)
	}
	if _, err := a.SweepBlobs(); err != nil || !hasKey("b:orphan.wav") {
		t.Fatalf("a young key whose blob is gone: sweep %v, kept %v; want kept", err, hasKey("b:orphan.wav"))
	}
	if _, err := conn.Exec(t.Context(), "UPDATE data_keys SET created_ns = created_ns - $1 WHERE id = 'b:orphan.wav'", (2 * time.Hour).Nanoseconds()); err != nil {
		t.Fatal(err)
	}
	if _, err := a.SweepBlobs(); err != nil || hasKey("b:orphan.wav") {
		t.Fatalf("a key whose blob is gone, older than sweep_after: sweep %v, kept %v; want destroyed", err, hasKey("b:orphan.wav"))
	}
	if !hasKey("b:call.wav") {
		t.Error("the sweep destroyed the key of a blob that exists")
	}
}
