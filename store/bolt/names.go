package bolt

import (
	"fmt"
	"os"

	bolt "go.etcd.io/bbolt"
)

// JobIDs calls fn with the id of every job, in ascending byte order: one
// cursor over the jobs bucket's keys, no record decoded (store/sealed's
// key sweep at a start).
func (db *DB) JobIDs(fn func(id string)) error { return db.eachKey(bucketJobs, fn) }

// UploadIDs calls fn with the id of every upload, in ascending byte order.
func (db *DB) UploadIDs(fn func(id string)) error { return db.eachKey(bucketUploads, fn) }

// BlobNames calls fn with the name of every blob file, in ascending byte
// order (one read of the blob directory).
func (db *DB) BlobNames(fn func(name string)) error {
	entries, err := os.ReadDir(db.blobDir)
	if err != nil {
		return fmt.Errorf("store: blob names: %w", err)
	}
	for _, e := range entries {
		if e.Type().IsRegular() {
			fn(e.Name())
		}
	}
	return nil
}

func (db *DB) eachKey(bucket []byte, fn func(string)) error {
	err := db.bolt.View(func(tx *bolt.Tx) error {
		c := tx.Bucket(bucket).Cursor()
		for k, _ := c.First(); k != nil; k, _ = c.Next() {
			fn(string(k))
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("store: %s ids: %w", bucket, err)
	}
	return nil
}
