package store

import (
	"encoding/json"
	"fmt"
	"time"

	bolt "go.etcd.io/bbolt"
)

// MaxFilenameBytes bounds Upload.Filename and Extension: a filename is
// copied into every job that names the upload, so it must stay short
// (255 bytes, as most file systems allow).
const MaxFilenameBytes = 255

// Upload is an audio file uploaded ahead of a job that names it.
type Upload struct {
	ID            string    `json:"id"`
	Account       string    `json:"account"`
	Filename      string    `json:"filename"`
	Extension     string    `json:"extension"`
	Size          int64     `json:"size"`           // bytes
	AudioDuration float64   `json:"audio_duration"` // seconds
	Channels      int       `json:"channels"`
	CreatedAt     time.Time `json:"created_at"`
	Blob          string    `json:"blob"` // blob holding the bytes
}

// PutUpload stores u, replacing any upload with the same ID. An empty ID or
// Account, or a Filename or Extension over MaxFilenameBytes, is ErrInvalid.
func (db *DB) PutUpload(u *Upload) error {
	if u == nil || u.ID == "" || len(u.ID) > maxIDLen || u.Account == "" {
		return fmt.Errorf("store: put upload: missing id or account: %w", ErrInvalid)
	}
	if len(u.Filename) > MaxFilenameBytes || len(u.Extension) > MaxFilenameBytes {
		return fmt.Errorf("store: put upload %s: filename of %d bytes > limit %d: %w", u.ID, len(u.Filename), MaxFilenameBytes, ErrInvalid)
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
func (db *DB) Upload(id string) (*Upload, error) {
	u := new(Upload)
	err := db.bolt.View(func(tx *bolt.Tx) error {
		v := tx.Bucket(bucketUploads).Get([]byte(id))
		if v == nil {
			return fmt.Errorf("upload %s: %w", id, ErrNotFound)
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
