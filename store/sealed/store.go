package sealed

import (
	"context"
	"crypto/cipher"
	"crypto/rand"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/earshot-dev/earshot/store"
)

// Options configures Open.
type Options struct {
	// Keys are the key-encryption keys: Keys[0] wraps new data keys; any
	// other opens data keys wrapped before a rotation to Keys[0] finished.
	// At least one.
	Keys []*KEK
	// Keyring keeps the wrapped data keys; Open takes it over (Close closes
	// it).
	Keyring Keyring
	// RotateRate bounds a rotation's re-wraps per second (0: 500), so it
	// never takes the disk from the requests it runs beside.
	RotateRate int
}

// Store is a store.Store sealing what it keeps of content in the backend
// it wraps (package doc).
type Store struct {
	inner store.Store
	ring  Keyring
	rate  int

	keysMu  sync.RWMutex
	keks    map[string]*KEK // by id, guarded by keysMu
	primary *KEK            // guarded by keysMu

	// ringMu serialises the keyring's read-modify-writes: a data key's
	// creation, its destruction and a rotation's re-wrap of it.
	ringMu  sync.Mutex
	writing map[string]int // blobs being written (their key made first), guarded by ringMu

	rotateMu sync.Mutex // one rotation at a time
	// rewrapped, when set (tests only), is called after each re-wrap of a
	// rotation with the count so far: the failpoint that stops one there.
	rewrapped func(n int)
	ctx       context.Context // ends at Close
	cancel    context.CancelFunc
	wg        sync.WaitGroup
	closed    sync.Once
}

// Open wraps inner. Every data key in the keyring must be under one of
// o.Keys or of the rotation the keyring records as unfinished (whose key
// files it then reads); else store.ErrKeyMissing names the key ids the
// store needs. An unfinished rotation resumes in the background (Close
// waits for it).
func Open(inner store.Store, o Options) (*Store, error) {
	if len(o.Keys) == 0 {
		return nil, fmt.Errorf("sealed: no key-encryption key: %w", store.ErrKeyMissing)
	}
	s := &Store{inner: inner, ring: o.Keyring, rate: o.RotateRate, keks: map[string]*KEK{}, primary: o.Keys[0], writing: map[string]int{}}
	if s.rate <= 0 {
		s.rate = 500
	}
	for _, k := range o.Keys {
		s.keks[k.ID()] = k
	}
	rot := o.Keyring.Rotation()
	if rot != nil {
		for _, side := range []struct{ id, file string }{{rot.From, rot.FromFile}, {rot.To, rot.ToFile}} {
			if s.keks[side.id] != nil {
				continue
			}
			k, err := LoadKeyFile(side.file)
			if err != nil {
				if side.id == rot.From && !s.under(rot.From) {
					continue // nothing left under the old key
				}
				return nil, fmt.Errorf("sealed: unfinished rotation from key %s to key %s needs key %s: %w: %w", rot.From, rot.To, side.id, store.ErrKeyMissing, err)
			}
			if k.ID() != side.id {
				return nil, fmt.Errorf("sealed: unfinished rotation needs key %s, %s holds key %s: %w", side.id, side.file, k.ID(), store.ErrKeyMissing)
			}
			s.keks[k.ID()] = k
		}
		s.primary = s.keks[rot.To]
	}
	if missing := s.missingKeys(); len(missing) > 0 {
		have := slices.Sorted(mapKeys(s.keks))
		return nil, fmt.Errorf("sealed: the store's data keys are wrapped by key %s, the configured key is %s (store.encryption_key_file): %w",
			strings.Join(missing, ", "), strings.Join(have, ", "), store.ErrKeyMissing)
	}
	if err := s.moveSecrets(); err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(context.Background())
	s.ctx, s.cancel = ctx, cancel
	if rot != nil {
		to := s.primary
		s.wg.Go(func() { _ = s.rewrap(ctx, to) })
	}
	return s, nil
}

