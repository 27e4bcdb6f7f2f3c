package store

import (
	"io"
	"os"
	"syscall"
)

// Scrub overwrites f with zeros and syncs it when no name points to it any
// more (a file replaced by a rename, or removed, and kept open for this),
// reporting whether it did: a file another name still holds (a link) is
// left as it is. What was in clear in the file is then gone from it; on a
// journaling file system or a flash disk old blocks may survive where
// this cannot reach, and a copy made before (a backup) keeps its own.
func Scrub(f *os.File) (bool, error) {
	fi, err := f.Stat()
	if err != nil {
		return false, err
	}
	if st, ok := fi.Sys().(*syscall.Stat_t); !ok || st.Nlink > 0 {
		return false, nil
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return false, err
	}
	zeros := make([]byte, 64<<10)
	for left := fi.Size(); left > 0; {
		n, err := f.Write(zeros[:min(left, int64(len(zeros)))])
		if err != nil {
			return false, err
		}
		left -= int64(n)
	}
	return true, f.Sync()
}
