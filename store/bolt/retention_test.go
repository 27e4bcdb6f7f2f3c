package bolt_test

import (
	"errors"
	"os"
	"testing"

	"github.com/earshot-dev/earshot/store"
)

// The retention behaviour itself is asserted by the conformance cases
// ExpireJobs and ExpireUploads (store/storetest); these add what only the
// bbolt backend has: blob files on disk, which expiry must remove.

func TestExpireJobsRemovesFiles(t *testing.T) {
	db := runConformanceCase(t, "ExpireJobs")
	for _, kind := range []store.Kind{store.KindPreRecorded, store.KindLive} {
		for _, st := range []store.Status{store.StatusDone, store.StatusError} {
			id := string(kind) + "-" + string(st) + "-old"
			if _, err := os.Stat(db.BlobPath("blob-" + id)); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("blob file of %s after expiry: %v, want gone", id, err)
			}
		}
	}
	for _, id := range []string{"pre-recorded-done-edge", "live-error-new", "pre-recorded-queued-old"} {
		if _, err := os.Stat(db.BlobPath("blob-" + id)); err != nil {
			t.Errorf("blob file of kept job %s: %v", id, err)
		}
	}
}

func TestExpireUploadsRemovesFiles(t *testing.T) {
	db := runConformanceCase(t, "ExpireUploads")
	for _, u := range []struct {
		id     string
		expire bool
	}{{"u-new", false}, {"u-old2", true}, {"u-edge", false}, {"u-old1", true}} {
		_, err := os.Stat(db.BlobPath("up-" + u.id))
		if u.expire && !errors.Is(err, os.ErrNotExist) || !u.expire && err != nil {
			t.Errorf("%s: blob file %v; want expired %t", u.id, err, u.expire)
		}
	}
}
