package memstore

import (
	"bytes"
	"cmp"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"math"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/earshot-dev/earshot/store"
)

// Store is an in-memory store.Store. The zero value is not usable: New
// makes one. All methods are safe for concurrent use; each runs under one
// mutex, as a transaction of the embedded store does.
type Store struct {
	// Fault, when set, is called first by every method with its name
	// ("CreateJob", "UpdateJob", "WriteBlob"...): a non-nil error is
	// returned as that call's error, wrapped, and nothing is changed. Set
	// it before the store is shared, or guard it yourself.
	Fault func(op string) error

	mu       sync.Mutex
	closed   bool                 // guarded by mu
	keys     map[string]keyRecord // guarded by mu: key id → key
	hashes   map[string]string    // guarded by mu: sha256(secret) → key id
	secrets  map[string][]byte    // guarded by mu: account → callback secret
	jobs     map[string]*record   // guarded by mu: job id → its record
	uploads  map[string]store.Upload
	delivery map[string]store.Delivery // guarded by mu: delivery id → delivery
	leases   map[string]time.Time      // guarded by mu: delivery id → end of its claim
	blobs    map[string]*blob          // guarded by mu: blob name → bytes (a link shares them)
	audit    []*store.AuditEntry       // guarded by mu: the kept audit trail, in Seq order
	anchor   store.AuditAnchor         // guarded by mu: the last audit entry expired
}

var _ store.Store = (*Store)(nil)

// New returns an empty store.
func New() *Store {
	return &Store{
		keys: map[string]keyRecord{}, hashes: map[string]string{}, secrets: map[string][]byte{},
		jobs: map[string]*record{}, uploads: map[string]store.Upload{}, delivery: map[string]store.Delivery{},
		leases: map[string]time.Time{}, blobs: map[string]*blob{},
	}
}

type keyRecord struct {
	store.Key
	hash string
}

// record is a stored job as the embedded store keeps it: the JSON of its
// head (so metadata reads back as a decoded JSON object, sharing nothing
// with the caller's) and its params and result as they were given.
type record struct {
	head           []byte
	params, result []byte
	// copies of the head's fields the indexes read
	account   string
	kind      store.Kind
	status    store.Status
	created   uint64
	inQueue   bool
	batchPass store.BatchPassState
	blob      string
	held      bool // the head's Job.Held
}

// blob is one file's bytes; names linked to it share the pointer.
type blob struct{ data []byte }

// lock takes the mutex for op, or returns the error a closed store or a
// Fault gives; unlock with s.mu.Unlock.
func (s *Store) lock(op string) error {
	if s.Fault != nil {
		if err := s.Fault(op); err != nil {
			return fmt.Errorf("memstore: %s: %w", op, err)
		}
	}
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return fmt.Errorf("memstore: %s: %w", op, store.ErrClosed)
	}
	return nil
}

// Close releases nothing but makes every later call fail; idempotent.
func (s *Store) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.closed = true
	return nil
}

// Check verifies that every job record decodes and validates and that
// every delivery names an id it is stored under. After Close it returns
// store.ErrClosed.
func (s *Store) Check() error {
	if err := s.lock("Check"); err != nil {
		return store.ErrClosed
	}
	defer s.mu.Unlock()
	var problems []error
	for id, r := range s.jobs {
		j, err := r.job()
		switch {
		case err != nil:
			problems = append(problems, fmt.Errorf("%w: job %s: %v", store.ErrCorrupt, id, err))
		case j.ID != id:
			problems = append(problems, fmt.Errorf("%w: job %s: record id %q", store.ErrCorrupt, id, j.ID))
		default:
			if err := j.Validate(); err != nil {
				problems = append(problems, fmt.Errorf("%w: %v", store.ErrCorrupt, err))
			}
		}
	}
	for id, d := range s.delivery {
		if d.ID != id {
			problems = append(problems, fmt.Errorf("%w: delivery %s: record id %q", store.ErrCorrupt, id, d.ID))
		}
	}
	return errors.Join(problems...)
}

// enc orders times as the embedded store's keys do: zero first, then by
// nanoseconds, clamped to the years 1678–2262.
func enc(t time.Time) uint64 {
	lo, hi := time.Unix(0, math.MinInt64), time.Unix(0, math.MaxInt64)
	switch {
	case t.IsZero() || t.Before(lo):
		return 0
	case t.After(hi):
		return math.MaxUint64
	}
	return uint64(t.UnixNano()) ^ (1 << 63)
}

