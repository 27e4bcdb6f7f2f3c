package sealed

import (
	"context"
	"crypto/cipher"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"sync"
	"time"

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
func (s *Store) under(id string) bool {
	for _, name := range s.ring.IDs() {
		if e, ok := s.ring.Get(name); ok && e.KEK == id {
			return true
		}
	}
	return false
}

// missingKeys lists the ids of the keys wrapping data keys that no
// configured key is.
func (s *Store) missingKeys() []string {
	var out []string
	for _, name := range s.ring.IDs() {
		e, _ := s.ring.Get(name)
		if s.keks[e.KEK] == nil && !slices.Contains(out, e.KEK) {
			out = append(out, e.KEK)
		}
	}
	slices.Sort(out)
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
	kek := s.kek(e.KEK)
	if kek == nil {
		return nil, fmt.Errorf("sealed: data key of %s is under key %s, not configured: %w", id, e.KEK, store.ErrKeyMissing)
	}
	raw, err := kek.unwrap(id, e.Wrapped)
	if err != nil {
		return nil, err
	}
	defer clear(raw)
	return newGCM(raw)
}

func (s *Store) newDEKLocked(id string) (Entry, bool) {
	raw := make([]byte, KeySize)
	_, _ = rand.Read(raw)
	defer clear(raw)
	kek := s.primaryKEK()
	e := Entry{KEK: kek.ID(), Wrapped: kek.wrap(id, raw)}
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

// Keys and secrets: no content, passed through.

func (s *Store) CreateKey(account string, g store.KeyGrant) (string, store.Key, error) {
	return s.inner.CreateKey(account, g)
}
func (s *Store) Keys() ([]store.Key, error)                    { return s.inner.Keys() }
func (s *Store) Key(id string) (store.Key, error)              { return s.inner.Key(id) }
func (s *Store) RevokeKey(id string) error                     { return s.inner.RevokeKey(id) }
func (s *Store) Authenticate(secret string) (store.Key, error) { return s.inner.Authenticate(secret) }
func (s *Store) CallbackSecret(account string) ([]byte, error) {
	return s.inner.CallbackSecret(account)
}

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

// Uploads.

// PutUpload seals the upload's filename under its own data key.
func (s *Store) PutUpload(u *store.Upload) error {
	if u == nil {
		return s.inner.PutUpload(u)
	}
	if err := u.Validate(); err != nil {
		return err
	}
	k, err := s.uploadDEK(u, true)
	if err != nil {
		return err
	}
	c := *u
	c.Filename = sealText(k, "upload\x00"+u.ID+"\x00filename", []byte(u.Filename))
	if err := s.inner.PutUpload(&c); err != nil {
		return err
	}
	c.Filename = u.Filename
	*u = c
	return nil
}

func (s *Store) Upload(id string) (*store.Upload, error) {
	u, err := s.inner.Upload(id)
	if err != nil {
		return nil, err
	}
	k, err := s.uploadDEK(u, false)
	if err != nil {
		return nil, err
	}
	if err := openUploadName(k, u); err != nil {
		return nil, fmt.Errorf("sealed: upload %s: %w", id, err)
	}
	return u, nil
}

// uploadDEK is the data key an upload's record is sealed under: its own
// if it has one (a record written before uploads shared their blob's key,
// or whose blob had none); else its blob's, made durable by WriteBlob
// before the record is written, so a new upload costs one keyring write
// (and sync), not two. The field's additional data names the upload, so
// the shared key opens it as this upload's file name only. With create
// and neither key, the upload gets its own (a blob written before sealing
// was on).
func (s *Store) uploadDEK(u *store.Upload, create bool) (cipher.AEAD, error) {
	if k, err := s.dek(uploadKey(u.ID), false); err != nil || k != nil {
		return k, err
	}
	if store.ValidName(u.Blob) {
		if k, err := s.dek(blobKey(u.Blob), false); err != nil || k != nil {
			return k, err
		}
	}
	return s.dek(uploadKey(u.ID), create)
}

// DeleteUpload deletes the record and destroys its own data key, if it has
// one; a record sealed under its blob's key is unreadable once the blob is
// removed (RemoveBlob, ExpireUploads, SweepBlobs destroy that key).
func (s *Store) DeleteUpload(id string) error {
	if err := s.inner.DeleteUpload(id); err != nil {
		return err
	}
	return s.shred(uploadKey(id))
}

// ExpireUploads expires as the backend does and destroys the uploads'
// data keys, and their blobs' once the blobs are gone.
func (s *Store) ExpireUploads(cut store.Cutoff, limit int) ([]string, error) {
	ids, err := s.inner.ExpireUploads(cut, limit)
	if len(ids) == 0 {
		return ids, err
	}
	keys := make([]string, 0, len(ids))
	for _, id := range ids {
		keys = append(keys, uploadKey(id))
	}
	return ids, errors.Join(err, s.shred(keys...), s.sweepBlobKeys())
}

// Outbox: bodies hold transcripts, sealed under their job's data key.

func (s *Store) deliveryKey(d *store.Delivery, create bool) (cipher.AEAD, error) {
	if d.JobID != "" {
		return s.dek(jobKey(d.JobID), create)
	}
	return s.dek(deliveryKey(d.ID), create)
}

func (s *Store) EnqueueDelivery(d *store.Delivery) error {
	if d == nil {
		return s.inner.EnqueueDelivery(d)
	}
	if err := store.PrepareDelivery(d); err != nil {
		return err
	}
	k, err := s.deliveryKey(d, true)
	if err != nil {
		return err
	}
	c := *d
	c.Body = []byte(sealText(k, deliveryAAD(d), d.Body))
	if err := s.inner.EnqueueDelivery(&c); err != nil {
		return err
	}
	c.Body = d.Body
	*d = c
	return nil
}

func (s *Store) openDeliveries(ds []*store.Delivery, err error) ([]*store.Delivery, error) {
	if err != nil {
		return nil, err
	}
	for _, d := range ds {
		if !isSealed(string(d.Body)) {
			continue
		}
		k, err := s.deliveryKey(d, false)
		if err != nil {
			return nil, err
		}
		body, err := openField(k, deliveryAAD(d), string(d.Body))
		if err != nil {
			return nil, fmt.Errorf("sealed: delivery %s: %w", d.ID, err)
		}
		d.Body = body
	}
	return ds, nil
}

func (s *Store) DueDeliveries(now time.Time, limit int) ([]*store.Delivery, error) {
	return s.openDeliveries(s.inner.DueDeliveries(now, limit))
}
func (s *Store) ClaimDeliveries(now time.Time, limit int) ([]*store.Delivery, error) {
	return s.openDeliveries(s.inner.ClaimDeliveries(now, limit))
}
func (s *Store) NextDelivery() (time.Time, bool, error) { return s.inner.NextDelivery() }
func (s *Store) RescheduleDelivery(id string, next time.Time, lastErr string) error {
	return s.inner.RescheduleDelivery(id, next, lastErr)
}

// DeleteDelivery deletes it and, for one without a job, its data key.
func (s *Store) DeleteDelivery(id string) error {
	if err := s.inner.DeleteDelivery(id); err != nil {
		return err
	}
	if _, ok := s.ring.Get(deliveryKey(id)); ok {
		return s.shred(deliveryKey(id))
	}
	return nil
}
func (s *Store) PendingDeliveries() (int, error) { return s.inner.PendingDeliveries() }

// Blobs.

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
	kek := s.primaryKEK()
	if k, err = newGCM(raw); err != nil {
		s.ringMu.Unlock()
		return nil, nil, err
	}
	e := Entry{KEK: kek.ID(), Wrapped: kek.wrap(id, raw)}
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
	kek, primary := s.kek(e.KEK), s.primaryKEK()
	if kek == nil {
		return fmt.Errorf("sealed: data key of blob %s is under key %s, not configured: %w", src, e.KEK, store.ErrKeyMissing)
	}
	raw, err := kek.unwrap(blobKey(src), e.Wrapped)
	if err != nil {
		return err
	}
	defer clear(raw)
	s.ringMu.Lock()
	err = s.ring.Put(blobKey(dst), Entry{KEK: primary.ID(), Wrapped: primary.wrap(blobKey(dst), raw)})
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
	if err != nil || k == nil {
		if err != nil {
			r.Close()
			return nil, err
		}
		return r, nil
	}
	o, err := newOpenReader(k, name, r)
	if err != nil {
		r.Close()
		return nil, err
	}
	return o, nil
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

// sweepBlobKeys destroys the data keys of blobs that are gone.
func (s *Store) sweepBlobKeys() error {
	var gone []string
	for _, id := range s.ring.IDs() {
		if name, ok := strings.CutPrefix(id, "b:"); ok && !s.blobExists(name) {
			gone = append(gone, id)
		}
	}
	return s.shred(gone...)
}

func (s *Store) sweepKeys() error {
	var gone []string
	for _, id := range s.ring.IDs() {
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