func mapKeys[V any](m map[string]V) func(func(string) bool) {
	return func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

// under reports whether any data key is wrapped by key id.
func (s *Store) under(id string) bool { return slices.Contains(s.ring.KEKs(), id) }

// missingKeys lists the ids of the keys wrapping data keys that no
// configured key is, sorted. One read of the keyring (Keyring.KEKs):
// before (until 2026-11-30) one per data key, a query each on PostgreSQL.
func (s *Store) missingKeys() []string {
	var out []string
	for _, id := range s.ring.KEKs() {
		if s.keks[id] == nil {
			out = append(out, id)
		}
	}
	return out
}

// Close stops a rotation in progress (resumed at the next Open), then
// closes the backend and the keyring; idempotent.
func (s *Store) Close() error {
	var err error
	s.closed.Do(func() {
		s.cancel()
		s.wg.Wait()
		err = errors.Join(s.inner.Close(), s.ring.Close())
	})
	return err
}

func (s *Store) closing() <-chan struct{} { return s.ctx.Done() }

// Sealer returns s: it seals what it keeps, local spools too.
func (s *Store) Sealer() store.Sealer { return s }

// Check checks the backend.
func (s *Store) Check() error { return s.inner.Check() }

// Keyring ids: one data key per job, upload, blob, and delivery without
// a job.
func jobKey(id string) string      { return "j:" + id }
func uploadKey(id string) string   { return "u:" + id }
func blobKey(name string) string   { return "b:" + name }
func deliveryKey(id string) string { return "d:" + id }

// dek returns id's data key, nil when it has none; with create a new one
// is made (and kept) when it has none.
func (s *Store) dek(id string, create bool) (cipher.AEAD, error) {
	e, ok := s.ring.Get(id)
	if !ok && create {
		s.ringMu.Lock()
		e, ok = s.ring.Get(id)
		if !ok {
			e, ok = s.newDEKLocked(id)
		}
		s.ringMu.Unlock()
		if !ok {
			return nil, fmt.Errorf("sealed: data key of %s: keyring write failed: %w", id, store.ErrUnavailable)
		}
	}
	if !ok {
		return nil, nil
	}
	raw, err := s.unwrapEntry(id, e)
	if err != nil {
		return nil, err
	}
	defer clear(raw)
	return newGCM(raw)
}

// unwrapEntry returns the data key or secret id's entry e holds, opened
// with the key-encryption key e names: store.ErrKeyMissing when that key
// is not configured. The caller clears it after use.
func (s *Store) unwrapEntry(id string, e Entry) ([]byte, error) {
	kek := s.kek(e.KEK)
	if kek == nil {
		return nil, fmt.Errorf("sealed: data key of %s is under key %s, not configured: %w", id, e.KEK, store.ErrKeyMissing)
	}
	return kek.unwrap(id, e.Wrapped)
}

// wrapEntry is the keyring entry of raw, id's data key or secret, wrapped
// by the primary key (the rotation's new key while one runs). Call it
// under ringMu, so that a rotation's re-wrap does not pass the entry by.
func (s *Store) wrapEntry(id string, raw []byte) Entry {
	kek := s.primaryKEK()
	return Entry{KEK: kek.ID(), Wrapped: kek.wrap(id, raw)}
}

func (s *Store) newDEKLocked(id string) (Entry, bool) {
	raw := make([]byte, KeySize)
	_, _ = rand.Read(raw)
	defer clear(raw)
	e := s.wrapEntry(id, raw)
	if err := s.ring.Put(id, e); err != nil {
		return Entry{}, false
	}
	return e, true
}

// shred destroys the data keys ids.
func (s *Store) shred(ids ...string) error {
	s.ringMu.Lock()
	defer s.ringMu.Unlock()
	var errs []error
	for _, id := range ids {
		if s.writing[strings.TrimPrefix(id, "b:")] > 0 && strings.HasPrefix(id, "b:") {
			continue
		}
		if err := s.ring.Delete(id); err != nil {
			errs = append(errs, err)
		}
	}
	if len(errs) > 0 {
		return fmt.Errorf("sealed: destroy data keys: %w", errors.Join(errs...))
	}
	return nil
}

// API keys: no content (hashes of secrets), passed through. Callback
// secrets are kept in the keyring (secret.go).

func (s *Store) CreateKey(account string, g store.KeyGrant) (string, store.Key, error) {
	return s.inner.CreateKey(account, g)
}
func (s *Store) Keys() ([]store.Key, error)                    { return s.inner.Keys() }
func (s *Store) Key(id string) (store.Key, error)              { return s.inner.Key(id) }
func (s *Store) RevokeKey(id string) error                     { return s.inner.RevokeKey(id) }
func (s *Store) Authenticate(secret string) (store.Key, error) { return s.inner.Authenticate(secret) }

// Jobs.

func (s *Store) sealJob(j *store.Job) (*store.Job, error) {
	if err := j.Validate(); err != nil {
		return nil, err
	}
	k, err := s.dek(jobKey(j.ID), true)
	if err != nil {
		return nil, err
	}
	return sealJob(k, j)
}

// open opens a job the backend returned (nil stays nil).
func (s *Store) open(j *store.Job, err error) (*store.Job, error) {
	if err != nil || j == nil {
		return j, err
	}
	k, err := s.dek(jobKey(j.ID), false)
	if err != nil {
		return nil, err
	}
	id := j.ID
	j, err = openJob(k, j)
	if err != nil {
		return nil, fmt.Errorf("sealed: job %s: %w", id, err)
	}
	return j, nil
}

func (s *Store) openAll(js []*store.Job, err error) ([]*store.Job, error) {
	if err != nil {
		return nil, err
	}
	for i, j := range js {
		if js[i], err = s.open(j, nil); err != nil {
			return nil, err
		}
	}
	return js, nil
}

// CreateJob seals j under a new data key and creates it.
func (s *Store) CreateJob(j *store.Job) error {
	if j == nil {
		return s.inner.CreateJob(j)
	}
	c, err := s.sealJob(j)
	if err != nil {
		return err
	}
	if err := s.inner.CreateJob(c); err != nil {
		return err
	}
	*j = *copyBack(j, c)
	return nil
}

// copyBack returns j with what the backend filled in c (times in UTC)
// and j's clear content.
func copyBack(j, c *store.Job) *store.Job {
	out := *c
	out.Params, out.Result, out.CustomMetadata, out.PostSessionMetadata, out.File = j.Params, j.Result, j.CustomMetadata, j.PostSessionMetadata, j.File
	return &out
}

func (s *Store) Job(id string) (*store.Job, error) { return s.open(s.inner.Job(id)) }

// UpdateJob runs fn on the job opened and seals what it leaves; the
// deliveries it returns are sealed under the job's data key.
func (s *Store) UpdateJob(id string, fn store.UpdateFunc) (*store.Job, error) {
	return s.open(s.inner.UpdateJob(id, func(j *store.Job) ([]*store.Delivery, error) {
		k, err := s.dek(jobKey(j.ID), true)
		if err != nil {
			return nil, err
		}
		clear, err := openJob(k, j)
		if err != nil {
			return nil, fmt.Errorf("sealed: job %s: %w", id, err)
		}
		ds, err := fn(clear)
		if err != nil {
			return nil, err
		}
		sealed, err := sealJob(k, clear)
		if err != nil {
			return nil, err
		}
		*j = *sealed
		for _, d := range ds {
			if d == nil {
				continue
			}
			d.OwnedBy(clear)
			d.Body = []byte(sealText(k, deliveryAAD(d), d.Body))
		}
		return ds, nil
	}))
}

// DeleteJob deletes the job and destroys its data key and its blob's.
func (s *Store) DeleteJob(id string) error {
	j, err := s.inner.Job(id)
	if err != nil {
		return err
	}
	err = s.inner.DeleteJob(id)
	if err != nil && !errors.Is(err, store.ErrNotFound) && !s.gone(id) {
		return err
	}
	keys := []string{jobKey(id)}
	if j.Blob != "" && !s.blobExists(j.Blob) {
		keys = append(keys, blobKey(j.Blob))
	}
	return errors.Join(err, s.shred(keys...))
}

func (s *Store) gone(id string) bool {
	_, err := s.inner.Job(id)
	return errors.Is(err, store.ErrNotFound)
}

// ListJobs lists as the backend does; with a metadata filter the filter is
// applied here, to the opened metadata, Offset and Limit counting the jobs
// that match.
func (s *Store) ListJobs(q store.ListQuery) ([]*store.Job, error) {
	if len(q.Metadata) == 0 {
		return s.openAll(s.inner.ListJobs(q))
	}
	return store.CollectJobs(q, s.EachJob)
}

// EachJob calls fn with each job of q, opened (as ListJobs filters).
func (s *Store) EachJob(q store.ListQuery, fn func(*store.Job) bool) error {
	filter, offset, limit := q.Metadata, q.Offset, q.Limit
	if len(filter) > 0 {
		q.Metadata, q.Offset, q.Limit = nil, 0, 0
	}
	var openErr error
	n := 0
	err := s.inner.EachJob(q, func(j *store.Job) bool {
		j, openErr = s.open(j, nil)
		if openErr != nil {
			return false
		}
		if len(filter) > 0 {
			if !store.MetadataMatches(j.CustomMetadata, filter) {
				return true
			}
			if n++; n <= offset {
				return true
			}
			if limit > 0 && n > offset+limit {
				return false
			}
		}
		return fn(j)
	})
	return errors.Join(err, openErr)
}

func (s *Store) CountJobs(kind store.Kind, status store.Status) (int, error) {
	return s.inner.CountJobs(kind, status)
}

// ExpireJobs expires as the backend does and destroys the expired jobs'
// data keys, and their blobs' once the blobs are gone.
func (s *Store) ExpireJobs(kind store.Kind, cut store.Cutoff, limit int) ([]string, error) {
	ids, err := s.inner.ExpireJobs(kind, cut, limit)
	if len(ids) == 0 {
		return ids, err
	}
	keys := make([]string, 0, len(ids))
	for _, id := range ids {
		keys = append(keys, jobKey(id))
	}
	return ids, errors.Join(err, s.shred(keys...), s.sweepBlobKeys())
}

// Queue.

func (s *Store) ClaimNext(kind store.Kind) (*store.Job, error) {
	return s.open(s.inner.ClaimNext(kind))
}
func (s *Store) ClaimNextAfter(kind store.Kind, after string) (*store.Job, error) {
	return s.open(s.inner.ClaimNextAfter(kind, after))
}
func (s *Store) AwaitingAudio() ([]*store.Job, error) { return s.openAll(s.inner.AwaitingAudio()) }
func (s *Store) Recover(o store.RecoverOptions) (store.RecoverReport, error) {
	return s.inner.Recover(o)
}
func (s *Store) ClaimBatchPass() (*store.Job, error) { return s.open(s.inner.ClaimBatchPass()) }
func (s *Store) PendingBatchPasses() (int, error)    { return s.inner.PendingBatchPasses() }
