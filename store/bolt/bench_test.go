package bolt_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/earshot-dev/earshot/store/bolt"

	"github.com/earshot-dev/earshot/store"
	"github.com/earshot-dev/earshot/store/storetest"
)

// benchJob is a done pre-recorded job with a realistic result.
func benchJob(id string, created time.Time) *store.Job {
	name, dur, ch := "call.wav", 61.2, 1
	j := newJob(id, "acme", store.KindPreRecorded, store.StatusDone, created)
	j.CompletedAt = created.Add(20 * time.Second)
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

// BenchmarkJob measures the read path behind GET /v2/pre-recorded/{id}.
func BenchmarkJob(b *testing.B) {
	db := storetest.Open(b)
	for i := range 1000 {
		mustCreate(b, db, benchJob(fmt.Sprintf("job-%04d", i), t0.Add(time.Duration(i)*time.Second)))
	}
	b.ReportAllocs()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		i := 0
		for pb.Next() {
			if _, err := db.Job(fmt.Sprintf("job-%04d", i%1000)); err != nil {
				b.Error(err)
				return
			}
			i++
		}
	})
}

// BenchmarkListJobs measures one page of 20 from 1000 jobs.
func BenchmarkListJobs(b *testing.B) {
	db := storetest.Open(b)
	for i := range 1000 {
		mustCreate(b, db, benchJob(fmt.Sprintf("job-%04d", i), t0.Add(time.Duration(i)*time.Second)))
	}
	q := store.ListQuery{Account: "acme", Kind: store.KindPreRecorded, Statuses: []store.Status{store.StatusDone}, Offset: 100, Limit: 20}
	for b.Loop() {
		if got, err := db.ListJobs(q); err != nil || len(got) != 20 {
			b.Fatal(len(got), err)
		}
	}
}

// BenchmarkCreateJob measures a durable create (fsync on).
func BenchmarkCreateJob(b *testing.B) {
	db, err := bolt.Open(b.TempDir(), nil)
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	i := 0
	for b.Loop() {
		j := benchJob(fmt.Sprintf("job-%d", i), t0.Add(time.Duration(i)))
		j.Status, j.Result = store.StatusQueued, nil
		if err := db.CreateJob(j); err != nil {
			b.Fatal(err)
		}
		i++
	}
}

// BenchmarkAuthenticate measures the key check on every request.
func BenchmarkAuthenticate(b *testing.B) {
	db := storetest.Open(b)
	secret, _, err := db.CreateKey("acme", store.KeyGrant{})
	if err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if _, err := db.Authenticate(secret); err != nil {
				b.Error(err)
				return
			}
		}
	})
}

// BenchmarkAuditAppend measures the audit trail's append with fsync (as
// the daemon runs), in the batches the trail's queue makes (audit.Trail:
// 1 when requests come one at a time, up to 512 under load), and reports
// the database's bytes per entry, the basis of audit.max_entries' default.
func BenchmarkAuditAppend(b *testing.B) {
	for _, batch := range []int{1, 64, 512} {
		b.Run(fmt.Sprintf("batch=%d", batch), func(b *testing.B) {
			dir := b.TempDir()
			db, err := bolt.Open(dir, nil)
			if err != nil {
				b.Fatal(err)
			}
			defer db.Close()
			entries := 0
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				es := make([]*store.AuditEntry, batch)
				for j := range es {
					es[j] = &store.AuditEntry{KeyID: "3f9a1c2b7d4e", Account: "acme", Source: "10.20.30.40:51234",
						Action: store.AuditPreRecordedRead, Object: "0b6f3c1e-8a4d-4f2b-9c7e-5d1a2b3c4d5e", Status: 200}
				}
				if err := db.AppendAudit(es...); err != nil {
					b.Fatal(err)
				}
				entries += batch
			}
			b.StopTimer()
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(entries), "ns/entry")
			if fi, err := os.Stat(filepath.Join(dir, "earshot.db")); err == nil && entries >= 10000 {
				b.ReportMetric(float64(fi.Size())/float64(entries), "bytes/entry")
			}
		})
	}
}
