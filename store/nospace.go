package store

import (
	"errors"
	"fmt"
	"syscall"
)

// noSpaceErrnos are the refusals of a write for want of room, all one
// storage-full error to earshot: ENOSPC (the file system is full), EDQUOT
// (the owner's quota on it is), EFBIG (the file would pass the process's
// file-size limit, RLIMIT_FSIZE as systemd's LimitFSIZE= sets it, or the
// largest file the file system holds). A Go process is not killed by the
// SIGXFSZ that comes with EFBIG: the runtime's handler drops it.
var noSpaceErrnos = []error{syscall.ENOSPC, syscall.EDQUOT, syscall.EFBIG}

// NoSpace marks err with ErrNoSpace, keeping the system error, when the
// storage refused a write for want of room (ENOSPC, EDQUOT, EFBIG); any
// other error, nil, or one marked already is returned as it is. Every
// write path of the data directory maps its errors through it (blobs, the
// database, live recordings, scratch copies), so a full disk is 507 at
// every door and a job's error_code 507.
func NoSpace(err error) error {
	if err == nil || errors.Is(err, ErrNoSpace) {
		return err
	}
	for _, e := range noSpaceErrnos {
		if errors.Is(err, e) {
			return fmt.Errorf("%w: %w", ErrNoSpace, err)
		}
	}
	return err
}
