package daemon

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/earshot-dev/earshot/store"
)

// localBlobs is a store whose blobs are files on this machine (the embedded
// bbolt store): the transcriber, the prober and live recordings use those
// files in place.
type localBlobs interface {
	BlobPath(name string) string
}

// errNotLocal is returned by recordingPath when the store keeps its blobs
// elsewhere (a shared database).
var errNotLocal = errors.New("store keeps no local audio files")

// blobFile returns a local file holding the blob's bytes and a release to
// call when done with it. With the embedded store that is the blob file
// itself; with a shared store the blob is streamed into a temporary file
// under the data directory, removed by release.
func (d *Daemon) blobFile(name string) (string, func(), error) {
	if lb, ok := d.db.(localBlobs); ok {
		if !store.ValidName(name) {
			return "", nil, fmt.Errorf("blob %q: %w", name, store.ErrInvalidName)
		}
		return lb.BlobPath(name), func() {}, nil
	}
	r, err := d.db.OpenBlob(name)
	if err != nil {
		return "", nil, err
	}
	defer r.Close()
	dir := filepath.Join(d.cfg.DataDir, "scratch")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", nil, fmt.Errorf("blob %s: %w", name, err)
	}
	f, err := os.CreateTemp(dir, name+"-*")
	if err != nil {
		return "", nil, fmt.Errorf("blob %s: %w", name, err)
	}
	release := func() { os.Remove(f.Name()) }
	_, err = io.Copy(f, r)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		release()
		return "", nil, fmt.Errorf("copy blob %s to a local file: %w", name, err)
	}
	return f.Name(), release, nil
}

// recordingPath returns the local file a live session records into: the
// blob file itself with the embedded store. A shared store has none yet
// (errNotLocal).
func (d *Daemon) recordingPath(name string) (string, error) {
	lb, ok := d.db.(localBlobs)
	if !ok {
		return "", fmt.Errorf("live recording %s: %w", name, errNotLocal)
	}
	if !store.ValidName(name) {
		return "", fmt.Errorf("live recording %q: %w", name, store.ErrInvalidName)
	}
	return lb.BlobPath(name), nil
}
