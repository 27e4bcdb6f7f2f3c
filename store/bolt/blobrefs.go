package bolt

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"
	"syscall"

	"github.com/earshot-dev/earshot/store"

	bolt "go.etcd.io/bbolt"
)

// blobRef is what a record says about the blob it names.
type blobRef struct {
	Account string `json:"account"`
	Blob    string `json:"blob"`
}

// jobBlobRef reads the account and blob of a stored job record from its
// small JSON head only (see jobFormat).
func jobBlobRef(v []byte) (blobRef, error) {
	var r blobRef
	if len(v) == 0 || v[0] != jobFormat {
		return r, fmt.Errorf("job record format: %w", store.ErrCorrupt)
	}
	n, w := binary.Uvarint(v[1:])
	if w <= 0 || uint64(len(v)-1-w) < n {
		return r, fmt.Errorf("job record truncated: %w", store.ErrCorrupt)
	}
	if err := json.Unmarshal(v[1+w:1+w+int(n)], &r); err != nil {
		return r, fmt.Errorf("job record head: %w: %w", store.ErrCorrupt, err)
	}
	return r, nil
}

// SweepBlobs removes every blob file that no job and no upload names (left
// by a crash between a write and its record, or by an older version that
// did not clean a failed job's download), and returns their names. Only
// this process writes blobs, but a blob is written before the record that
// names it: call SweepBlobs before anything writes blobs (at start).
// Temporary files are Open's business and left alone here.
func (db *DB) SweepBlobs() ([]string, error) {
	refs := map[string]bool{}
	err := db.bolt.View(func(tx *bolt.Tx) error {
		err := tx.Bucket(bucketJobs).ForEach(func(k, v []byte) error {
			r, err := jobBlobRef(v)
			if err != nil {
				return fmt.Errorf("job %s: %w", k, err)
			}
			if r.Blob != "" {
				refs[r.Blob] = true
			}
			return nil
		})
		if err != nil {
			return err
		}
		return tx.Bucket(bucketUploads).ForEach(func(k, v []byte) error {
			var r blobRef
			if err := json.Unmarshal(v, &r); err != nil {
				return fmt.Errorf("upload %s: %w: %w", k, store.ErrCorrupt, err)
			}
			if r.Blob != "" {
				refs[r.Blob] = true
			}
			return nil
		})
	})
	if err != nil {
		return nil, fmt.Errorf("store: sweep blobs: %w", err)
	}
	entries, err := os.ReadDir(db.blobDir)
	if err != nil {
		return nil, fmt.Errorf("store: sweep blobs: %w", err)
	}
	var removed []string
	var errs []error
	for _, e := range entries {
		name := e.Name()
		if refs[name] || strings.HasPrefix(name, store.TempBlobPrefix) || !e.Type().IsRegular() {
			continue
		}
		if err := os.Remove(db.BlobPath(name)); err != nil && !errors.Is(err, fs.ErrNotExist) {
			errs = append(errs, err)
			continue
		}
		removed = append(removed, name)
	}
	if len(errs) > 0 {
		return removed, fmt.Errorf("store: sweep blobs: %w", errors.Join(errs...))
	}
	return removed, nil
}

// AccountBytes returns the bytes on disk of every blob the account's jobs
// and uploads name, counting a file with several names (an upload and the
// jobs linked to it) once. It reads the account's job index, every upload
// record and stats each blob: call it when a decision needs it, not per
// request.
func (db *DB) AccountBytes(account string) (int64, error) {
	var names []string
	err := db.bolt.View(func(tx *bolt.Tx) error {
		jobs := tx.Bucket(bucketJobs)
		c := tx.Bucket(bucketJobIndex).Cursor()
		for _, kind := range []store.Kind{store.KindPreRecorded, store.KindLive} {
			prefix := jobIndexPrefix(account, kind)
			for k, _ := c.Seek(prefix); k != nil && strings.HasPrefix(string(k), string(prefix)); k, _ = c.Next() {
				id := k[len(prefix)+8:] // after the 8-byte creation time
				v := jobs.Get(id)
				if v == nil {
					continue
				}
				r, err := jobBlobRef(v)
				if err != nil {
					return fmt.Errorf("job %s: %w", id, err)
				}
				if r.Blob != "" {
					names = append(names, r.Blob)
				}
			}
		}
		return tx.Bucket(bucketUploads).ForEach(func(k, v []byte) error {
			var r blobRef
			if err := json.Unmarshal(v, &r); err != nil {
				return fmt.Errorf("upload %s: %w: %w", k, store.ErrCorrupt, err)
			}
			if r.Account == account && r.Blob != "" {
				names = append(names, r.Blob)
			}
			return nil
		})
	})
	if err != nil {
		return 0, fmt.Errorf("store: account bytes: %w", err)
	}
	type inode struct{ dev, ino uint64 }
	seen := map[inode]bool{}
	var total int64
	for _, name := range names {
		if !store.ValidName(name) {
			continue
		}
		fi, err := os.Stat(db.BlobPath(name))
		if err != nil {
			continue // removed meanwhile, or not written yet
		}
		if st, ok := fi.Sys().(*syscall.Stat_t); ok {
			k := inode{uint64(st.Dev), st.Ino}
			if seen[k] {
				continue
			}
			seen[k] = true
		}
		total += fi.Size()
	}
	return total, nil
}
