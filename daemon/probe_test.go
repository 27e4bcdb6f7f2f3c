package daemon

import (
	"bytes"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/earshot-dev/earshot/errcode"
	"github.com/earshot-dev/earshot/ingest/media"
	"github.com/earshot-dev/earshot/recognizer/pipeline"
	"github.com/earshot-dev/earshot/store"
	"github.com/earshot-dev/earshot/store/sealed"
	"github.com/earshot-dev/earshot/store/storetest/memstore"
)

// countingStore counts the bytes read from its blobs.
type countingStore struct {
	store.Store
	n *int64
}

func (c countingStore) OpenBlob(name string) (store.BlobReader, error) {
	r, err := c.Store.OpenBlob(name)
	if err != nil {
		return nil, err
	}
	return countingBlob{r, c.n}, nil
}

type countingBlob struct {
	store.BlobReader
	n *int64
}

func (c countingBlob) Read(p []byte) (int, error) {
	n, err := c.BlobReader.Read(p)
	*c.n += int64(n)
	return n, err
}

// TestProbeBlobSealed: an upload's probe of a sealed WAV reads (decrypts)
// its first chunk only, not the whole blob, and finds what media.Probe
// finds in the clear file; a WAV over a bound is still refused; a FLAC (no
// WAV) is still probed, through a memory file for ffprobe.
func TestProbeBlobSealed(t *testing.T) {
	var read int64
	db := sealedCounting(t, &read)
	cfg := testConfig(t)
	d := &Daemon{cfg: cfg, db: db, pl: &pipeline.Transcriber{}}

	long := "../../shared/testdata/speech/ljspeech-LJ001-0007-to-0016-long.wav"
	mono := "../../shared/testdata/speech/ls-test-clean-1089-134691-0001.wav"
	flac := filepath.Join(t.TempDir(), "a.flac")
	if out, err := exec.Command("ffmpeg", "-nostdin", "-v", "error", "-i", mono, flac).CombinedOutput(); err != nil {
		t.Fatalf("ffmpeg: %v\n%s", err, out)
	}
	for _, tc := range []struct {
		path    string
		maxRead int64 // bytes of the sealed blob the probe may read
	}{
		{long, 2 * sealed.ChunkSize},
		{speech, 2 * sealed.ChunkSize},
		{flac, math.MaxInt64},
	} {
		t.Run(filepath.Base(tc.path), func(t *testing.T) {
			b, err := os.ReadFile(tc.path)
			if err != nil {
				t.Fatal(err)
			}
			want, err := media.Probe(t.Context(), tc.path, nil)
			if err != nil {
				t.Fatal(err)
			}
			name := "upload-" + filepath.Base(tc.path)
			size, err := db.WriteBlob(name, bytes.NewReader(b), 0)
			if err != nil {
				t.Fatal(err)
			}
			read = 0
			got, err := d.probeBlob(t.Context(), name, size)
			if err != nil || got != want {
				t.Fatalf("probeBlob = %+v, %v; want %+v", got, err, want)
			}
			if read > tc.maxRead {
				t.Errorf("probe read %d sealed bytes of a %d-byte blob, want at most %d", read, sealed.SealedSize(size), tc.maxRead)
			}
		})
	}

	// A bound still holds on the stream's path.
	d.pl.Media.MaxDuration = 5 * time.Second
	name := "upload-long"
	b, _ := os.ReadFile(long)
	size, err := db.WriteBlob(name, bytes.NewReader(b), 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := d.probeBlob(t.Context(), name, size); errcode.Status(err) != 413 {
		t.Fatalf("probeBlob of %s over a 5 s bound = %v (%d), want 413", long, err, errcode.Status(err))
	}
}

// sealedCounting is a sealed store over the in-memory one, counting the
// sealed bytes read from its blobs into read.
func sealedCounting(tb testing.TB, read *int64) *sealed.Store {
	db, _ := sealedOver(tb, countingStore{memstore.New(), read})
	return db
}

// sealedOver is a sealed store over inner, under a new key, with its
// keyring (in a temp dir: nothing under any data_dir); closed at the
// test's end.
func sealedOver(tb testing.TB, inner store.Store) (*sealed.Store, *sealed.FileKeyring) {
	tb.Helper()
	keyDir := tb.TempDir()
	if _, err := sealed.GenerateKeyFile(filepath.Join(keyDir, "k")); err != nil {
		tb.Fatal(err)
	}
	kek, err := sealed.LoadKeyFile(filepath.Join(keyDir, "k"))
	if err != nil {
		tb.Fatal(err)
	}
	ring, err := sealed.OpenFileKeyring(filepath.Join(keyDir, sealed.KeyringFile), true)
	if err != nil {
		tb.Fatal(err)
	}
	db, err := sealed.Open(inner, sealed.Options{Keys: []*sealed.KEK{kek}, Keyring: ring})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { db.Close() })
	return db, ring
}

// BenchmarkProbeBlobSealed: an upload's probe of sealbench's 2.1 MB WAV
// in a sealed store, from the stream (probeBlob) against the memory file
// copy it replaced (blobFile, then ProbeFile).
func BenchmarkProbeBlobSealed(b *testing.B) {
	var read int64
	db := sealedCounting(b, &read)
	d := &Daemon{cfg: Config{DataDir: b.TempDir()}, db: db, pl: &pipeline.Transcriber{}}
	wav, err := os.ReadFile("../../shared/testdata/speech/ljspeech-LJ001-0007-to-0016-long.wav")
	if err != nil {
		b.Fatal(err)
	}
	size, err := db.WriteBlob("upload-b", bytes.NewReader(wav), 0)
	if err != nil {
		b.Fatal(err)
	}
	b.Run("stream", func(b *testing.B) {
		for b.Loop() {
			if _, err := d.probeBlob(b.Context(), "upload-b", size); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("memfd", func(b *testing.B) {
		for b.Loop() {
			path, release, err := d.blobFile("upload-b")
			if err != nil {
				b.Fatal(err)
			}
			if _, err := d.pl.ProbeFile(b.Context(), path); err != nil {
				b.Fatal(err)
			}
			release()
		}
	})
}
