package bolt

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"

	"github.com/earshot-dev/earshot/store"
	bolt "go.etcd.io/bbolt"
)

// dbFile is the database's name inside the data directory.
const dbFile = "earshot.db"

// RestoreBackupSuffix is appended to earshot.db to name the file Restore
// keeps: the database as it was before the restore.
const RestoreBackupSuffix = ".bak"

// Backup writes a consistent copy of the database (earshot.db, not the blob
// files) to w and returns the bytes written. It runs in one read
// transaction, so writers go on committing meanwhile and the copy is the
// database as of the moment Backup began. The copy is a complete bbolt file:
// Restore, or Open on a directory holding it as earshot.db, reads it.
//
// A long backup keeps the pages it reads from being reused, so the file may
// grow while it runs, and a writer that needs to grow the memory map waits
// for it to end.
func (db *DB) Backup(w io.Writer) (int64, error) {
	var n int64
	err := db.bolt.View(func(tx *bolt.Tx) error {
		var err error
		n, err = tx.WriteTo(w)
		return err
	})
	if err != nil {
		return n, fmt.Errorf("store: backup: %w", store.NoSpace(err))
	}
	return n, nil
}

// BackupFile writes Backup to path (mode 0600) atomically: to a temporary
// file in path's directory, fsynced, then renamed over path. On error no
// partial file is left. It returns the bytes written.
func (db *DB) BackupFile(path string) (int64, error) {
	f, err := os.CreateTemp(filepath.Dir(path), ".earshot-backup-*")
	if err != nil {
		return 0, fmt.Errorf("store: backup to %s: %w", path, store.NoSpace(err))
	}
	tmp := f.Name()
	n, err := db.Backup(f)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		_ = os.Remove(tmp)
		return n, fmt.Errorf("store: backup to %s: %w", path, store.NoSpace(err))
	}
	if err := syncDir(filepath.Dir(path)); err != nil {
		return n, fmt.Errorf("store: backup to %s: %w", path, err)
	}
	return n, nil
}

// Restore replaces the database of data directory dir with the backup file
// src. It refuses (ErrLocked) while another process, such as a running
// daemon, holds the database. It first copies src into dir and checks the
// copy: it must open as a bbolt file, have a schema version this build
// knows (else ErrSchemaTooNew) and pass Check (else ErrCorrupt); only then
// is the current earshot.db renamed to earshot.db.bak (replacing an older
// .bak) and the copy renamed to earshot.db. On any error before the swap dir
// is left as it was. Run as root, the new earshot.db gets the data
// directory's owner and group. Blob files are not touched: a restored job whose audio
// blob is gone still has its result, and blobs of jobs the backup does not
// know stay until removed by hand.
func Restore(dir, src string) error {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return fmt.Errorf("store: restore %s: %w", dir, err)
	}
	if err := os.MkdirAll(filepath.Join(abs, "blobs"), 0o700); err != nil {
		return fmt.Errorf("store: restore %s: %w", abs, err)
	}
	live := filepath.Join(abs, dbFile)
	// Hold the same lock bbolt takes (flock on earshot.db), without opening
	// the database: the file being replaced may well be damaged.
	lf, err := os.OpenFile(live, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return fmt.Errorf("store: restore %s: %w", abs, err)
	}
	defer lf.Close()
	if err := syscall.Flock(int(lf.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return fmt.Errorf("store: restore %s: %w", live, store.ErrLocked)
		}
		return fmt.Errorf("store: restore %s: lock: %w", live, err)
	}
	st, err := lf.Stat()
	if err != nil {
		return fmt.Errorf("store: restore %s: %w", live, err)
	}

	tmp, err := copyToTemp(src, abs)
	if err != nil {
		return fmt.Errorf("store: restore from %s: %w", src, err)
	}
	defer os.Remove(tmp) // a no-op once renamed
	if err := chownLike(tmp, abs); err != nil {
		return fmt.Errorf("store: restore: %w", err)
	}
	if err := checkFile(tmp); err != nil {
		return fmt.Errorf("store: restore from %s: %w", src, err)
	}
	if st.Size() > 0 {
		if err := os.Rename(live, live+RestoreBackupSuffix); err != nil {
			return fmt.Errorf("store: restore: keep old database: %w", err)
		}
	}
	if err := os.Rename(tmp, live); err != nil {
		return fmt.Errorf("store: restore: %w", err)
	}
	if err := syncDir(abs); err != nil {
		return fmt.Errorf("store: restore: %w", err)
	}
	return nil
}

