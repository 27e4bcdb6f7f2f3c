package sealed

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/earshot-dev/earshot/store"
)

// What a data dir held before sealing was turned on stays as it was
// written: records are read as they are and sealed at their next write,
// which a finished job never has, and a blob is never written again.
// SealExisting seals all of it in place.

// SealReport counts what SealExisting sealed.
type SealReport struct {
	Jobs    int // job records sealed
	Uploads int // upload records sealed
	Blobs   int // blobs (audio) sealed
	// Deliveries is the pending callback deliveries whose bodies were
	// sealed in place.
	Deliveries int
	// Scrubbed is the clear blob files overwritten with zeros once their
	// sealed copy took their place (a backend that keeps blobs as files,
	// each file's last name).
	Scrubbed int
	// KeyGone is the blobs without a data key that were sealed already
	// (they start as a sealed blob does): their key is gone, they are not
	// sealed again and read as store.ErrIntegrity.
	KeyGone int
}

// sealingSuffix names a blob's sealed copy while SealExisting makes it
// (the blob's name and the suffix). A run a kill ended leaves it; the next
// run finishes the switch (the blob's data key was written: the copy goes
// in the clear blob's place) or removes it.
const sealingSuffix = ".sealing"

// SealExisting seals every job, upload, blob and pending callback body
// written before sealing was on (those without a data key), in place: a blob's sealed copy is
// written beside it under a new data key, which is then re-wrapped under
// the blob's name before the copy replaces the clear blob (LinkBlob), and
// the clear file, on a backend that keeps files, is overwritten with
// zeros once nothing else names it; a record is rewritten through the
// layer (UpdateJob, PutUpload), which seals it. Blobs go first, so an
// upload's record is sealed under its blob's key. A blob and the job made
// from it that shared one clear file each get a sealed copy of their own.
//
// Run it only while nothing else uses the store (the daemon stopped:
// earshotd keys seal-existing): a reader of a blob while its key is
// written and its copy not yet in place would fail its integrity check.
// It returns at ctx's end with what it sealed so far; a second run goes
// on from there. Needs a backend that lists its content (store/bolt,
// store/postgres).
func (s *Store) SealExisting(ctx context.Context) (SealReport, error) {
	var rep SealReport
	l, ok := s.inner.(lister)
	if !ok {
		return rep, errors.New("sealed: the backend cannot list what it holds")
	}
	ids := s.ring.IDs()
	has := func(id string) bool { _, ok := s.ring.Get(id); return ok }
	var names, clear []string
	if err := l.BlobNames(func(n string) { names = append(names, n) }); err != nil {
		return rep, err
	}
	for _, n := range names {
		orig, ok := strings.CutSuffix(n, sealingSuffix)
		if !ok || !store.ValidName(orig) {
			continue
		}
		if !has(blobKey(orig)) { // the clear blob is as it was: start again
			if err := s.RemoveBlob(n); err != nil {
				return rep, err
			}
			continue
		}
		scrubbed, err := s.finishSealing(n, orig)
		if err != nil {
			return rep, err
		}
		if scrubbed {
			rep.Scrubbed++
		}
	}
	// The same listing: what the loop above finished has a key now, which
	// the check below sees.
	listed := func(fn func(string)) error {
		for _, n := range names {
			fn(n)
		}
		return nil
	}
	walkSorted(keyedOf(ids, "b"), listed, nil, func(n string) { clear = append(clear, n) })
	for _, n := range clear {
		// A sealed blob sealed again would read as its sealed bytes: its
		// key is asked once more, on its own.
		if strings.HasSuffix(n, sealingSuffix) || !store.ValidName(n) || has(blobKey(n)) {
			continue
		}
		if err := ctx.Err(); err != nil {
			return rep, err
		}
		scrubbed, err := s.sealBlob(n)
		if errors.Is(err, store.ErrNotFound) {
			continue // removed meanwhile
		}
		if errors.Is(err, errKeyGone) {
			rep.KeyGone++
			continue
		}
		if err != nil {
			return rep, fmt.Errorf("sealed: seal blob %s: %w", n, err)
		}
		rep.Blobs++
		if scrubbed {
			rep.Scrubbed++
		}
	}
	var jobs, uploads []string
	if err := walkSorted(keyedOf(ids, "j"), l.JobIDs, nil, func(id string) { jobs = append(jobs, id) }); err != nil {
		return rep, err
	}
	for _, id := range jobs {
		if err := ctx.Err(); err != nil {
			return rep, err
		}
		_, err := s.UpdateJob(id, func(*store.Job) ([]*store.Delivery, error) { return nil, nil })
		if errors.Is(err, store.ErrNotFound) {
			continue
		}
		if err != nil {
			return rep, fmt.Errorf("sealed: seal job %s: %w", id, err)
		}
		rep.Jobs++
	}
	if err := l.UploadIDs(func(id string) { uploads = append(uploads, id) }); err != nil {
		return rep, err
	}
	for _, id := range uploads {
		if err := ctx.Err(); err != nil {
			return rep, err
		}
		u, err := s.inner.Upload(id)
		if errors.Is(err, store.ErrNotFound) || err == nil && strings.HasPrefix(u.Filename, store.SealedPrefix) {
			continue
		}
		if err != nil {
			return rep, fmt.Errorf("sealed: seal upload %s: %w", id, err)
		}
		if err := s.PutUpload(u); err != nil {
			return rep, fmt.Errorf("sealed: seal upload %s: %w", id, err)
		}
		rep.Uploads++
	}
	// After the jobs: a delivery's body is sealed under its job's key.
	n, err := s.sealDeliveries(ctx)
	rep.Deliveries = n
	return rep, err
}

