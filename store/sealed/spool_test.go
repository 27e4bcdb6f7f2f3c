package sealed_test

import (
	"bytes"
	"crypto/rand"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/earshot-dev/earshot/store"
	"github.com/earshot-dev/earshot/store/sealed"
	"github.com/earshot-dev/earshot/store/storetest"
)

// TestSpool: a spool written past two chunks, synced with an unfinished
// last chunk, holds no run of its clear bytes on disk; it reads back
// whole after a reopen, a change in place reads back, the same tail synced
// twice is sealed under two nonces, and a torn last slot is dropped.
func TestSpool(t *testing.T) {
	s := seal(t, storetest.Open(t))
	path := filepath.Join(t.TempDir(), "live-x.wav")
	f, err := s.CreateSpool(path)
	if err != nil {
		t.Fatal(err)
	}
	clear := make([]byte, 2*sealed.ChunkSize+5000)
	rand.Read(clear)
	for i := 0; i < len(clear); i += 3000 {
		if _, err := f.Write(clear[i:min(i+3000, len(clear))]); err != nil {
			t.Fatal(err)
		}
	}
	if err := f.Sync(); err != nil {
		t.Fatal(err)
	}
	first, _ := os.ReadFile(path)
	if err := f.Sync(); err != nil {
		t.Fatal(err)
	}
	second, _ := os.ReadFile(path)
	if bytes.Equal(first, second) {
		t.Fatal("the tail synced twice is the same bytes: a nonce used again")
	}
	for i := 0; i+64 <= len(clear); i += 64 {
		if bytes.Contains(second, clear[i:i+64]) {
			t.Fatalf("clear bytes at %d on disk", i)
		}
	}
	if _, err := f.WriteAt([]byte("RIFF"), 0); err != nil {
		t.Fatal(err)
	}
	copy(clear, "RIFF")
	f.Close()

	g, err := s.OpenSpool(path)
	if err != nil {
		t.Fatal(err)
	}
	got := make([]byte, len(clear)+10)
	n, _ := g.ReadAt(got, 0)
	if !bytes.Equal(got[:n], clear) {
		t.Fatalf("read back %d bytes, want the %d written", n, len(clear))
	}
	g.Close()

	// A kill while the last slot was written: it is dropped.
	raw, _ := os.ReadFile(path)
	raw[len(raw)-3] ^= 1
	os.WriteFile(path, raw, 0o600)
	g, err = s.OpenSpool(path)
	if err != nil {
		t.Fatal(err)
	}
	n, _ = g.ReadAt(got, 0)
	if n != 2*sealed.ChunkSize || !bytes.Equal(got[:n], clear[:n]) {
		t.Fatalf("after a torn tail: %d bytes, want the 2 full chunks", n)
	}
	g.Close()

	// A changed full chunk is not read.
	raw[40] ^= 1
	os.WriteFile(path, raw, 0o600)
	if _, err := s.OpenSpool(path); !errors.Is(err, store.ErrIntegrity) {
		t.Fatalf("changed chunk: %v, want ErrIntegrity", err)
	}
	if err := s.RemoveSpool(path); err != nil {
		t.Fatal(err)
	}
	if _, err := s.OpenSpool(path); err == nil {
		t.Fatal("spool opened after RemoveSpool")
	}
}
