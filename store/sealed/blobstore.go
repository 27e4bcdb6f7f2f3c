package sealed

import (
	"crypto/cipher"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"

	"github.com/earshot-dev/earshot/store"
)

// The Store's blobs: sealed as they are written (blob.go), their data keys
// made first and destroyed with them.

// WriteBlob seals r into the blob name under the blob's data key (made
// first, kept while the write runs); limit counts clear bytes.
func (s *Store) WriteBlob(name string, r io.Reader, limit int64) (int64, error) {
	if !store.ValidName(name) {
		return 0, fmt.Errorf("blob %q: %w", name, store.ErrInvalidName)
	}
	s.beginWrite(name)
	defer s.endWrite(name)
	k, kept, err := s.blobDEK(blobKey(name))
	if err != nil {
		return 0, err
	}
	sr := newSealReader(k, r, limit)
	innerLimit := int64(0)
	if limit > 0 {
		innerLimit = SealedSize(limit)
	}
	_, err = s.inner.WriteBlob(name, sr, innerLimit)
	if kerr := kept(); kerr != nil {
		if err == nil {
			// Sealed under a key that was not kept: unreadable, and no
			// record names it yet.
			_ = s.inner.RemoveBlob(name)
		}
		return 0, kerr
	}
	if err != nil {
		if isTooLarge(sr, err) {
			return 0, fmt.Errorf("blob %s: over %d bytes: %w", name, limit, store.ErrTooLarge)
		}
		return 0, err
	}
	return sr.n, nil
}

// blobDEK returns the data key a blob is sealed under: its own if it has
// one, else a new one whose keyring write (synced) runs while the caller
// writes the blob, so the two syncs overlap instead of adding up. kept
// waits for that write and reports it; the caller calls it before it
// returns, so a blob's key is durable before WriteBlob says the blob is.
// ringMu is held until the write is done (no other key is made or
// destroyed meanwhile), released by the writing goroutine.
func (s *Store) blobDEK(id string) (k cipher.AEAD, kept func() error, err error) {
	none := func() error { return nil }
	if k, err := s.dek(id, false); err != nil || k != nil {
		return k, none, err
	}
	s.ringMu.Lock()
	if _, ok := s.ring.Get(id); ok { // made meanwhile
		s.ringMu.Unlock()
		k, err := s.dek(id, false)
		return k, none, err
	}
	raw := make([]byte, KeySize)
	_, _ = rand.Read(raw)
	defer clear(raw)
	if k, err = newGCM(raw); err != nil {
		s.ringMu.Unlock()
		return nil, nil, err
	}
	e := s.wrapEntry(id, raw)
	var perr error
	var wg sync.WaitGroup
	wg.Go(func() {
		defer s.ringMu.Unlock()
		perr = s.ring.Put(id, e)
	})
	return k, func() error {
		wg.Wait()
		if perr != nil {
			return fmt.Errorf("sealed: data key of %s: keyring write failed: %w: %w", id, store.ErrUnavailable, perr)
		}
		return nil
	}, nil
}

func (s *Store) beginWrite(name string) {
	s.ringMu.Lock()
	s.writing[name]++
	s.ringMu.Unlock()
}

func (s *Store) endWrite(name string) {
	s.ringMu.Lock()
	if s.writing[name]--; s.writing[name] <= 0 {
		delete(s.writing, name)
	}
	s.ringMu.Unlock()
}

// LinkBlob makes dst a copy of src: the bytes as sealed, src's data key
// re-wrapped as dst's (written before the copy).
func (s *Store) LinkBlob(src, dst string) error {
	if !store.ValidName(src) || !store.ValidName(dst) {
		return fmt.Errorf("link blob %q to %q: %w", src, dst, store.ErrInvalidName)
	}
	e, sealed := s.ring.Get(blobKey(src))
	if !sealed {
		return s.inner.LinkBlob(src, dst)
	}
	s.beginWrite(dst)
	defer s.endWrite(dst)
	raw, err := s.unwrapEntry(blobKey(src), e)
	if err != nil {
		return err
	}
	defer clear(raw)
	s.ringMu.Lock()
	err = s.ring.Put(blobKey(dst), s.wrapEntry(blobKey(dst), raw))
	s.ringMu.Unlock()
	if err != nil {
		return err
	}
	return s.inner.LinkBlob(src, dst)
}

