package sealed

import (
	"crypto/cipher"
	"crypto/rand"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/earshot-dev/earshot/store"
)

// A spool is a local file sealed as it is written: a live recording
// (daemon/live) that grows while its session runs and is changed in place
// (its WAV header given its sizes at the end, words blanked), stored as a
// blob (WriteBlob, read through OpenSpool) when the session ends or at the
// next start's recovery. Its clear bytes never reach the disk.
//
// The file is a header (magic, 8 random bytes) and then fixed slots, one
// per ChunkSize of clear bytes: slot i holds the clear length (4 bytes), a
// 12-byte nonce and the sealed chunk i, under the spool's own data key
// (keyring id "s:" and the file's name) with the header, i and the length
// as additional data. Every write of a slot (a full chunk, the unfinished
// last chunk at each Sync, a chunk changed by WriteAt) seals under a fresh
// random nonce, so no nonce is used twice under a key (a spool takes a few
// thousand writes, far below the 2^32 bound of random nonces). The
// unfinished last chunk is held in memory, at most ChunkSize bytes, and
// sealed into its slot at Sync; a kill while that slot is written leaves
// a slot that does not authenticate, which OpenSpool drops (the audio
// since the sync before). Any other slot that does not authenticate is
// store.ErrIntegrity.
const (
	spoolHeaderLen = 12
	slotHead       = 4 + 12
	spoolSlot      = slotHead + ChunkSize + tagSize
)

var spoolMagic = [4]byte{'E', 'S', 'S', '1'}

func spoolKey(path string) string { return "s:" + filepath.Base(path) }

// Spool is a sealed local file open for writing (CreateSpool) or reading
// and changing in place (OpenSpool). Not safe for concurrent use.
type Spool struct {
	f      *os.File
	k      cipher.AEAD
	header []byte
	size   int64  // clear bytes
	tail   []byte // the last chunk's clear bytes, when unfinished (len < ChunkSize)
	slot   []byte // a slot's buffer
	pos    int64  // Read's offset
}

// CreateSpool creates (truncating) the spool at path under a new data key.
func (s *Store) CreateSpool(path string) (store.SpoolFile, error) {
	id := spoolKey(path)
	if err := s.shred(id); err != nil { // a spool of that name left before: its key goes
		return nil, err
	}
	k, err := s.dek(id, true)
	if err != nil {
		return nil, err
	}
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return nil, fmt.Errorf("spool: %w", store.NoSpace(err))
	}
	h := make([]byte, spoolHeaderLen)
	copy(h, spoolMagic[:])
	_, _ = rand.Read(h[4:])
	if _, err := f.Write(h); err != nil {
		f.Close()
		return nil, fmt.Errorf("spool: %w", store.NoSpace(err))
	}
	return &Spool{f: f, k: k, header: h, tail: make([]byte, 0, ChunkSize), slot: make([]byte, spoolSlot)}, nil
}

// OpenSpool opens the spool at path, its clear size that of its slots that
// authenticate (a last slot torn by a kill is dropped).
func (s *Store) OpenSpool(path string) (store.SpoolFile, error) {
	return s.openSpool(path)
}

func (s *Store) openSpool(path string) (*Spool, error) {
	k, err := s.dek(spoolKey(path), false)
	if err != nil {
		return nil, err
	}
	if k == nil {
		return nil, fmt.Errorf("spool %s: no data key: %w", filepath.Base(path), errIntegrity)
	}
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		return nil, err
	}
	sp := &Spool{f: f, k: k, header: make([]byte, spoolHeaderLen), tail: make([]byte, 0, ChunkSize), slot: make([]byte, spoolSlot)}
	if _, err := io.ReadFull(f, sp.header); err != nil || [4]byte(sp.header[:4]) != spoolMagic {
		f.Close()
		return nil, fmt.Errorf("spool %s: header: %w", filepath.Base(path), errIntegrity)
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	slots := (fi.Size() - spoolHeaderLen + spoolSlot - 1) / spoolSlot
	for i := int64(0); i < slots; i++ {
		clear, err := sp.readSlot(i)
		switch {
		case err != nil && i == slots-1:
			// Torn at a kill: dropped.
		case err != nil:
			f.Close()
			return nil, err
		case len(clear) < ChunkSize:
			if i != slots-1 {
				f.Close()
				return nil, fmt.Errorf("spool %s: short chunk %d: %w", filepath.Base(path), i, errIntegrity)
			}
			sp.tail = append(sp.tail, clear...)
			sp.size += int64(len(clear))
		default:
			sp.size += ChunkSize
		}
	}
	return sp, nil
}

