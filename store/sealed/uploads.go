package sealed

import (
	"crypto/cipher"
	"errors"
	"fmt"

	"github.com/earshot-dev/earshot/store"
)

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