// Unsealed counts the blobs, jobs and pending callback bodies written
// before sealing was on (no data key, a clear body), which SealExisting
// would seal: one listing of each and of the keyring, and each blob
// without a key opened (a sealed one whose key is gone is not counted).
// An upload's record goes with its blob. It stops with ctx's error once
// ctx is done.
func (s *Store) Unsealed(ctx context.Context) (blobs, jobs, deliveries int, err error) {
	l, ok := s.inner.(lister)
	if !ok {
		return 0, 0, 0, errors.New("sealed: the backend cannot list what it holds")
	}
	ids := s.ring.IDs()
	var keyless []string
	err = walkSorted(keyedOf(ids, "b"), l.BlobNames, nil, func(n string) {
		if store.ValidName(n) && !strings.HasSuffix(n, sealingSuffix) {
			keyless = append(keyless, n)
		}
	})
	if err != nil {
		return 0, 0, 0, err
	}
	for _, n := range keyless {
		if err := ctx.Err(); err != nil {
			return 0, 0, 0, err
		}
		if !s.keyGone(n) { // sealed already, its key gone: SealExisting leaves it
			blobs++
		}
	}
	if err = walkSorted(keyedOf(ids, "j"), l.JobIDs, nil, func(string) { jobs++ }); err != nil {
		return 0, 0, 0, err
	}
	clear, err := s.clearDeliveries()
	return blobs, jobs, len(clear), err
}

// keyedOf returns the names of the data keys of kind ("b", "j", "u") among
// ids, sorted as ids are (Keyring.IDs).
func keyedOf(ids []string, kind string) []string {
	var out []string
	for _, id := range ids {
		if k, rest, _ := strings.Cut(id, ":"); k == kind {
			out = append(out, rest)
		}
	}
	return out
}

// walkSorted walks keyed (sorted) and the names list gives (in ascending
// byte order) side by side: keyedOnly gets each of keyed the listing
// lacks, listedOnly each listed name keyed lacks; either may be nil. A
// listing out of order only makes both report more (a key looked up again
// on its own, a name with a key), so callers that act on a name check it
// again.
func walkSorted(keyed []string, list func(func(string)) error, keyedOnly, listedOnly func(string)) error {
	i := 0
	err := list(func(n string) {
		for ; i < len(keyed) && keyed[i] < n; i++ {
			if keyedOnly != nil {
				keyedOnly(keyed[i])
			}
		}
		if i < len(keyed) && keyed[i] == n {
			i++
			return
		}
		if listedOnly != nil {
			listedOnly(n)
		}
	})
	if err == nil && keyedOnly != nil {
		for ; i < len(keyed); i++ {
			keyedOnly(keyed[i])
		}
	}
	return err
}

// keyGone reports whether the blob name, which has no data key, is sealed
// (clearBlob's errKeyGone): its key is gone.
func (s *Store) keyGone(name string) bool {
	r, err := s.inner.OpenBlob(name)
	if err != nil {
		return false
	}
	c, err := clearBlob(name, r)
	if err != nil {
		return errors.Is(err, errKeyGone)
	}
	c.Close()
	return false
}

// sealBlob replaces the clear blob name by a sealed copy and reports
// whether the clear file was overwritten.
func (s *Store) sealBlob(name string) (bool, error) {
	inner, err := s.inner.OpenBlob(name)
	if err != nil {
		return false, err
	}
	r, err := clearBlob(name, inner) // a sealed blob whose key is gone is errKeyGone
	if err != nil {
		return false, err
	}
	tmp := name + sealingSuffix
	_, err = s.WriteBlob(tmp, r, 0)
	r.Close()
	if err != nil {
		return false, errors.Join(err, s.RemoveBlob(tmp))
	}
	return s.finishSealing(tmp, name)
}

// finishSealing puts the sealed copy tmp in the place of the blob name,
// its data key re-wrapped as name's first (LinkBlob; after a run that
// ended past that write, the same key written again), removes tmp with
// its key, and overwrites the clear file (store.Scrub) on a backend that
// keeps blobs as files, reporting whether it did.
func (s *Store) finishSealing(tmp, name string) (bool, error) {
	var clearFile *os.File // kept open across the replacement
	if p, ok := s.inner.LocalBlobPath(name); ok {
		f, err := os.OpenFile(p, os.O_WRONLY, 0)
		if err != nil && !errors.Is(err, os.ErrNotExist) {
			return false, err
		}
		if f != nil {
			defer f.Close()
			clearFile = f
		}
	}
	if err := s.LinkBlob(tmp, name); err != nil {
		return false, fmt.Errorf("sealed: the sealed copy of %s in its place: %w", name, err)
	}
	if err := s.RemoveBlob(tmp); err != nil {
		return false, err
	}
	if clearFile == nil {
		return false, nil
	}
	return store.Scrub(clearFile)
}