// RemoveSpool removes the spool at path and destroys its data key.
func (s *Store) RemoveSpool(path string) error {
	if err := os.Remove(path); err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	return s.shred(spoolKey(path))
}

// SweepSpools destroys the data keys of spools that are not in dir (a
// removal that ended before its key's destruction, a file removed by
// hand), so no spool's key outlives its file, and returns their names. It
// sweeps a keyring this process owns (a FileKeyring) only: a cluster's
// shared keyring also holds the keys of other nodes' spools, which this
// node cannot see. Call it before any spool is created in dir (a spool's
// key is made before its file).
func (s *Store) SweepSpools(dir string) ([]string, error) {
	if _, own := s.ring.(*FileKeyring); !own {
		return nil, nil
	}
	var names, ids []string
	for _, id := range s.ring.IDs() {
		name, ok := strings.CutPrefix(id, "s:")
		if !ok {
			continue
		}
		if _, err := os.Lstat(filepath.Join(dir, name)); errors.Is(err, fs.ErrNotExist) {
			names, ids = append(names, name), append(ids, id)
		}
	}
	return names, s.shred(ids...)
}

func (sp *Spool) slotAt(i int64) int64 { return spoolHeaderLen + i*spoolSlot }

func (sp *Spool) aad(i int64, n int) []byte {
	a := make([]byte, 0, spoolHeaderLen+8)
	a = append(a, sp.header...)
	a = binary.BigEndian.AppendUint32(a, uint32(i))
	return binary.BigEndian.AppendUint32(a, uint32(n))
}

// readSlot opens slot i into sp.slot and returns its clear bytes.
func (sp *Spool) readSlot(i int64) ([]byte, error) {
	b := sp.slot
	n, err := sp.f.ReadAt(b, sp.slotAt(i))
	if err != nil && !errors.Is(err, io.EOF) {
		return nil, err
	}
	bad := fmt.Errorf("spool %s: chunk %d: %w", filepath.Base(sp.f.Name()), i, errIntegrity)
	if n < slotHead+tagSize {
		return nil, bad
	}
	clen := int(binary.BigEndian.Uint32(b))
	if clen > ChunkSize || n < slotHead+clen+tagSize {
		return nil, bad
	}
	clear, err := sp.k.Open(b[slotHead:slotHead], b[4:slotHead], b[slotHead:slotHead+clen+tagSize], sp.aad(i, clen))
	if err != nil {
		return nil, bad
	}
	return clear, nil
}

// writeSlot seals clear (at most ChunkSize bytes) into slot i under a
// fresh nonce.
func (sp *Spool) writeSlot(i int64, clear []byte) error {
	b := sp.slot[:slotHead]
	binary.BigEndian.PutUint32(b, uint32(len(clear)))
	_, _ = rand.Read(b[4:slotHead])
	b = sp.k.Seal(b, b[4:slotHead], clear, sp.aad(i, len(clear)))
	if _, err := sp.f.WriteAt(b, sp.slotAt(i)); err != nil {
		return fmt.Errorf("spool: %w", store.NoSpace(err))
	}
	return nil
}