// Keys.

// CreateKey is store.DB.CreateKey.
func (s *Store) CreateKey(account string, g store.KeyGrant) (string, store.Key, error) {
	if !store.ValidAccount(account) || !g.ValidFor(account) {
		return "", store.Key{}, fmt.Errorf("memstore: create key: account %q scopes %q: %w", account, g.Scopes, store.ErrInvalid)
	}
	if err := s.lock("CreateKey"); err != nil {
		return "", store.Key{}, err
	}
	defer s.mu.Unlock()
	secret, hash := store.NewSecret()
	k := store.Key{Account: account, Prefix: secret[:8], CreatedAt: time.Now().UTC(), Scopes: g.Normal(), ExpiresAt: g.ExpiresAt.UTC()}
	for {
		k.ID = store.RandomID(6)
		if _, ok := s.keys[k.ID]; !ok {
			break
		}
	}
	s.keys[k.ID] = keyRecord{Key: k, hash: string(hash)}
	s.hashes[string(hash)] = k.ID
	return secret, k, nil
}

// Keys is store.DB.Keys: oldest first.
func (s *Store) Keys() ([]store.Key, error) {
	if err := s.lock("Keys"); err != nil {
		return nil, err
	}
	defer s.mu.Unlock()
	var out []store.Key
	for _, k := range s.keys {
		out = append(out, k.Key)
	}
	slices.SortFunc(out, func(a, b store.Key) int {
		return cmp.Or(a.CreatedAt.Compare(b.CreatedAt), strings.Compare(a.ID, b.ID))
	})
	return out, nil
}

// Key is store.DB.Key.
func (s *Store) Key(id string) (store.Key, error) {
	if err := s.lock("Key"); err != nil {
		return store.Key{}, err
	}
	defer s.mu.Unlock()
	k, ok := s.keys[id]
	if !ok {
		return store.Key{}, fmt.Errorf("memstore: key %s: %w", id, store.ErrNotFound)
	}
	return k.Key, nil
}

// RevokeKey is store.DB.RevokeKey: idempotent.
func (s *Store) RevokeKey(id string) error {
	if err := s.lock("RevokeKey"); err != nil {
		return err
	}
	defer s.mu.Unlock()
	k, ok := s.keys[id]
	if !ok {
		return fmt.Errorf("memstore: revoke key %s: %w", id, store.ErrNotFound)
	}
	if k.RevokedAt.IsZero() {
		k.RevokedAt = time.Now().UTC()
		s.keys[id] = k
	}
	return nil
}

// Authenticate is store.DB.Authenticate.
func (s *Store) Authenticate(secret string) (store.Key, error) {
	if !strings.HasPrefix(secret, store.SecretPrefix) {
		return store.Key{}, fmt.Errorf("memstore: authenticate: %w", store.ErrUnauthorized)
	}
	if err := s.lock("Authenticate"); err != nil {
		return store.Key{}, err
	}
	defer s.mu.Unlock()
	k, ok := s.keys[s.hashes[string(store.HashSecret(secret))]]
	if !ok {
		return store.Key{}, fmt.Errorf("memstore: authenticate: %w", store.ErrUnauthorized)
	}
	if !k.Active() {
		return store.Key{}, fmt.Errorf("memstore: authenticate: key %s revoked: %w", k.ID, store.ErrUnauthorized)
	}
	if k.Expired(time.Now()) {
		return store.Key{}, fmt.Errorf("memstore: authenticate: key %s expired: %w", k.ID, store.ErrUnauthorized)
	}
	return k.Key, nil
}

// TakeCallbackSecrets is store.Store.TakeCallbackSecrets.
func (s *Store) TakeCallbackSecrets(move func(account string, secret []byte) error) error {
	if err := s.lock("TakeCallbackSecrets"); err != nil {
		return err
	}
	secrets := maps.Clone(s.secrets)
	s.mu.Unlock()
	for _, account := range slices.Sorted(maps.Keys(secrets)) {
		if err := move(account, bytes.Clone(secrets[account])); err != nil {
			return err
		}
		if err := s.lock("TakeCallbackSecrets"); err != nil {
			return err
		}
		if bytes.Equal(s.secrets[account], secrets[account]) {
			delete(s.secrets, account)
		}
		s.mu.Unlock()
	}
	return nil
}