// OpenBlob opens the blob for reading its clear bytes; a blob written
// before sealing was on (no data key) reads as it is.
func (s *Store) OpenBlob(name string) (store.BlobReader, error) {
	r, err := s.inner.OpenBlob(name)
	if err != nil {
		return nil, err
	}
	k, err := s.dek(blobKey(name), false)
	if err != nil {
		r.Close()
		return nil, err
	}
	if k == nil {
		return clearBlob(name, r)
	}
	o, err := newOpenReader(k, name, r)
	if err != nil {
		r.Close()
		return nil, err
	}
	return o, nil
}

// errKeyGone is a blob sealed under a data key the keyring no longer
// holds: an integrity failure.
var errKeyGone = fmt.Errorf("sealed, and its data key is gone: %w", errIntegrity)

// clearBlob is a blob without a data key: read as it is, written before
// sealing was on, unless it starts as a sealed blob does (blobMagic): its
// key is gone, and its bytes are no one's audio. Before (until 2026-12-01)
// such a blob was served as its sealed bytes.
func clearBlob(name string, r store.BlobReader) (store.BlobReader, error) {
	head := make([]byte, len(blobMagic))
	n, err := io.ReadFull(r, head)
	switch {
	case err == nil && [4]byte(head) == blobMagic:
		r.Close()
		return nil, fmt.Errorf("blob %s: %w", name, errKeyGone)
	case err != nil && !errors.Is(err, io.EOF) && !errors.Is(err, io.ErrUnexpectedEOF):
		r.Close()
		return nil, err
	}
	return &replayed{head: head[:n], BlobReader: r}, nil
}

// replayed is a blob reader whose first bytes were read ahead (head).
type replayed struct {
	head []byte
	store.BlobReader
}

func (r *replayed) Read(p []byte) (int, error) {
	if len(r.head) > 0 {
		n := copy(p, r.head)
		r.head = r.head[n:]
		return n, nil
	}
	return r.BlobReader.Read(p)
}

// RemoveBlob removes the blob and destroys its data key.
func (s *Store) RemoveBlob(name string) error {
	if err := s.inner.RemoveBlob(name); err != nil {
		return err
	}
	return s.shred(blobKey(name))
}

// SweepBlobs sweeps as the backend does, then destroys the data keys of
// blobs, jobs and uploads that no longer exist (a crash between a removal
// and its key's destruction, a creation that failed after its key).
func (s *Store) SweepBlobs() ([]string, error) {
	names, err := s.inner.SweepBlobs()
	return names, errors.Join(err, s.sweepKeys())
}

// blobExists reports whether the backend has the blob name.
func (s *Store) blobExists(name string) bool {
	if p, ok := s.inner.LocalBlobPath(name); ok {
		_, err := os.Stat(p)
		return !errors.Is(err, os.ErrNotExist)
	}
	r, err := s.inner.OpenBlob(name)
	if err == nil {
		r.Close()
	}
	return !errors.Is(err, store.ErrNotFound)
}

// agedKeyring is a keyring shared by the nodes of a cluster
// (store/postgres.Keyring) that knows its entries' ages: the sweeps below
// take only its entries old enough that no node can still be writing the
// blob or record they are for (another node's blob is named only when its
// write commits, its key made when the write begins; this node's own
// writes in progress are kept by shred).
type agedKeyring interface {
	SweepableIDs() []string
}