// Write appends p: each chunk it fills is sealed into its slot; the rest
// stays in memory until Sync or the next chunk is full.
func (sp *Spool) Write(p []byte) (int, error) {
	done := 0
	for len(p) > 0 {
		n := min(len(p), ChunkSize-len(sp.tail))
		sp.tail = append(sp.tail, p[:n]...)
		p = p[n:]
		if len(sp.tail) == ChunkSize {
			if err := sp.writeSlot(sp.size/ChunkSize, sp.tail); err != nil {
				sp.tail = sp.tail[:ChunkSize-n]
				return done, err
			}
			sp.tail = sp.tail[:0]
		}
		sp.size += int64(n)
		done += n
	}
	return done, nil
}

// Sync seals the unfinished last chunk into its slot (a fresh nonce) and
// syncs the file.
func (sp *Spool) Sync() error {
	if len(sp.tail) > 0 {
		if err := sp.writeSlot(sp.size/ChunkSize, sp.tail); err != nil {
			return err
		}
	}
	return sp.f.Sync()
}

// Size is the spool's clear size.
func (sp *Spool) Size() int64 { return sp.size }

// Name is the file's path.
func (sp *Spool) Name() string { return sp.f.Name() }

// chunk returns chunk i's clear bytes: the memory tail or its opened slot
// (valid until the next slot read or write).
func (sp *Spool) chunk(i int64) ([]byte, error) {
	if i == sp.size/ChunkSize {
		return sp.tail, nil
	}
	return sp.readSlot(i)
}

// ReadAt reads clear bytes at off.
func (sp *Spool) ReadAt(p []byte, off int64) (int, error) {
	if off < 0 {
		return 0, fmt.Errorf("spool: negative offset")
	}
	done := 0
	for len(p) > 0 && off < sp.size {
		c, err := sp.chunk(off / ChunkSize)
		if err != nil {
			return done, err
		}
		n := copy(p, c[off%ChunkSize:])
		p, off, done = p[n:], off+int64(n), done+n
	}
	if len(p) > 0 {
		return done, io.EOF
	}
	return done, nil
}

// WriteAt changes clear bytes within the spool (it does not grow it): each
// chunk changed is sealed again under a fresh nonce.
func (sp *Spool) WriteAt(p []byte, off int64) (int, error) {
	if off < 0 || off+int64(len(p)) > sp.size {
		return 0, fmt.Errorf("spool: write at %d+%d past its %d bytes", off, len(p), sp.size)
	}
	done := 0
	for len(p) > 0 {
		i := off / ChunkSize
		c, err := sp.chunk(i)
		if err != nil {
			return done, err
		}
		n := copy(c[off%ChunkSize:], p)
		if i != sp.size/ChunkSize {
			buf := append([]byte(nil), c...)
			if err := sp.writeSlot(i, buf); err != nil {
				return done, err
			}
		}
		p, off, done = p[n:], off+int64(n), done+n
	}
	return done, nil
}

// Read reads clear bytes from the offset Seek set.
func (sp *Spool) Read(p []byte) (int, error) {
	if sp.pos >= sp.size {
		return 0, io.EOF
	}
	n, err := sp.ReadAt(p[:min(int64(len(p)), sp.size-sp.pos)], sp.pos)
	sp.pos += int64(n)
	return n, err
}

// Seek sets Read's offset.
func (sp *Spool) Seek(off int64, whence int) (int64, error) {
	switch whence {
	case io.SeekCurrent:
		off += sp.pos
	case io.SeekEnd:
		off += sp.size
	}
	if off < 0 {
		return 0, fmt.Errorf("spool: negative offset")
	}
	sp.pos = off
	return off, nil
}

// Close syncs the unfinished chunk and closes the file.
func (sp *Spool) Close() error {
	if sp.f == nil {
		return nil
	}
	err := sp.Sync()
	if cerr := sp.f.Close(); err == nil {
		err = cerr
	}
	sp.f = nil
	clear(sp.tail)
	return err
}

var _ store.Sealer = (*Store)(nil)
