package sealed_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/earshot-dev/earshot/store"
	"github.com/earshot-dev/earshot/store/sealed"
)

// content is what fill puts in a store: jobs' results, an upload's file
// name and a blob.
type content struct {
	results map[string][]byte
	blob    []byte
}

// fill puts three jobs, an upload and a blob in s: five data keys.
func fill(t *testing.T, s *sealed.Store) content {
	t.Helper()
	c := content{results: map[string][]byte{}, blob: make([]byte, 2*sealed.ChunkSize+17)}
	_, _ = rand.Read(c.blob)
	for i := range 3 {
		id := fmt.Sprintf("j%d", i)
		c.results[id] = fmt.Appendf(nil, `{"words":"rotate me %d"}`, i)
		if err := s.CreateJob(&store.Job{ID: id, Account: "acme", Kind: store.KindPreRecorded, Status: store.StatusDone,
			CreatedAt: time.Now(), Result: c.results[id]}); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.PutUpload(&store.Upload{ID: "u1", Account: "acme", Filename: "call.wav", Extension: "wav", Size: 10,
		CreatedAt: time.Now(), Blob: "blob1"}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.WriteBlob("blob1", bytes.NewReader(c.blob), 1<<30); err != nil {
		t.Fatal(err)
	}
	return c
}

// readBack fails t unless every job, the upload and the blob of c read
// back identical from s.
func readBack(t *testing.T, s *sealed.Store, c content) {
	t.Helper()
	for id, want := range c.results {
		j, err := s.Job(id)
		if err != nil || !bytes.Equal(j.Result, want) {
			t.Fatalf("job %s: %v %s; want %s", id, err, j.Result, want)
		}
	}
	if u, err := s.Upload("u1"); err != nil || u.Filename != "call.wav" {
		t.Fatalf("upload: %+v %v", u, err)
	}
	if b, err := readAll(s, "blob1"); err != nil || !bytes.Equal(b, c.blob) {
		t.Fatalf("blob: %d bytes, %v; want %d", len(b), err, len(c.blob))
	}
}

// wrapsOf counts a keyring file's entries by the id of their wrapping key.
func wrapsOf(t *testing.T, dir string) (map[string]int, *sealed.Rotation) {
	t.Helper()
	entries, rot, err := sealed.ReadKeyring(filepath.Join(dir, sealed.KeyringFile))
	if err != nil {
		t.Fatal(err)
	}
	n := map[string]int{}
	for _, e := range entries {
		n[e.KEK]++
	}
	return n, rot
}

// TestRotate: a rotation re-wraps every data key under the new key and
// clears the header; the store then opens with the new key alone (the old
// key's file gone) and reads everything back, and refuses the old key.
func TestRotate(t *testing.T) {
	keys := t.TempDir()
	a, b := newKEK(t, keys, "a"), newKEK(t, keys, "b")
	dir := t.TempDir()
	s, _, err := openPair(t, dir, a)
	if err != nil {
		t.Fatal(err)
	}
	c := fill(t, s)
	n, err := s.Rotate(t.Context(), b)
	if err != nil || n != 5 {
		t.Fatalf("rotate: %d re-wrapped, %v; want 5", n, err)
	}
	if wraps, rot := wrapsOf(t, dir); wraps[b.ID()] != 5 || len(wraps) != 1 || rot != nil {
		t.Fatalf("after rotation: wraps %v, rotation %+v; want 5 under %s, none in progress", wraps, rot, b.ID())
	}
	readBack(t, s, c)
	// A job created after the rotation is under the new key too.
	if err := s.CreateJob(&store.Job{ID: "late", Account: "acme", Kind: store.KindPreRecorded, Status: store.StatusQueued, CreatedAt: time.Now()}); err != nil {
		t.Fatal(err)
	}
	s.Close()
	if wraps, _ := wrapsOf(t, dir); wraps[b.ID()] != 6 || len(wraps) != 1 {
		t.Fatalf("after a new job: wraps %v; want 6 under %s", wraps, b.ID())
	}
	if err := os.Remove(a.Path()); err != nil {
		t.Fatal(err)
	}
	s2, _, err := openPair(t, dir, b)
	if err != nil {
		t.Fatalf("open with the new key alone: %v", err)
	}
	readBack(t, s2, c)
	s2.Close()
	if _, _, err := openPair(t, dir, a); !errors.Is(err, store.ErrKeyMissing) {
		t.Fatalf("open with the old key after the rotation: %v; want ErrKeyMissing", err)
	}
}

// TestRotateResume: a rotation stopped after N re-wraps, for every N (and
// with a kill between a re-wrap's two slot writes), leaves a store that
// reads everything with both keys, and a restart configured with either
// key alone resumes it from the header (reading the other key's file) to
// every data key under the new key, the header cleared.
func TestRotateResume(t *testing.T) {
	keys := t.TempDir()
	a, b := newKEK(t, keys, "a"), newKEK(t, keys, "b")
	tmpl := t.TempDir()
	s, _, err := openPair(t, tmpl, a)
	if err != nil {
		t.Fatal(err)
	}
	c := fill(t, s)
	s.Close()
	const total = 5
	for stop := 0; stop < total; stop++ {
		for _, tc := range []struct {
			name    string
			restart *sealed.KEK
			torn    bool
		}{{"new key", b, false}, {"old key", a, false}, {"new key, torn put", b, true}} {
			t.Run(fmt.Sprintf("stop %d, %s", stop, tc.name), func(t *testing.T) {
				dir := filepath.Join(t.TempDir(), "data")
				if err := os.CopyFS(dir, os.DirFS(tmpl)); err != nil {
					t.Fatal(err)
				}
				s, _, err := openPair(t, dir, a)
				if err != nil {
					t.Fatal(err)
				}
				ctx, cancel := context.WithCancel(t.Context())
				sealed.OnRewrap(s, func(n int) {
					if n == stop {
						cancel()
					}
				})
				if stop == 0 {
					cancel()
				}
				if n, err := s.Rotate(ctx, b); !errors.Is(err, context.Canceled) || n != stop {
					t.Fatalf("rotation stopped after %d: %d re-wrapped, %v", stop, n, err)
				}
				wraps, rot := wrapsOf(t, dir)
				if wraps[b.ID()] != stop || wraps[a.ID()] != total-stop || rot == nil || rot.To != b.ID() {
					t.Fatalf("stopped: wraps %v, rotation %+v; want %d under the new key", wraps, rot, stop)
				}
				readBack(t, s, c) // both keys serve meanwhile
				s.Close()
				if tc.torn {
					entries, _, _ := sealed.ReadKeyring(filepath.Join(dir, sealed.KeyringFile))
					for id, e := range entries {
						if e.KEK == a.ID() {
							if err := sealed.AppendRewrapped(filepath.Join(dir, sealed.KeyringFile), id, e, a, b); err != nil {
								t.Fatal(err)
							}
							break
						}
					}
				}
				s, _, err = openPair(t, dir, tc.restart)
				if err != nil {
					t.Fatalf("restart with %s alone: %v", tc.name, err)
				}
				sealed.WaitResumed(s)
				readBack(t, s, c)
				s.Close()
				if wraps, rot := wrapsOf(t, dir); wraps[b.ID()] != total || len(wraps) != 1 || rot != nil {
					t.Fatalf("resumed: wraps %v, rotation %+v; want all %d under %s, none in progress", wraps, rot, total, b.ID())
				}
				s, _, err = openPair(t, dir, b)
				if err != nil {
					t.Fatalf("open with the new key after the resumed rotation: %v", err)
				}
				readBack(t, s, c)
			})
		}
	}
}
