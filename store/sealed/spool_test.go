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

// TestSweepSpools: the keys of spools whose files are gone from the
// directory (a removal that ended before its key's destruction, a file
// removed by hand) are destroyed and named; a spool still there keeps its
// key and opens; a keyring shared with other nodes (store/postgres's) is
// left alone, since it holds their spools' keys too. Before (until
// 2026-11-30) nothing swept spool keys: one outlived each such file.
func TestSweepSpools(t *testing.T) {
	s, ring := sealRing(t, storetest.Open(t))
	spools := t.TempDir()
	for _, name := range []string{"live-kept.wav", "live-gone.wav"} {
		f, err := s.CreateSpool(filepath.Join(spools, name))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := f.Write([]byte("RIFF....")); err != nil {
			t.Fatal(err)
		}
		f.Close()
	}
	if err := os.Remove(filepath.Join(spools, "live-gone.wav")); err != nil {
		t.Fatal(err)
	}
	gone, err := s.SweepSpools(spools)
	if err != nil || len(gone) != 1 || gone[0] != "live-gone.wav" {
		t.Fatalf("SweepSpools = %v, %v; want [live-gone.wav]", gone, err)
	}
	for _, id := range ring.IDs() {
		if id == "s:live-gone.wav" {
			t.Errorf("the key of the spool removed is still in the keyring")
		}
	}
	f, err := s.OpenSpool(filepath.Join(spools, "live-kept.wav"))
	if err != nil {
		t.Fatalf("the spool kept: %v", err)
	}
	f.Close()

	// A shared keyring: nothing swept, even with the directory empty.
	pgdb := storetest.OpenPostgres(t, pg)
	shared, err := sealed.Open(pgdb, sealed.Options{Keys: []*sealed.KEK{newKEK(t, t.TempDir(), "kek")}, Keyring: pgdb.Keyring()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { shared.Close() })
	other := filepath.Join(t.TempDir(), "live-other-node.wav")
	g, err := shared.CreateSpool(other)
	if err != nil {
		t.Fatal(err)
	}
	g.Close()
	if gone, err := shared.SweepSpools(t.TempDir()); err != nil || len(gone) != 0 {
		t.Errorf("SweepSpools on a shared keyring = %v, %v; want nothing", gone, err)
	}
	if g, err := shared.OpenSpool(other); err != nil {
		t.Errorf("a spool another node's sweep could see: %v", err)
	} else {
		g.Close()
	}
}
