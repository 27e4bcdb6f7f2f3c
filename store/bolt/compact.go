package bolt

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/earshot-dev/earshot/store"
	bolt "go.etcd.io/bbolt"
	berrors "go.etcd.io/bbolt/errors"
)

// Compact rewrites the database of the data directory dir (earshot.db,
// not open: store.ErrLocked while a daemon holds it) into a new file that
// holds only the pages in use, puts it in place by a rename, and then
// overwrites the old file with zeros (store.Scrub). What deleted or
// rewritten records left in bbolt's free pages (a record SealExisting
// sealed in place, a callback secret moved into the keyring) is then gone
// from the data directory's database. It returns the file's size before
// and after.
func Compact(dir string, o *Options) (before, after int64, err error) {
	var opts Options
	if o != nil {
		opts = *o
	}
	if opts.Timeout == 0 {
		opts.Timeout = DefaultTimeout
	}
	path := filepath.Join(dir, dbFile)
	src, err := bolt.Open(path, 0o600, &bolt.Options{Timeout: opts.Timeout, ReadOnly: true})
	if errors.Is(err, berrors.ErrTimeout) {
		return 0, 0, fmt.Errorf("store: compact %s: waited %s: %w", path, opts.Timeout, store.ErrLocked)
	}
	if err != nil {
		return 0, 0, fmt.Errorf("store: compact %s: %w", path, err)
	}
	defer src.Close() // held until the new file is in place
	old, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		return 0, 0, fmt.Errorf("store: compact %s: %w", path, err)
	}
	defer old.Close()
	if fi, err := old.Stat(); err == nil {
		before = fi.Size()
	}
	tmp := path + ".compact"
	if err := os.Remove(tmp); err != nil && !errors.Is(err, os.ErrNotExist) {
		return 0, 0, fmt.Errorf("store: compact %s: %w", path, err)
	}
	dst, err := bolt.Open(tmp, 0o600, &bolt.Options{FreelistType: bolt.FreelistMapType})
	if err != nil {
		return 0, 0, fmt.Errorf("store: compact %s: %w", path, store.NoSpace(err))
	}
	err = bolt.Compact(dst, src, 64<<20)
	if cerr := dst.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		var fi os.FileInfo
		if fi, err = os.Stat(tmp); err == nil {
			after = fi.Size()
			err = os.Rename(tmp, path)
		}
	}
	if err != nil {
		_ = os.Remove(tmp)
		return 0, 0, fmt.Errorf("store: compact %s: %w", path, store.NoSpace(err))
	}
	if err := syncDir(dir); err != nil {
		return before, after, fmt.Errorf("store: compact %s: %w", path, err)
	}
	if _, err := store.Scrub(old); err != nil {
		return before, after, fmt.Errorf("store: compact %s: zero the old file: %w", path, err)
	}
	return before, after, nil
}
