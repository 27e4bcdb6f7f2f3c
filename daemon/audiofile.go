package daemon

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"

	"golang.org/x/sys/unix"

	"github.com/earshot-dev/earshot/daemon/live"
	"github.com/earshot-dev/earshot/store"
)

// blobFile returns a local file holding the blob's bytes and a release to
// call when done with it. With the embedded store that is the blob file
// itself. Otherwise the blob is streamed into a copy, removed by release
// (a live recording left in data_dir/recordings by the last run is stored
// first): a memory file (memfd) when the store seals content, since its
// clear bytes must not land on disk, else a scratch file under
// data_dir/scratch, so that a large blob of an unsealed shared store takes
// disk, not RAM. The memory file holds the whole blob: its size was
// bounded when the blob was written (limits.max_upload_bytes for uploads
// and fetched audio, a live session's duration for recordings), so it is
// at most that much RAM per job the workers run at once.
func (d *Daemon) blobFile(name string) (string, func(), error) {
	if !store.ValidName(name) {
		return "", nil, fmt.Errorf("blob %q: %w", name, store.ErrInvalidName)
	}
	if path, ok := d.db.LocalBlobPath(name); ok { // the transcriber and the prober read it in place
		return path, func() {}, nil
	}
	// A live recording this node kept locally when it stopped (a kill, a
	// crash) reaches the shared store now, before it is read.
	if rec, err := d.recordingPath(name); err == nil {
		if _, err := os.Stat(rec); err == nil {
			if err := d.commitRecording(rec); err != nil {
				return "", nil, fmt.Errorf("store the recording left by the last run: %w", err)
			}
		}
	}
	r, err := d.db.OpenBlob(name)
	if err != nil {
		return "", nil, err
	}
	defer r.Close()
	f, path, release, err := d.scratchFile(name)
	if err != nil {
		return "", nil, fmt.Errorf("blob %s: %w", name, err)
	}
	if _, err := io.Copy(f, r); err != nil {
		release()
		return "", nil, fmt.Errorf("copy blob %s to a scratch file: %w", name, store.NoSpace(err))
	}
	return path, release, nil
}

// scratchFile makes a file for a copy of audio the store keeps: a file
// under data_dir/scratch, or, when the store seals what it keeps, a memory
// file (memfd), so that no clear copy of sealed audio reaches the disk
// (since 2026-11-30 for a job's redacted audio too, which went through
// data_dir/scratch before). path is a name a child process (ffmpeg) can
// open too; release removes the file, or closes the memory file, whose
// descriptor f is (close f only through release then).
func (d *Daemon) scratchFile(name string) (f *os.File, path string, release func(), err error) {
	if d.db.Sealer() != nil {
		fd, err := unix.MemfdCreate("earshot-"+name, unix.MFD_CLOEXEC)
		if err != nil {
			return nil, "", nil, fmt.Errorf("memory file: %w", err)
		}
		f := os.NewFile(uintptr(fd), name)
		// /proc/<pid>/fd/N, not /proc/self: ffmpeg, a child, opens it too.
		return f, fmt.Sprintf("/proc/%d/fd/%d", os.Getpid(), fd), func() { f.Close() }, nil
	}
	dir := filepath.Join(d.cfg.DataDir, "scratch")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, "", nil, err
	}
	if f, err = os.CreateTemp(dir, name+"-*"); err != nil {
		return nil, "", nil, store.NoSpace(err)
	}
	return f, f.Name(), func() { f.Close(); os.Remove(f.Name()) }, nil
}

// recordingPath returns the local file a live session records into: the
// blob file itself with the embedded store; with a shared store a file of
// the blob's name under data_dir/recordings, which commitRecording moves
// into the store when the session ends.
func (d *Daemon) recordingPath(name string) (string, error) {
	if !store.ValidName(name) {
		return "", fmt.Errorf("live recording %q: %w", name, store.ErrInvalidName)
	}
	if path, ok := d.db.LocalBlobPath(name); ok {
		return path, nil
	}
	dir := filepath.Join(d.cfg.DataDir, recordingsDir)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", fmt.Errorf("live recording %s: %w", name, err)
	}
	return filepath.Join(dir, name), nil
}

// recordingsDir holds live recordings under data_dir while a shared store
// is used.
const recordingsDir = "recordings"

// createRecording creates (truncating) the local file of a live recording
// at path (recordingPath): a sealed spool when the store seals.
func (d *Daemon) createRecording(path string) (live.RecordingFile, error) {
	if sp := d.db.Sealer(); sp != nil {
		return sp.CreateSpool(path)
	}
	return os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o600)
}

// openRecording opens the local file of a live recording for reading and
// changing in place (blanking).
func (d *Daemon) openRecording(path string) (live.RecordingFile, error) {
	if sp := d.db.Sealer(); sp != nil {
		return sp.OpenSpool(path)
	}
	return os.OpenFile(path, os.O_RDWR, 0)
}

// dropRecording removes the local file of a live recording that will not
// be stored (live.Recordings.DropRecording): a sealed spool with its data
// key, a shared store's local file; with the embedded store the file is
// the blob, which RemoveBlob removes. Before (until 2026-11-30) a session
// that never connected left its spool and the spool's key behind, one of
// each for every such session: unbounded.
func (d *Daemon) dropRecording(path string) error {
	if _, ok := d.db.LocalBlobPath(filepath.Base(path)); ok {
		return nil
	}
	if sp := d.db.Sealer(); sp != nil {
		return sp.RemoveSpool(path)
	}
	if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return nil
}

// commitRecording stores a finished live recording (the file at path, named
// by recordingPath) in a shared store, streaming it, and removes the local
// file. With the embedded store the file is the blob already: nothing to do.
// A sealed spool is stored through its opener and removed with its key.
func (d *Daemon) commitRecording(path string) error {
	if _, ok := d.db.LocalBlobPath(filepath.Base(path)); ok {
		return nil
	}
	if sp := d.db.Sealer(); sp != nil {
		f, err := sp.OpenSpool(path)
		if err != nil {
			return err
		}
		_, err = d.db.WriteBlob(filepath.Base(path), f, 0)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return err
		}
		return sp.RemoveSpool(path)
	}
	if err := d.storeBlobFile(filepath.Base(path), path); err != nil {
		return err
	}
	return os.Remove(path)
}
