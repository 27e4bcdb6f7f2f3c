package sealed_test

import (
	"bytes"
	"crypto/rand"
	"encoding/json"
	"errors"
	"io"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/earshot-dev/earshot/store"
	"github.com/earshot-dev/earshot/store/sealed"
)

// TestSealExisting: what a data dir held before sealing was turned on (two
// jobs, an upload, their audio, one file shared by the upload and the job
// made from it) is read as it is, and SealExisting seals it in place: every
// record and blob reads back the same through the layer, the backend holds
// none of it in clear, the clear files are overwritten with zeros once
// nothing names them (bbolt), and a second run finds nothing left. The
// states a kill leaves are finished: a sealed copy whose key was already
// re-wrapped under the blob's name (which reads as an integrity failure
// until then) goes in its place, one whose key was not is made again.
// Before (until 2026-11-30) such data stayed in clear until it expired.
func TestSealExisting(t *testing.T) {
	eachBackend(t, func(t *testing.T, inner listingStore) {
		audio := map[string][]byte{}
		for _, name := range []string{"u1", "j1blob"} {
			audio[name] = make([]byte, 150_000)
			rand.Read(audio[name])
			if _, err := inner.WriteBlob(name, bytes.NewReader(audio[name]), 0); err != nil {
				t.Fatal(err)
			}
		}
		if err := inner.LinkBlob("u1", "j2blob"); err != nil { // a job made from the upload
			t.Fatal(err)
		}
		audio["j2blob"] = audio["u1"]
		now := time.Now().UTC().Truncate(time.Second)
		jobs := map[string]*store.Job{}
		for id, blob := range map[string]string{"j1": "j1blob", "j2": "j2blob"} {
			j := &store.Job{ID: id, Account: "acme", Kind: store.KindPreRecorded, Status: store.StatusDone, CreatedAt: now, CompletedAt: now,
				Blob: blob, Result: json.RawMessage(`{"words":"ZEBRAQUOKKA result of ` + id + `"}`), CustomMetadata: store.Metadata{"ticket": "OKAPI-" + id}}
			if err := inner.CreateJob(j); err != nil {
				t.Fatal(err)
			}
			jobs[id] = j
		}
		// Callbacks still being retried: one of a job, one without.
		next := now.Add(time.Hour)
		deliveries := map[string]*store.Delivery{
			"d1": {ID: "d1", JobID: "j1", Account: "acme", URL: "http://hooks.local/a", Body: []byte(`{"transcript":"WOMBAT of j1"}`), Attempts: 3, NextAttempt: next, LastError: "status 503"},
			"d2": {ID: "d2", Account: "acme", URL: "http://hooks.local/b", Body: []byte(`{"transcript":"WOMBAT alone"}`), Attempts: 1, NextAttempt: next},
		}
		for _, d := range deliveries {
			c := *d
			if err := inner.EnqueueDelivery(&c); err != nil {
				t.Fatal(err)
			}
		}
		if err := inner.PutUpload(&store.Upload{ID: "u1", Account: "acme", Filename: "PANGOLIN-call.wav", Extension: "wav", Size: 150_000, Channels: 1, CreatedAt: now, Blob: "u1"}); err != nil {
			t.Fatal(err)
		}
		// The clear files, held open to see them zeroed (bbolt).
		held := map[string]*os.File{}
		for _, name := range []string{"u1", "j1blob"} {
			if p, ok := inner.LocalBlobPath(name); ok {
				f, err := os.Open(p)
				if err != nil {
					t.Fatal(err)
				}
				defer f.Close()
				held[name] = f
			}
		}

		s, _ := sealRing(t, inner)
		check := func(when string) {
			t.Helper()
			for name, want := range audio {
				r, err := s.OpenBlob(name)
				if err != nil {
					t.Fatalf("%s: blob %s: %v", when, name, err)
				}
				got, err := io.ReadAll(r)
				r.Close()
				if err != nil || !bytes.Equal(got, want) {
					t.Fatalf("%s: blob %s: %d bytes, %v; want its %d", when, name, len(got), err, len(want))
				}
			}
			for id, want := range jobs {
				got, err := s.Job(id)
				if err != nil || string(got.Result) != string(want.Result) || got.CustomMetadata["ticket"] != want.CustomMetadata["ticket"] {
					t.Fatalf("%s: job %s: %v %s %v", when, id, err, got.Result, got.CustomMetadata)
				}
			}
			if u, err := s.Upload("u1"); err != nil || u.Filename != "PANGOLIN-call.wav" {
				t.Fatalf("%s: upload: %v %+v", when, err, u)
			}
			due, err := s.DueDeliveries(next, 0)
			if err != nil || len(due) != len(deliveries) {
				t.Fatalf("%s: deliveries: %d, %v", when, len(due), err)
			}
			for _, got := range due {
				want := deliveries[got.ID]
				if want == nil || string(got.Body) != string(want.Body) || got.Attempts != want.Attempts || !got.NextAttempt.Equal(want.NextAttempt) || got.LastError != want.LastError {
					t.Fatalf("%s: delivery %+v; want %+v", when, got, want)
				}
			}
		}
		check("written in clear, read through the layer")
		if b, j, d, err := s.Unsealed(t.Context()); err != nil || b != 3 || j != 2 || d != 2 {
			t.Errorf("Unsealed = %d blobs, %d jobs, %d callbacks, %v; want 3, 2, 2", b, j, d, err)
		}

		// A run killed after j1blob's key was written, and one killed
		// before u1's was.
		if _, err := s.WriteBlob("j1blob.sealing", bytes.NewReader(audio["j1blob"]), 0); err != nil {
			t.Fatal(err)
		}
		if err := sealed.CopyBlobKey(s, "j1blob.sealing", "j1blob"); err != nil {
			t.Fatal(err)
		}
		if r, err := s.OpenBlob("j1blob"); err == nil {
			_, err = io.ReadAll(r)
			r.Close()
			if !errors.Is(err, store.ErrIntegrity) {
				t.Fatalf("j1blob with its key and clear bytes: %v, want an integrity failure", err)
			}
		}
		if _, err := s.WriteBlob("u1.sealing", strings.NewReader("a copy cut short"), 0); err != nil {
			t.Fatal(err)
		}

		rep, err := s.SealExisting(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		wantScrubbed := 0
		if len(held) > 0 {
			wantScrubbed = 2 // j1blob's file, and u1's once j2blob no longer names it
		}
		if rep != (sealed.SealReport{Jobs: 2, Uploads: 1, Blobs: 2, Scrubbed: wantScrubbed, Deliveries: 2}) {
			t.Errorf("report %+v", rep)
		}
		check("sealed in place")
		if b, j, d, err := s.Unsealed(t.Context()); err != nil || b != 0 || j != 0 || d != 0 {
			t.Errorf("after: Unsealed = %d blobs, %d jobs, %d callbacks, %v; want none", b, j, d, err)
		}

		// Nothing in clear in the backend.
		for id := range jobs {
			raw, err := inner.Job(id)
			if err != nil {
				t.Fatal(err)
			}
			if b, _ := json.Marshal(raw); bytes.Contains(b, []byte("ZEBRAQUOKKA")) || bytes.Contains(b, []byte("OKAPI")) {
				t.Errorf("job %s in clear in the backend: %s", id, b)
			}
		}
		due, err := inner.DueDeliveries(next, 0)
		if err != nil || len(due) != len(deliveries) {
			t.Fatalf("backend's deliveries: %d, %v", len(due), err)
		}
		for _, d := range due {
			if bytes.Contains(d.Body, []byte("WOMBAT")) {
				t.Errorf("delivery %s's body in clear in the backend: %s", d.ID, d.Body)
			}
		}
		if u, _ := inner.Upload("u1"); u == nil || strings.Contains(u.Filename, "PANGOLIN") {
			t.Errorf("upload's file name in clear in the backend: %+v", u)
		}
		for name, want := range audio {
			r, err := inner.OpenBlob(name)
			if err != nil {
				t.Fatal(err)
			}
			raw, _ := io.ReadAll(r)
			r.Close()
			if bytes.Contains(raw, want[1000:1064]) {
				t.Errorf("blob %s in clear in the backend", name)
			}
		}
		inner.BlobNames(func(n string) {
			if strings.HasSuffix(n, ".sealing") {
				t.Errorf("left %s", n)
			}
		})
		for name, f := range held {
			b := make([]byte, 150_000)
			if _, err := f.ReadAt(b, 0); err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(b, make([]byte, len(b))) {
				t.Errorf("the clear file of %s was not zeroed", name)
			}
		}
		if rep, err := s.SealExisting(t.Context()); err != nil || rep != (sealed.SealReport{}) {
			t.Errorf("second run: %+v, %v; want nothing to seal", rep, err)
		}
	})
}