// sweepable returns, sorted, the keyring's ids a sweep of keys whose
// record or blob is gone may destroy: every id on a keyring this process
// owns, only those past the shared keyring's age.
func (s *Store) sweepable() []string {
	if a, ok := s.ring.(agedKeyring); ok {
		return a.SweepableIDs()
	}
	return s.ring.IDs()
}

// sweepBlobKeys destroys the data keys of blobs that are gone.
func (s *Store) sweepBlobKeys() error {
	var gone []string
	for _, id := range s.sweepable() {
		if name, ok := strings.CutPrefix(id, "b:"); ok && !s.blobExists(name) {
			gone = append(gone, id)
		}
	}
	return s.shred(gone...)
}

// lister is a backend that names what it holds in one pass per kind, in
// ascending byte order (store/bolt: a cursor over a bucket's keys and a
// read of the blob directory; store/postgres: one query each). The key
// sweep reads it instead of one lookup per data key.
type lister interface {
	JobIDs(fn func(id string)) error
	UploadIDs(fn func(id string)) error
	BlobNames(fn func(name string)) error
}

// sweepKeys destroys the data keys of jobs, uploads and blobs that no
// longer exist. Each key the backend's listing lacks (every key, on a
// backend that cannot list) is looked up once more on its own before it
// goes, so a record committed since the listing keeps its key. Before
// (until 2026-11-30) every key was looked up on its own: SweepBlobs over
// 5,000 jobs' keys took 0.57-0.61 s on a local PostgreSQL (one query a
// key; a remote database's round trips multiply it) and 0.10 s on bbolt
// (one record read and decoded a key) at every start; 6-9 ms and 30-47 ms
// after (TestSweepKeys counts the lookups). On a shared keyring it takes
// only keys past its age (sweepable).
func (s *Store) sweepKeys() error {
	var gone []string
	for _, id := range s.unlisted(s.sweepable()) {
		kind, rest, _ := strings.Cut(id, ":")
		var err error
		switch kind {
		case "b":
			if !s.blobExists(rest) {
				err = store.ErrNotFound
			}
		case "j":
			_, err = s.inner.Job(rest)
		case "u":
			_, err = s.inner.Upload(rest)
		}
		if errors.Is(err, store.ErrNotFound) {
			gone = append(gone, id)
		}
	}
	return s.shred(gone...)
}

// unlisted returns the keys of ids (sorted, as Keyring.IDs) of a job,
// upload or blob the backend's listing does not name: all of them when
// the backend cannot list or a listing fails.
func (s *Store) unlisted(ids []string) []string {
	l, ok := s.inner.(lister)
	if !ok {
		return ids
	}
	var out []string
	for kind, list := range map[string]func(func(string)) error{"b": l.BlobNames, "j": l.JobIDs, "u": l.UploadIDs} {
		keyed := keyedOf(ids, kind)
		if len(keyed) == 0 {
			continue
		}
		var missing []string
		if err := walkSorted(keyed, list, func(k string) { missing = append(missing, k) }, nil); err != nil {
			missing = keyed
		}
		for _, m := range missing {
			out = append(out, kind+":"+m)
		}
	}
	return out
}

// AccountBytes is the backend's count: the blobs' bytes on disk, sealed
// (StoredSize of their clear size).
func (s *Store) AccountBytes(account string) (int64, error) { return s.inner.AccountBytes(account) }

// StoredSize is the bytes a blob of n clear bytes takes in the backend.
func (s *Store) StoredSize(n int64) int64 { return SealedSize(n) }

// LocalBlobPath is false: a blob's file holds sealed bytes, read with
// OpenBlob.
func (s *Store) LocalBlobPath(string) (string, bool) { return "", false }

// Cluster is the backend's, its live jobs sealed (cluster.go).
func (s *Store) Cluster() store.Cluster {
	c := s.inner.Cluster()
	if c == nil {
		return nil
	}
	return &cluster{Cluster: c, s: s}
}

var _ store.Store = (*Store)(nil)
