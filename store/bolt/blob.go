package bolt

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/earshot-dev/earshot/store"
)

// BlobPath returns the absolute path of the blob name. It does not check the
// name; callers validate it with ValidName first.
func (db *DB) BlobPath(name string) string { return filepath.Join(db.blobDir, name) }

// LocalBlobPath returns BlobPath(name) and true: a bbolt store's blobs are
// files in its directory.
func (db *DB) LocalBlobPath(name string) (string, bool) { return db.BlobPath(name), true }

// WriteBlob stores at most limit bytes from r as the blob name and returns
// how many it wrote. The bytes go to a temporary file in the blob directory,
// which is fsynced and renamed over name, and the directory is fsynced, so
// the blob is either absent, the previous one, or complete. More than limit
// bytes is ErrTooLarge and a full disk ErrNoSpace (wrapped); in both cases
// the partial file is removed. A limit <= 0 means no limit.
func (db *DB) WriteBlob(name string, r io.Reader, limit int64) (int64, error) {
	if !store.ValidName(name) {
		return 0, fmt.Errorf("store: write blob %q: %w", name, store.ErrInvalidName)
	}
	f, err := os.CreateTemp(db.blobDir, store.TempBlobPrefix+"*")
	if err != nil {
		return 0, fmt.Errorf("store: write blob %s: %w", name, store.NoSpace(err))
	}
	n, err := db.fillTemp(f, r, limit)
	if err != nil {
		_ = os.Remove(f.Name())
		return n, fmt.Errorf("store: write blob %s: %w", name, err)
	}
	if err := db.commitTemp(f.Name(), name); err != nil {
		return n, fmt.Errorf("store: write blob %s: %w", name, err)
	}
	return n, nil
}

// fillTemp copies r into f (at most limit bytes), syncs and closes f.
func (db *DB) fillTemp(f *os.File, r io.Reader, limit int64) (int64, error) {
	src := r
	if limit > 0 {
		src = io.LimitReader(r, limit+1)
	}
	n, err := io.Copy(f, src)
	if err == nil && limit > 0 && n > limit {
		err = fmt.Errorf("more than %d bytes: %w", limit, store.ErrTooLarge)
	}
	if err == nil && !db.noSync {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return n, store.NoSpace(err)
}

// commitTemp renames the finished temporary file to name and syncs the
// directory; on failure the temporary file is removed.
func (db *DB) commitTemp(tmp, name string) error {
	if err := os.Rename(tmp, db.BlobPath(name)); err != nil {
		_ = os.Remove(tmp)
		return store.NoSpace(err)
	}
	return db.syncBlobDir()
}

func (db *DB) syncBlobDir() error {
	if db.noSync {
		return nil
	}
	d, err := os.Open(db.blobDir)
	if err != nil {
		return err
	}
	err = d.Sync()
	if cerr := d.Close(); err == nil {
		err = cerr
	}
	return store.NoSpace(err)
}

// LinkBlob makes dst a second name for the blob src (a hard link), copying
// it when the file system cannot link. An existing dst is replaced. A
// missing src is ErrNotFound.
func (db *DB) LinkBlob(src, dst string) error {
	if !store.ValidName(src) || !store.ValidName(dst) {
		return fmt.Errorf("store: link blob %q to %q: %w", src, dst, store.ErrInvalidName)
	}
	srcPath := db.BlobPath(src)
	if _, err := os.Stat(srcPath); errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("store: link blob %s: %w", src, store.ErrNotFound)
	}
	// Link to a fresh temporary name, then rename over dst, so an existing
	// dst is replaced atomically.
	tmp := filepath.Join(db.blobDir, store.TempBlobPrefix+"link-"+store.RandomID(8))
	if err := os.Link(srcPath, tmp); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("store: link blob %s: %w", src, store.ErrNotFound)
		}
		if err := db.copyBlob(srcPath, tmp); err != nil {
			return fmt.Errorf("store: link blob %s to %s: %w", src, dst, err)
		}
	}
	if err := db.commitTemp(tmp, dst); err != nil {
		return fmt.Errorf("store: link blob %s to %s: %w", src, dst, err)
	}
	return nil
}

// copyBlob copies srcPath to the new file tmp, removing tmp on failure.
func (db *DB) copyBlob(srcPath, tmp string) error {
	in, err := os.Open(srcPath)
	if errors.Is(err, fs.ErrNotExist) {
		return store.ErrNotFound
	}
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return store.NoSpace(err)
	}
	if _, err := db.fillTemp(out, in, 0); err != nil {
		_ = os.Remove(tmp)
		return err
	}
	return nil
}

// OpenBlob opens the blob name for reading; the caller closes it. A missing
// blob is ErrNotFound.
func (db *DB) OpenBlob(name string) (store.BlobReader, error) {
	if !store.ValidName(name) {
		return nil, fmt.Errorf("store: open blob %q: %w", name, store.ErrInvalidName)
	}
	f, err := os.Open(db.BlobPath(name))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("store: blob %s: %w", name, store.ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("store: open blob %s: %w", name, err)
	}
	return f, nil
}

// RemoveBlob deletes the blob name; a missing blob is not an error.
func (db *DB) RemoveBlob(name string) error {
	if !store.ValidName(name) {
		return fmt.Errorf("store: remove blob %q: %w", name, store.ErrInvalidName)
	}
	if err := os.Remove(db.BlobPath(name)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("store: remove blob %s: %w", name, err)
	}
	return nil
}
