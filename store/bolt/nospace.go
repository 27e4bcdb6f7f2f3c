package bolt

import (
	"fmt"
	"os"
	"syscall"
)

// growthRefused explains a commit that failed without a system error: bbolt
// reports a failed growth of its file as text ("file resize error: ...",
// go.etcd.io/bbolt DB.grow formats the truncate error with %s), so the
// EFBIG of a file-size limit would reach callers as an unknown failure and
// a job could stay processing. When the limit (RLIMIT_FSIZE) is at or below
// the database file's size, no growth can succeed, and it returns that
// EFBIG; otherwise (no limit, or room under it) nil. A limit between the
// file's size and the size bbolt grows it to is not recognised.
func (db *DB) growthRefused() error {
	var rl syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_FSIZE, &rl); err != nil || rl.Cur == ^uint64(0) {
		return nil
	}
	fi, err := os.Stat(db.bolt.Path())
	if err != nil || uint64(fi.Size()) < rl.Cur {
		return nil
	}
	return fmt.Errorf("grow %s: %d bytes, file size limit %d bytes: %w", db.bolt.Path(), fi.Size(), rl.Cur, syscall.EFBIG)
}
