package sphinx

import (
	"crypto/sha256"
	"fmt"
	"os"
	"sync"

	"golang.org/x/sys/unix"
)

// dictFiles holds, for the life of the process, one in-memory file
// (memfd_create(2)) per search dictionary text (searchDictionary), for
// ps_init, which reads the dictionary by name: /proc/self/fd/N. A pool
// makes its dictionary's file when it is made (New), so a decoder loaded
// later, on demand (Config.LoadOnDemand, Config.OnDemand) or in the
// background, writes nothing: until 2026-11-30 every decoder load wrote
// the text (some 2 MB) to a temporary file, which fails on a full disk
// (e2e TestDiskFull, once the test daemons loaded their decoders on
// demand) and which a temporary-files cleaner could remove. The files are
// never closed: a process has one or two dictionary texts, and a pool
// that is closed may still have a decoder loading from its file. Where
// /proc is not mounted (a chroot: packaging TestDebInstall runs earshotd
// transcribe in one) there is no such path, and each load writes a
// temporary file as before.
var dictFiles = struct {
	sync.Mutex
	m map[[sha256.Size]byte]*os.File
}{m: map[[sha256.Size]byte]*os.File{}}

// dictFile is the path of the in-memory file holding dict, made on the
// first call for that text; "" when this process cannot name it (no
// /proc).
func dictFile(dict []byte) (string, error) {
	sum := sha256.Sum256(dict)
	dictFiles.Lock()
	defer dictFiles.Unlock()
	if f, ok := dictFiles.m[sum]; ok {
		return procFD(f), nil
	}
	fd, err := unix.MemfdCreate("earshot-dict", unix.MFD_CLOEXEC)
	if err != nil {
		return "", fmt.Errorf("memfd_create: %w", err)
	}
	f := os.NewFile(uintptr(fd), "earshot-dict")
	if _, err := f.Write(dict); err != nil {
		f.Close()
		return "", err
	}
	if _, err := os.Stat(procFD(f)); err != nil {
		f.Close()
		return "", nil
	}
	dictFiles.m[sum] = f // kept: its finalizer would close the descriptor
	return procFD(f), nil
}

// procFD names f's descriptor as a path any open(2) in this process can
// read from the start.
func procFD(f *os.File) string { return fmt.Sprintf("/proc/self/fd/%d", f.Fd()) }