// chownLike gives path the owner and group of dir when running as root, so
// that a restore run by root leaves a database the daemon's own user (who
// owns the data directory) can open.
func chownLike(path, dir string) error {
	if os.Geteuid() != 0 {
		return nil
	}
	st, err := os.Stat(dir)
	if err != nil {
		return err
	}
	sys, ok := st.Sys().(*syscall.Stat_t)
	if !ok {
		return nil
	}
	return os.Chown(path, int(sys.Uid), int(sys.Gid))
}

// copyToTemp copies src to a new fsynced temporary file in dir and returns
// its path; on error nothing is left.
func copyToTemp(src, dir string) (string, error) {
	in, err := os.Open(src)
	if err != nil {
		return "", err
	}
	defer in.Close()
	out, err := os.CreateTemp(dir, ".earshot-restore-*")
	if err != nil {
		return "", store.NoSpace(err)
	}
	_, err = io.Copy(out, in)
	if err == nil {
		err = out.Sync()
	}
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		_ = os.Remove(out.Name())
		return "", store.NoSpace(err)
	}
	return out.Name(), nil
}

// checkFile opens the bbolt file at path read-only and runs the schema
// version check and Check on it.
func checkFile(path string) error {
	// bbolt maps the file and trusts its page numbers: a page past the end
	// of a truncated file would fault (SIGBUS) instead of failing.
	if err := checkFileSize(path); err != nil {
		return err
	}
	b, err := bolt.Open(path, 0o600, &bolt.Options{ReadOnly: true, Timeout: DefaultTimeout})
	if err != nil {
		return fmt.Errorf("not a database: %w: %w", store.ErrCorrupt, err)
	}
	db := &DB{bolt: b}
	defer db.Close()
	var v uint64
	err = b.View(func(tx *bolt.Tx) error {
		meta := tx.Bucket(bucketMeta)
		if meta == nil {
			return fmt.Errorf("no schema version: %w", store.ErrCorrupt)
		}
		raw := meta.Get(keySchemaVersion)
		if len(raw) != 8 {
			return fmt.Errorf("schema version is %d bytes: %w", len(raw), store.ErrCorrupt)
		}
		v = binary.BigEndian.Uint64(raw)
		return nil
	})
	if err != nil {
		return err
	}
	if n := uint64(len(migrations())); v > n {
		return fmt.Errorf("file schema %d > supported %d: %w", v, n, store.ErrSchemaTooNew)
	}
	return db.Check()
}

// bbolt's on-disk meta page (bbolt internal/common/meta.go), in the
// machine's byte order: a 16-byte page header, then magic, version,
// page size, flags, root bucket (16), freelist page, high-water page id.
const (
	boltMagic      = 0xED0CDAED
	boltMetaOffset = 16
	boltMetaSize   = 64
)

// checkFileSize reads both meta pages of the bbolt file at path and checks
// that the file holds every page up to the high-water mark they record.
func checkFileSize(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return err
	}
	var need uint64
	pageSize := uint64(0)
	for i := range 2 {
		// Meta page 1 sits at the page size that meta page 0 declares.
		buf := make([]byte, boltMetaOffset+boltMetaSize)
		if _, err := f.ReadAt(buf, int64(i)*int64(pageSize)); err != nil {
			return fmt.Errorf("meta page %d: %w: %w", i, store.ErrCorrupt, err)
		}
		m := buf[boltMetaOffset:]
		e := binary.NativeEndian
		if e.Uint32(m[0:]) != boltMagic {
			return fmt.Errorf("meta page %d: not a bbolt file: %w", i, store.ErrCorrupt)
		}
		ps := uint64(e.Uint32(m[8:]))
		if ps < 512 || ps > 1<<20 || (i == 1 && ps != pageSize) {
			return fmt.Errorf("meta page %d: page size %d: %w", i, ps, store.ErrCorrupt)
		}
		pageSize = ps
		need = max(need, e.Uint64(m[40:])*ps)
	}
	if uint64(st.Size()) < need {
		return fmt.Errorf("file is %d bytes, its pages need %d (truncated): %w", st.Size(), need, store.ErrCorrupt)
	}
	return nil
}

// syncDir fsyncs the directory dir, making renames in it durable.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	err = d.Sync()
	if cerr := d.Close(); err == nil {
		err = cerr
	}
	if errors.Is(err, fs.ErrInvalid) {
		return nil // file systems that cannot sync directories
	}
	return err
}
