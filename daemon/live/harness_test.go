package live

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/earshot-dev/earshot/recognizer"
	"github.com/earshot-dev/earshot/recognizer/pipeline"
	"github.com/earshot-dev/earshot/recognizer/sphinx"
	"github.com/earshot-dev/earshot/store"
	"github.com/earshot-dev/earshot/store/storetest/memstore"
)

// speechFile is real speech, 16 kHz 16-bit mono WAV (about 10 s).
const speechFile = "../../../shared/testdata/speech/ljspeech-LJ001-0001.wav"

// testPipeline loads the real engine once for the package's tests: one
// decoder per pool, no telephone model. It is never closed (the process
// ends with the tests).
var testPipeline = sync.OnceValues(func() (*pipeline.Transcriber, error) {
	var sp sphinx.Config
	sp.Decoders, sp.LiveDecoders = 1, 1
	sp.TelephoneHMM = sphinx.NoTelephoneHMM
	sp.OverloadMaxHMMsPerFrame = -1
	sp.SetDefaults()
	return pipeline.New(pipeline.Config{Sphinx: sp, Live: true}, recognizer.NewCPU(sp.LiveDecodes), nil)
})

// blobFiles are the job service's blob files as the daemon keeps them on a
// shared store: a session records into a local file, committed to the
// store at its end; a stored blob is read through a scratch copy.
type blobFiles struct {
	db  store.Store
	dir string
}

func (b blobFiles) RecordingPath(name string) (string, error) { return filepath.Join(b.dir, name), nil }

func (b blobFiles) CreateRecording(path string) (RecordingFile, error) {
	return os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o600)
}

func (b blobFiles) OpenRecording(path string) (RecordingFile, error) {
	return os.OpenFile(path, os.O_RDWR, 0)
}

func (b blobFiles) CommitRecording(path string) error {
	return b.StoreBlobFile(filepath.Base(path), path)
}

func (b blobFiles) DropRecording(path string) error {
	if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return nil
}

func (b blobFiles) BlobFile(name string) (string, func(), error) {
	r, err := b.db.OpenBlob(name)
	if err != nil {
		return "", nil, err
	}
	defer r.Close()
	f, err := os.CreateTemp(b.dir, "scratch-*")
	if err != nil {
		return "", nil, err
	}
	_, err = io.Copy(f, r)
	f.Close()
	return f.Name(), func() { os.Remove(f.Name()) }, err
}

func (b blobFiles) StoreBlobFile(name, path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	_, err = b.db.WriteBlob(name, f, 0)
	return err
}

// signals records what the service tells the job service.
type signals struct {
	mu        sync.Mutex
	batch     int            // Queued with a batch pass
	delivered int            // Queued with deliveries
	finished  []store.Status // Finished, in order
	refuse    error          // AdmitRecording's answer
	audits    []store.AuditEntry
}

func (s *signals) Audit(e store.AuditEntry) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.audits = append(s.audits, e)
}

func (s *signals) Queued(batchPass, deliveries bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if batchPass {
		s.batch++
	}
	if deliveries {
		s.delivered++
	}
}

func (s *signals) Finished(st store.Status) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.finished = append(s.finished, st)
}

func (s *signals) AdmitRecording(string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.refuse
}

// testService is a live service on an in-memory store with the real
// engine; its Shutdown is a cleanup.
func testService(t *testing.T, edit func(*Config)) (*Service, *memstore.Store, *signals) {
	t.Helper()
	pl, err := testPipeline()
	if err != nil {
		t.Fatal(err)
	}
	var cfg Config
	if edit != nil {
		edit(&cfg)
	}
	cfg.SetDefaults()
	cfg.SetPoolDefaults(1)
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	db := memstore.New()
	sig := &signals{}
	s := New(cfg, Deps{Store: db, Recordings: blobFiles{db, t.TempDir()}, Signals: sig, Pipeline: pl, Decoders: 1})
	t.Cleanup(func() { s.Shutdown(t.Context()) })
	return s, db, sig
}

// speechPCM returns the samples of the speech file's data chunk.
func speechPCM(t *testing.T) []byte {
	t.Helper()
	b, err := os.ReadFile(speechFile)
	if err != nil {
		t.Fatal(err)
	}
	for i := 12; i+8 <= len(b); {
		n := int(binary.LittleEndian.Uint32(b[i+4:]))
		if bytes.Equal(b[i:i+4], []byte("data")) {
			return b[i+8 : min(len(b), i+8+n)]
		}
		i += 8 + n + n%2
	}
	t.Fatal("no data chunk")
	return nil
}

// listener takes a session's messages.
type listener struct {
	mu   sync.Mutex
	msgs []string
}

func (l *listener) Send(m []byte) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.msgs = append(l.msgs, string(m))
	return true
}

func (l *listener) Kick() {}

func (l *listener) all() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]string(nil), l.msgs...)
}
