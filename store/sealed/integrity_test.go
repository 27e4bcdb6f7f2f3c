package sealed_test

import (
	"bytes"
	"crypto/rand"
	"errors"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/earshot-dev/earshot/store"
	"github.com/earshot-dev/earshot/store/bolt"
	"github.com/earshot-dev/earshot/store/sealed"
)

// openPair opens a sealed bbolt store in dir with the key file kek.
func openPair(t *testing.T, dir string, keys ...*sealed.KEK) (*sealed.Store, *bolt.DB, error) {
	t.Helper()
	db, err := bolt.Open(dir, &bolt.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	ring, err := sealed.OpenFileKeyring(filepath.Join(dir, sealed.KeyringFile), true)
	if err != nil {
		t.Fatal(err)
	}
	s, err := sealed.Open(db, sealed.Options{Keys: keys, Keyring: ring, RotateRate: 100000})
	if err != nil {
		db.Close()
		ring.Close()
		return nil, nil, err
	}
	t.Cleanup(func() { s.Close() })
	return s, db, nil
}

func readAll(s store.Store, name string) ([]byte, error) {
	r, err := s.OpenBlob(name)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	return io.ReadAll(r)
}

// TestBlobIntegrity: a sealed blob cut at a chunk boundary or mid-chunk,
// with a flipped byte, or with two chunks swapped reads as
// store.ErrIntegrity, never as bytes; an intact one reads back whole.
func TestBlobIntegrity(t *testing.T) {
	clear := make([]byte, 3*sealed.ChunkSize+1000)
	_, _ = rand.Read(clear)
	c := sealed.ChunkSize + 16
	for _, tc := range []struct {
		name   string
		damage func(b []byte) []byte
	}{
		{"intact", func(b []byte) []byte { return b }},
		{"cut at chunk boundary", func(b []byte) []byte { return b[:12+2*c] }},
		{"cut mid chunk", func(b []byte) []byte { return b[:12+c+100] }},
		{"last chunk dropped", func(b []byte) []byte { return b[:12+3*c] }},
		{"byte flipped", func(b []byte) []byte { b[12+c+5] ^= 1; return b }},
		{"header changed", func(b []byte) []byte { b[6] ^= 1; return b }},
		{"chunks swapped", func(b []byte) []byte {
			out := append([]byte{}, b[:12]...)
			out = append(out, b[12+c:12+2*c]...)
			out = append(out, b[12:12+c]...)
			return append(out, b[12+2*c:]...)
		}},
		{"bytes appended", func(b []byte) []byte { return append(b, 1, 2, 3) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			s, db, err := openPair(t, dir, newKEK(t, t.TempDir(), "k"))
			if err != nil {
				t.Fatal(err)
			}
			if n, err := s.WriteBlob("b1", bytes.NewReader(clear), 0); err != nil || n != int64(len(clear)) {
				t.Fatalf("WriteBlob = %d, %v", n, err)
			}
			path, _ := db.LocalBlobPath("b1")
			raw, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if bytes.Contains(raw, clear[:64]) {
				t.Fatal("blob file holds clear bytes")
			}
			if err := os.WriteFile(path, tc.damage(raw), 0o600); err != nil {
				t.Fatal(err)
			}
			got, err := readAll(s, "b1")
			if tc.name == "intact" {
				if err != nil || !bytes.Equal(got, clear) {
					t.Fatalf("intact blob: %d bytes, %v", len(got), err)
				}
				r, _ := s.OpenBlob("b1")
				fi, _ := r.Stat()
				r.Close()
				if fi.Size() != int64(len(clear)) {
					t.Fatalf("Stat size %d, want %d", fi.Size(), len(clear))
				}
				return
			}
			if !errors.Is(err, store.ErrIntegrity) {
				t.Fatalf("damaged blob read %d bytes, err %v; want ErrIntegrity", len(got), err)
			}
		})
	}
}

// TestRecordIntegrity: a job's sealed result changed in the database file
// reads as store.ErrIntegrity; the same job moved under another id does
// too (fields are bound to their record).
func TestRecordIntegrity(t *testing.T) {
	dir := t.TempDir()
	kek := newKEK(t, t.TempDir(), "k")
	s, _, err := openPair(t, dir, kek)
	if err != nil {
		t.Fatal(err)
	}
	j := &store.Job{ID: "j1", Account: "acme", Kind: store.KindPreRecorded, Status: store.StatusDone, CreatedAt: time.Now(),
		Result: []byte(`{"transcript":"the quick brown fox"}`), CustomMetadata: store.Metadata{"who": "alice"}}
	if err := s.CreateJob(j); err != nil {
		t.Fatal(err)
	}
	got, err := s.Job("j1")
	if err != nil || string(got.Result) != string(j.Result) || got.CustomMetadata["who"] != "alice" {
		t.Fatalf("Job = %+v, %v", got, err)
	}
	s.Close()
	raw, err := os.ReadFile(filepath.Join(dir, "earshot.db"))
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(raw, []byte("quick brown")) || bytes.Contains(raw, []byte("alice")) {
		t.Fatal("database file holds clear content")
	}
	// Flip one character of the sealed result's base64 in the file.
	i := bytes.Index(raw, []byte(`\"es1.`))
	if i < 0 {
		i = bytes.Index(raw, []byte(`es1.`))
	}
	if i < 0 {
		t.Fatal("no sealed field in the database file")
	}
	p := i + 12
	if raw[p] == 'A' {
		raw[p] = 'B'
	} else {
		raw[p] = 'A'
	}
	if err := os.WriteFile(filepath.Join(dir, "earshot.db"), raw, 0o600); err != nil {
		t.Fatal(err)
	}
	s2, _, err := openPair(t, dir, kek)
	if err != nil {
		t.Fatal(err)
	}
	if got, err := s2.Job("j1"); !errors.Is(err, store.ErrIntegrity) {
		t.Fatalf("tampered job read %+v, %v; want ErrIntegrity", got, err)
	}
}

// TestKeyFile: a key file readable by group or others, of the wrong size,
// or missing is refused naming the file and never showing its bytes.
func TestKeyFile(t *testing.T) {
	dir := t.TempDir()
	key := bytes.Repeat([]byte{0xab}, 32)
	for _, tc := range []struct {
		name string
		data []byte
		mode os.FileMode
		want string
	}{
		{"ok", key, 0o600, ""},
		{"read only owner", key, 0o400, ""},
		{"group readable", key, 0o640, "mode 0640"},
		{"world readable", key, 0o604, "mode 0604"},
		{"short", key[:31], 0o600, "31 bytes"},
		{"long", append(key, '\n'), 0o600, "33 bytes"},
		{"missing", nil, 0, "no such file"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(dir, strings.ReplaceAll(tc.name, " ", "-"))
			if tc.data != nil {
				if err := os.WriteFile(path, tc.data, 0o600); err != nil {
					t.Fatal(err)
				}
				if err := os.Chmod(path, tc.mode); err != nil {
					t.Fatal(err)
				}
			}
			k, err := sealed.LoadKeyFile(path)
			if tc.want == "" {
				if err != nil {
					t.Fatal(err)
				}
				if strings.Contains(k.String(), "abab") {
					t.Fatal("key prints its bytes")
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("LoadKeyFile = %v; want an error naming %s and %q", err, path, tc.want)
			}
			if strings.Contains(err.Error(), "abab") || strings.Contains(err.Error(), "\xab") {
				t.Fatal("error shows key bytes")
			}
		})
	}
}

// TestWrongKeyRefused: a sealed store opened with another key is
// ErrKeyMissing naming the key id it needs.
func TestWrongKeyRefused(t *testing.T) {
	dir := t.TempDir()
	k1 := newKEK(t, t.TempDir(), "k1")
	s, _, err := openPair(t, dir, k1)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.WriteBlob("b", strings.NewReader("x"), 0); err != nil {
		t.Fatal(err)
	}
	s.Close()
	_, _, err = openPair(t, dir, newKEK(t, t.TempDir(), "k2"))
	if !errors.Is(err, store.ErrKeyMissing) || !strings.Contains(err.Error(), k1.ID()) {
		t.Fatalf("open with another key = %v; want ErrKeyMissing naming %s", err, k1.ID())
	}
}

// TestShred: deleting a job destroys its data key: the keyring file no
// longer holds the wrapped key's bytes, and the job's sealed record, read
// from a copy of the database taken before the delete, cannot be opened.
func TestShred(t *testing.T) {
	dir := t.TempDir()
	kek := newKEK(t, t.TempDir(), "k")
	s, db, err := openPair(t, dir, kek)
	if err != nil {
		t.Fatal(err)
	}
	j := &store.Job{ID: "j1", Account: "acme", Kind: store.KindPreRecorded, Status: store.StatusDone, CreatedAt: time.Now(), Result: []byte(`"secret words"`)}
	if err := s.CreateJob(j); err != nil {
		t.Fatal(err)
	}
	backup := filepath.Join(t.TempDir(), "b.db")
	if _, err := db.BackupFile(backup); err != nil {
		t.Fatal(err)
	}
	ring, _ := os.ReadFile(filepath.Join(dir, sealed.KeyringFile))
	if err := s.DeleteJob("j1"); err != nil {
		t.Fatal(err)
	}
	after, _ := os.ReadFile(filepath.Join(dir, sealed.KeyringFile))
	if bytes.Equal(ring, after) || bytes.Contains(after, []byte("j:j1")) {
		t.Fatal("keyring still holds the deleted job's key")
	}
	s.Close()
	// The backup's database with the live keyring: the job's record is
	// there, its content is not readable.
	bdir := t.TempDir()
	data, _ := os.ReadFile(backup)
	os.WriteFile(filepath.Join(bdir, "earshot.db"), data, 0o600)
	os.WriteFile(filepath.Join(bdir, sealed.KeyringFile), after, 0o600)
	s2, _, err := openPair(t, bdir, kek)
	if err != nil {
		t.Fatal(err)
	}
	if got, err := s2.Job("j1"); !errors.Is(err, store.ErrIntegrity) {
		t.Fatalf("deleted job from the backup = %+v, %v; want ErrIntegrity", got, err)
	}
}

// TestBlobKeyNotKept: a blob whose new data key could not be written to the
// keyring (its write runs beside the blob's) is refused and not left in the
// backend, where it would be sealed bytes under a key nobody has.
func TestBlobKeyNotKept(t *testing.T) {
	dir := t.TempDir()
	db, err := bolt.Open(dir, &bolt.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	ring, err := sealed.OpenFileKeyring(filepath.Join(dir, sealed.KeyringFile), true)
	if err != nil {
		t.Fatal(err)
	}
	s, err := sealed.Open(db, sealed.Options{Keys: []*sealed.KEK{newKEK(t, t.TempDir(), "kek")}, Keyring: ring})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	if _, err := s.WriteBlob("kept", strings.NewReader("audio"), 0); err != nil {
		t.Fatal(err)
	}
	ring.Close() // every later keyring write fails
	if _, err := s.WriteBlob("lost", strings.NewReader("audio"), 0); !errors.Is(err, store.ErrUnavailable) {
		t.Fatalf("WriteBlob with the keyring failing = %v, want store.ErrUnavailable", err)
	}
	if _, err := db.OpenBlob("lost"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("the refused blob is in the backend: OpenBlob = %v", err)
	}
	if got, err := readAll(s, "kept"); err != nil || string(got) != "audio" {
		t.Fatalf("blob written before: %q, %v", got, err)
	}
}

// TestUploadSharesBlobKey: an upload's record is sealed under its blob's
// data key, so storing an upload adds one key to the keyring (one synced
// write), not two; its file name reads back; once the upload and its blob
// are deleted the record, read from a copy of the database taken before,
// cannot be opened. A record sealed under a key of its own (its blob had
// none when it was written) still reads.
func TestUploadSharesBlobKey(t *testing.T) {
	dir := t.TempDir()
	kek := newKEK(t, t.TempDir(), "k")
	s, db, err := openPair(t, dir, kek)
	if err != nil {
		t.Fatal(err)
	}
	keys := func() map[string]sealed.Entry {
		t.Helper()
		entries, _, err := sealed.ReadKeyring(filepath.Join(dir, sealed.KeyringFile))
		if err != nil {
			t.Fatal(err)
		}
		return entries
	}
	if _, err := s.WriteBlob("upload-u1", strings.NewReader("RIFF audio"), 0); err != nil {
		t.Fatal(err)
	}
	u1 := &store.Upload{ID: "u1", Account: "acme", Filename: "board-meeting.wav", Extension: "wav", Size: 10, CreatedAt: time.Now(), Blob: "upload-u1"}
	if err := s.PutUpload(u1); err != nil {
		t.Fatal(err)
	}
	if k := keys(); len(k) != 1 {
		t.Fatalf("keyring after one upload holds %d keys, want 1 (its blob's): %v", len(k), slices.Collect(maps.Keys(k)))
	}
	if u, err := s.Upload("u1"); err != nil || u.Filename != "board-meeting.wav" {
		t.Fatalf("upload u1 = %+v, %v", u, err)
	}
	// Its own key: the record written before its blob.
	if err := s.PutUpload(&store.Upload{ID: "u2", Account: "acme", Filename: "own-key.wav", Extension: "wav", Size: 1, CreatedAt: time.Now(), Blob: "upload-u2"}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.WriteBlob("upload-u2", strings.NewReader("x"), 0); err != nil {
		t.Fatal(err)
	}
	if u, err := s.Upload("u2"); err != nil || u.Filename != "own-key.wav" {
		t.Fatalf("upload u2 = %+v, %v", u, err)
	}

	backup := filepath.Join(t.TempDir(), "b.db")
	if _, err := db.BackupFile(backup); err != nil {
		t.Fatal(err)
	}
	if err := s.DeleteUpload("u1"); err != nil {
		t.Fatal(err)
	}
	if err := s.RemoveBlob("upload-u1"); err != nil {
		t.Fatal(err)
	}
	after, _ := os.ReadFile(filepath.Join(dir, sealed.KeyringFile))
	s.Close()
	bdir := t.TempDir()
	data, _ := os.ReadFile(backup)
	os.WriteFile(filepath.Join(bdir, "earshot.db"), data, 0o600)
	os.WriteFile(filepath.Join(bdir, sealed.KeyringFile), after, 0o600)
	s2, _, err := openPair(t, bdir, kek)
	if err != nil {
		t.Fatal(err)
	}
	if got, err := s2.Upload("u1"); !errors.Is(err, store.ErrIntegrity) {
		t.Fatalf("deleted upload from the backup = %+v, %v; want ErrIntegrity", got, err)
	}
	if u, err := s2.Upload("u2"); err != nil || u.Filename != "own-key.wav" {
		t.Fatalf("upload u2 from the backup = %+v, %v", u, err)
	}
}

// TestBlobKeyGone: a sealed blob whose data key is gone (a keyring
// restored from before it, a key destroyed by mistake) reads as
// store.ErrIntegrity; a blob written before sealing was on, which has no
// key either, reads as it is. Before, the sealed blob was served as its
// sealed bytes: no one's audio, as if it were; and seal-existing sealed it
// again, after which it read so without an error.
func TestBlobKeyGone(t *testing.T) {
	dir := t.TempDir()
	kek := newKEK(t, t.TempDir(), "k")
	s, db, err := openPair(t, dir, kek)
	if err != nil {
		t.Fatal(err)
	}
	clearAudio := []byte("RIFF\x24\x00\x00\x00WAVEfmt written before sealing")
	if _, err := db.WriteBlob("legacy.wav", bytes.NewReader(clearAudio), 0); err != nil {
		t.Fatal(err)
	}
	before, err := os.ReadFile(filepath.Join(dir, sealed.KeyringFile))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.WriteBlob("call.wav", bytes.NewReader(bytes.Repeat([]byte("audio "), 1000)), 0); err != nil {
		t.Fatal(err)
	}
	s.Close()
	if err := os.WriteFile(filepath.Join(dir, sealed.KeyringFile), before, 0o600); err != nil {
		t.Fatal(err)
	}
	s, _, err = openPair(t, dir, kek)
	if err != nil {
		t.Fatal(err)
	}
	if got, err := readAll(s, "call.wav"); !errors.Is(err, store.ErrIntegrity) {
		t.Errorf("sealed blob without its key: %d bytes (%.12q), %v; want ErrIntegrity", len(got), got, err)
	}
	for _, size := range []int{1, 3, 4096} { // reads smaller and larger than the bytes read ahead
		r, err := s.OpenBlob("legacy.wav")
		if err != nil {
			t.Fatal(err)
		}
		fi, err := r.Stat()
		if err != nil || fi.Size() != int64(len(clearAudio)) {
			t.Errorf("clear blob Stat = %v, %v; want %d bytes", fi, err, len(clearAudio))
		}
		got, err := readSized(r, size)
		r.Close()
		if err != nil || !bytes.Equal(got, clearAudio) {
			t.Fatalf("clear blob read %d at a time: %q, %v", size, got, err)
		}
	}
	// The start's warning counts the clear blob, not the one whose key is
	// gone, which seal-existing cannot seal.
	if blobs, _, _, err := s.Unsealed(t.Context()); err != nil || blobs != 1 {
		t.Errorf("Unsealed = %d blobs, %v; want 1", blobs, err)
	}
	// seal-existing seals the clear blob and leaves the other as it is
	// (sealed again it would read as its sealed bytes), counted.
	rep, err := s.SealExisting(t.Context())
	if err != nil || rep.Blobs != 1 || rep.KeyGone != 1 {
		t.Fatalf("SealExisting = %+v, %v; want 1 blob sealed, 1 whose key is gone", rep, err)
	}
	if got, err := readAll(s, "legacy.wav"); err != nil || !bytes.Equal(got, clearAudio) {
		t.Fatalf("the clear blob once sealed: %q, %v", got, err)
	}
	if _, err := readAll(s, "call.wav"); !errors.Is(err, store.ErrIntegrity) {
		t.Fatalf("the blob whose key is gone after SealExisting: %v, want ErrIntegrity", err)
	}
}

// readSized reads r to its end size bytes at a time.
func readSized(r io.Reader, size int) ([]byte, error) {
	var out []byte
	buf := make([]byte, size)
	for {
		n, err := r.Read(buf)
		out = append(out, buf[:n]...)
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return out, err
		}
	}
}