// CallbackSecret is store.DB.CallbackSecret: made at the first call.
func (s *Store) CallbackSecret(account string) ([]byte, error) {
	if account == "" {
		return nil, fmt.Errorf("memstore: callback secret: empty account: %w", store.ErrInvalid)
	}
	if err := s.lock("CallbackSecret"); err != nil {
		return nil, err
	}
	defer s.mu.Unlock()
	if _, ok := s.secrets[account]; !ok {
		b := make([]byte, 32)
		_, _ = rand.Read(b)
		s.secrets[account] = b
	}
	return bytes.Clone(s.secrets[account]), nil
}

// Uploads.

// PutUpload is store.DB.PutUpload.
func (s *Store) PutUpload(u *store.Upload) error {
	if u == nil {
		return fmt.Errorf("memstore: put upload: nil: %w", store.ErrInvalid)
	}
	if err := u.Validate(); err != nil {
		return fmt.Errorf("memstore: put upload: %w", err)
	}
	if err := s.lock("PutUpload"); err != nil {
		return err
	}
	defer s.mu.Unlock()
	rec := *u
	rec.CreatedAt = rec.CreatedAt.UTC()
	s.uploads[rec.ID] = rec
	return nil
}

// Upload is store.DB.Upload.
func (s *Store) Upload(id string) (*store.Upload, error) {
	if err := s.lock("Upload"); err != nil {
		return nil, err
	}
	defer s.mu.Unlock()
	u, ok := s.uploads[id]
	if !ok {
		return nil, fmt.Errorf("memstore: upload %s: %w", id, store.ErrNotFound)
	}
	return &u, nil
}

// DeleteUpload is store.DB.DeleteUpload: a missing upload is no error.
func (s *Store) DeleteUpload(id string) error {
	if err := s.lock("DeleteUpload"); err != nil {
		return err
	}
	defer s.mu.Unlock()
	delete(s.uploads, id)
	return nil
}

// ExpireUploads is store.DB.ExpireUploads.
func (s *Store) ExpireUploads(cut store.Cutoff, limit int) ([]string, error) {
	if limit <= 0 {
		return nil, fmt.Errorf("memstore: expire uploads: limit %d: %w", limit, store.ErrInvalid)
	}
	if err := s.lock("ExpireUploads"); err != nil {
		return nil, err
	}
	defer s.mu.Unlock()
	var old []store.Upload
	for _, u := range s.uploads {
		if cut.Expired(u.Account, u.CreatedAt) {
			old = append(old, u)
		}
	}
	slices.SortFunc(old, func(a, b store.Upload) int {
		return cmp.Or(a.CreatedAt.Compare(b.CreatedAt), cmp.Compare(a.ID, b.ID))
	})
	var deleted []string
	for _, u := range old[:min(len(old), limit)] {
		delete(s.uploads, u.ID)
		delete(s.blobs, u.Blob)
		deleted = append(deleted, u.ID)
	}
	return deleted, nil
}

// Blobs.

// blobReader reads a snapshot of one blob.
type blobReader struct {
	*bytes.Reader
	name string
	size int64
}

func (r *blobReader) Close() error               { return nil }
func (r *blobReader) Stat() (fs.FileInfo, error) { return blobInfo{r.name, r.size}, nil }

type blobInfo struct {
	name string
	size int64
}

func (i blobInfo) Name() string       { return i.name }
func (i blobInfo) Size() int64        { return i.size }
func (i blobInfo) Mode() fs.FileMode  { return 0o600 }
func (i blobInfo) ModTime() time.Time { return time.Time{} }
func (i blobInfo) IsDir() bool        { return false }
func (i blobInfo) Sys() any           { return nil }

