package bolt

import (
	"encoding/json"
	"fmt"

	"github.com/earshot-dev/earshot/store"

	bolt "go.etcd.io/bbolt"
)

// PutUpload stores u, replacing any upload with the same ID. An empty ID or
// Account, or a Filename or Extension over MaxFilenameBytes, is ErrInvalid.
func (db *DB) PutUpload(u *store.Upload) error {
	if u == nil || u.ID == "" || len(u.ID) > store.MaxIDLen || u.Account == "" {
		return fmt.Errorf("store: put upload: missing id or account: %w", store.ErrInvalid)
	}
	if len(u.Filename) > store.MaxFilenameBytes || len(u.Extension) > store.MaxFilenameBytes {
		return fmt.Errorf("store: put upload %s: filename of %d bytes > limit %d: %w", u.ID, len(u.Filename), store.MaxFilenameBytes, store.ErrInvalid)
	}
	rec := *u
	rec.CreatedAt = rec.CreatedAt.UTC()
	v, err := json.Marshal(&rec)
	if err != nil {
		return fmt.Errorf("store: put upload %s: %w", u.ID, err)
	}
	err = db.update(func(tx *bolt.Tx) error {
		return tx.Bucket(bucketUploads).Put([]byte(rec.ID), v)
	})
	if err != nil {
		return fmt.Errorf("store: put upload %s: %w", u.ID, err)
	}
	return nil
}

// Upload returns the upload with the given id; an unknown id is
// ErrNotFound.
func (db *DB) Upload(id string) (*store.Upload, error) {
	u := new(store.Upload)
	err := db.bolt.View(func(tx *bolt.Tx) error {
		v := tx.Bucket(bucketUploads).Get([]byte(id))
		if v == nil {
			return fmt.Errorf("upload %s: %w", id, store.ErrNotFound)
		}
		return json.Unmarshal(v, u)
	})
	if err != nil {
		return nil, fmt.Errorf("store: %w", err)
	}
	return u, nil
}

// DeleteUpload removes the upload record (not its blob, which a job may
// have linked). A missing upload is not an error.
func (db *DB) DeleteUpload(id string) error {
	err := db.update(func(tx *bolt.Tx) error {
		return tx.Bucket(bucketUploads).Delete([]byte(id))
	})
	if err != nil {
		return fmt.Errorf("store: delete upload %s: %w", id, err)
	}
	return nil
}
