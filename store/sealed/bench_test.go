package sealed_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"path/filepath"
	"testing"
	"time"

	"github.com/earshot-dev/earshot/store"
	"github.com/earshot-dev/earshot/store/bolt"
	"github.com/earshot-dev/earshot/store/sealed"
)

// openSynced opens a bbolt store in a temp dir with its fsyncs on, sealed
// when seal is set (its keyring synced too): the durability the daemon runs
// with, which is what the sealed layer's costs are measured against.
func openSynced(b *testing.B, seal bool) store.Store {
	b.Helper()
	dir := b.TempDir()
	db, err := bolt.Open(filepath.Join(dir, "db"), nil)
	if err != nil {
		b.Fatal(err)
	}
	if !seal {
		b.Cleanup(func() { db.Close() })
		return db
	}
	ring, err := sealed.OpenFileKeyring(filepath.Join(dir, sealed.KeyringFile), false)
	if err != nil {
		b.Fatal(err)
	}
	s, err := sealed.Open(db, sealed.Options{Keys: []*sealed.KEK{newKEK(b, dir, "kek")}, Keyring: ring})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { s.Close() })
	return s
}

func benchJob(id string) *store.Job {
	name, dur, ch := "call.wav", 61.2, 1
	now := time.Now().UTC()
	j := &store.Job{ID: id, Account: "acme", Kind: store.KindPreRecorded, Status: store.StatusDone, CreatedAt: now, CompletedAt: now}
	j.CustomMetadata = map[string]any{"team": "blue", "ticket": 12345.0}
	j.Params = json.RawMessage(`{"audio_url":"https://example.com/a.wav","language_config":{"languages":["en"]},"diarization":false}`)
	j.File = &store.File{ID: "f-" + id, Filename: &name, AudioDuration: &dur, Channels: &ch}
	var utts []map[string]any
	for i := range 20 {
		utts = append(utts, map[string]any{"start": float64(i) * 3, "end": float64(i)*3 + 2.5, "confidence": 0.8,
			"channel": 0, "text": "this is a sentence of about ten words spoken here"})
	}
	j.Result, _ = json.Marshal(map[string]any{"transcription": map[string]any{"utterances": utts}})
	j.PostSessionMetadata = map[string]any{}
	return j
}

// BenchmarkJob is the store's side of GET /v2/pre-recorded/{id}: one done
// job read again and again, plain and sealed.
func BenchmarkJob(b *testing.B) {
	for _, seal := range []bool{false, true} {
		b.Run(fmt.Sprintf("sealed=%v", seal), func(b *testing.B) {
			db := openSynced(b, seal)
			if err := db.CreateJob(benchJob("job-1")); err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			for b.Loop() {
				if _, err := db.Job("job-1"); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkUpload is the store's side of POST /v2/upload: a 2.1 MB blob
// written, read back whole (the probe), and the upload's record put.
func BenchmarkUpload(b *testing.B) {
	audio := bytes.Repeat([]byte("0123456789abcdef"), 2100_000/16)
	for _, seal := range []bool{false, true} {
		b.Run(fmt.Sprintf("sealed=%v", seal), func(b *testing.B) {
			db := openSynced(b, seal)
			b.SetBytes(int64(len(audio)))
			i := 0
			for b.Loop() {
				i++
				blob := fmt.Sprintf("upload-%d", i)
				if _, err := db.WriteBlob(blob, bytes.NewReader(audio), 0); err != nil {
					b.Fatal(err)
				}
				r, err := db.OpenBlob(blob)
				if err != nil {
					b.Fatal(err)
				}
				if _, err := io.Copy(io.Discard, r); err != nil {
					b.Fatal(err)
				}
				r.Close()
				u := &store.Upload{ID: fmt.Sprintf("u-%d", i), Account: "acme", Filename: "a.wav", Extension: "wav", Size: int64(len(audio)), CreatedAt: time.Now().UTC(), Blob: blob}
				if err := db.PutUpload(u); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkKeyringPut is one new data key made durable (FileKeyring.Put,
// synced).
func BenchmarkKeyringPut(b *testing.B) {
	ring, err := sealed.OpenFileKeyring(filepath.Join(b.TempDir(), sealed.KeyringFile), false)
	if err != nil {
		b.Fatal(err)
	}
	defer ring.Close()
	e := sealed.Entry{KEK: "0123abcd", Wrapped: bytes.Repeat([]byte{7}, 60)}
	i := 0
	for b.Loop() {
		i++
		if err := ring.Put(fmt.Sprintf("u:%d", i), e); err != nil {
			b.Fatal(err)
		}
	}
}