// WriteBlob is store.DB.WriteBlob: the blob is replaced whole or not at
// all.
func (s *Store) WriteBlob(name string, r io.Reader, limit int64) (int64, error) {
	if !store.ValidName(name) {
		return 0, fmt.Errorf("memstore: write blob %q: %w", name, store.ErrInvalidName)
	}
	if s.Fault != nil {
		if err := s.Fault("WriteBlob"); err != nil {
			return 0, fmt.Errorf("memstore: WriteBlob: %w", err)
		}
	}
	src := r
	if limit > 0 {
		src = io.LimitReader(r, limit+1)
	}
	var buf bytes.Buffer
	n, err := io.Copy(&buf, src) // outside the lock: r may be slow
	if err == nil && limit > 0 && n > limit {
		err = fmt.Errorf("more than %d bytes: %w", limit, store.ErrTooLarge)
	}
	if err != nil {
		return n, fmt.Errorf("memstore: write blob %s: %w", name, err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return n, fmt.Errorf("memstore: write blob %s: %w", name, store.ErrClosed)
	}
	s.blobs[name] = &blob{data: buf.Bytes()}
	return n, nil
}

// LinkBlob is store.DB.LinkBlob: dst shares src's bytes, as a hard link.
func (s *Store) LinkBlob(src, dst string) error {
	if !store.ValidName(src) || !store.ValidName(dst) {
		return fmt.Errorf("memstore: link blob %q to %q: %w", src, dst, store.ErrInvalidName)
	}
	if err := s.lock("LinkBlob"); err != nil {
		return err
	}
	defer s.mu.Unlock()
	b, ok := s.blobs[src]
	if !ok {
		return fmt.Errorf("memstore: link blob %s: %w", src, store.ErrNotFound)
	}
	s.blobs[dst] = b
	return nil
}

// OpenBlob is store.DB.OpenBlob: the reader sees the blob as it was when
// opened.
func (s *Store) OpenBlob(name string) (store.BlobReader, error) {
	if !store.ValidName(name) {
		return nil, fmt.Errorf("memstore: open blob %q: %w", name, store.ErrInvalidName)
	}
	if err := s.lock("OpenBlob"); err != nil {
		return nil, err
	}
	defer s.mu.Unlock()
	b, ok := s.blobs[name]
	if !ok {
		return nil, fmt.Errorf("memstore: blob %s: %w", name, store.ErrNotFound)
	}
	return &blobReader{Reader: bytes.NewReader(b.data), name: name, size: int64(len(b.data))}, nil
}

// RemoveBlob is store.DB.RemoveBlob: a missing blob is no error.
func (s *Store) RemoveBlob(name string) error {
	if !store.ValidName(name) {
		return fmt.Errorf("memstore: remove blob %q: %w", name, store.ErrInvalidName)
	}
	if err := s.lock("RemoveBlob"); err != nil {
		return err
	}
	defer s.mu.Unlock()
	delete(s.blobs, name)
	return nil
}

// SweepBlobs is store.DB.SweepBlobs: removes the blobs no job or upload
// names, returned in name order.
func (s *Store) SweepBlobs() ([]string, error) {
	if err := s.lock("SweepBlobs"); err != nil {
		return nil, err
	}
	defer s.mu.Unlock()
	named := map[string]bool{}
	for _, r := range s.jobs {
		named[r.blob] = true
	}
	for _, u := range s.uploads {
		named[u.Blob] = true
	}
	var removed []string
	for name := range s.blobs {
		if !named[name] {
			removed = append(removed, name)
			delete(s.blobs, name)
		}
	}
	slices.Sort(removed)
	return removed, nil
}

// AccountBytes is store.DB.AccountBytes: bytes shared by several names
// (links) count once.
func (s *Store) AccountBytes(account string) (int64, error) {
	if err := s.lock("AccountBytes"); err != nil {
		return 0, err
	}
	defer s.mu.Unlock()
	seen := map[*blob]bool{}
	var total int64
	add := func(name string) {
		if b, ok := s.blobs[name]; ok && !seen[b] {
			seen[b] = true
			total += int64(len(b.data))
		}
	}
	for _, r := range s.jobs {
		if r.account == account {
			add(r.blob)
		}
	}
	for _, u := range s.uploads {
		if u.Account == account {
			add(u.Blob)
		}
	}
	return total, nil
}

// Blob returns a copy of the blob's bytes and whether it exists, for
// tests' assertions.
func (s *Store) Blob(name string) ([]byte, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	b, ok := s.blobs[name]
	if !ok {
		return nil, false
	}
	return bytes.Clone(b.data), true
}

// BlobNames lists the stored blobs in name order, for tests' assertions.
func (s *Store) BlobNames() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var names []string
	for name := range s.blobs {
		names = append(names, name)
	}
	slices.Sort(names)
	return names
}

// Cluster is nil: the in-memory store is one process's, as the embedded
// store is (store.Store.Cluster).
func (s *Store) Cluster() store.Cluster { return nil }

// LocalBlobPath is false: the blobs are not files, so the daemon reads
// them through OpenBlob as it does a shared store's
// (store.Store.LocalBlobPath).
func (s *Store) LocalBlobPath(string) (string, bool) { return "", false }

// Sealer returns nil: this store keeps content as it is given (store/sealed
// seals it).
func (s *Store) Sealer() store.Sealer { return nil }
