package bolt_test

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// TestSweepBlobsLeavesFiles runs the conformance case
// SweepBlobsAndAccountBytes (store/storetest: SweepBlobs removes exactly
// the blobs no record names; AccountBytes counts linked files once) and
// adds what only the bbolt backend has: the blob directory then holds
// exactly the named files.
func TestSweepBlobsLeavesFiles(t *testing.T) {
	db := runConformanceCase(t, "SweepBlobsAndAccountBytes")
	entries, _ := os.ReadDir(filepath.Dir(db.BlobPath("x")))
	var left []string
	for _, e := range entries {
		left = append(left, e.Name())
	}
	if !slices.Equal(left, []string{"job-a", "job-c", "live-b.wav", "upload-1"}) {
		t.Errorf("left %v", left)
	}
}
