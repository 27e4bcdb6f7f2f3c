package sealed

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"sync"

	"github.com/earshot-dev/earshot/store"
)

// Entry is one data key as a keyring keeps it: wrapped by the KEK named by
// its id.
type Entry struct {
	KEK     string // KeyID of the wrapping key
	Wrapped []byte // nonce, sealed key, tag
}

// Rotation is a key rotation in progress, kept in the keyring's header so
// a restart resumes it: every entry is being re-wrapped from the key From
// to the key To, read from ToFile (and From from FromFile) when the
// configuration names only one of them.
type Rotation struct {
	From     string `json:"from"`
	FromFile string `json:"from_file"`
	To       string `json:"to"`
	ToFile   string `json:"to_file"`
}

// Keyring keeps the wrapped data keys outside the backend's database, so
// that destroying one (Delete) reaches what the database keeps of a record
// (free pages, WAL, a copy of the file).
type Keyring interface {
	// Get returns id's entry.
	Get(id string) (Entry, bool)
	// Put stores e as id's entry, replacing any: the new entry is durable
	// before the old one is destroyed.
	Put(id string, e Entry) error
	// Add stores e as id's entry only when id has none (the first of two
	// nodes wins), else store.ErrExists.
	Add(id string, e Entry) error
	// Delete destroys id's entry (overwritten, synced); an unknown id is
	// not an error.
	Delete(id string) error
	// IDs returns the ids of every entry, sorted.
	IDs() []string
	// KEKs returns the ids of the keys wrapping the entries (Entry.KEK),
	// each once, sorted: what Open checks against the configured keys in
	// one read, not one per entry.
	KEKs() []string
	// Rotation returns the rotation in progress, nil if none; SetRotation
	// records one (nil: finished).
	Rotation() *Rotation
	SetRotation(r *Rotation) error
	// Close releases the keyring.
	Close() error
}

// KeyringFile is the name of the keyring file in a data directory.
const KeyringFile = "keyring"

// slotSize is the size of one entry in a FileKeyring: one disk sector, so
// an entry's write never spans two.
const slotSize = 512

// maxKeyID bounds a keyring id: a kind letter, ':' and a job id.
const maxKeyID = 400

var keyringMagic = []byte("EARSHOT KEYRING\x01")

// FileKeyring is a Keyring in one file of fixed 512-byte slots (slot 0 the
// header), every entry also held in memory. Put writes a free slot and
// syncs it before zeroing the slot it replaces; Delete zeroes the entry's
// slot in place and syncs, so a destroyed data key survives in no free
// page and no older version of the file (unlike a copy-on-write database).
// A slot that fails its checksum (a write torn by a power cut) is taken as
// free; two slots of one id (a kill between a Put's two writes) resolve to
// the one under the rotation's new key, else the later slot.
type FileKeyring struct {
	noSync bool

	mu    sync.Mutex
	f     *os.File          // guarded by mu
	slots map[string]slotAt // guarded by mu
	free  []int64           // free slot numbers, guarded by mu
	next  int64             // first slot past the end, guarded by mu
	rot   *Rotation         // guarded by mu
}

type slotAt struct {
	n int64
	e Entry
}

// OpenFileKeyring opens (creating, mode 0600) the keyring file at path.
// noSync skips the syncs (tests only: a destroyed key may then linger in
// the page cache's unwritten copy).
func OpenFileKeyring(path string, noSync bool) (*FileKeyring, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("keyring %s: %w", path, err)
	}
	k := &FileKeyring{noSync: noSync, f: f, slots: map[string]slotAt{}, next: 1}
	if err := k.load(); err != nil {
		f.Close()
		return nil, fmt.Errorf("keyring %s: %w", path, err)
	}
	return k, nil
}

// Exists reports whether dir holds a keyring file: the store in dir was
// sealed.
func Exists(dir string) bool {
	_, err := os.Stat(filepath.Join(dir, KeyringFile))
	return err == nil
}

func (k *FileKeyring) load() error {
	st, err := k.f.Stat()
	if err != nil {
		return err
	}
	if st.Size() == 0 {
		return k.writeHeaderLocked(nil)
	}
	buf := make([]byte, slotSize)
	if _, err := k.f.ReadAt(buf, 0); err != nil {
		return fmt.Errorf("header: %w", err)
	}
	// A torn header loses only the rotation it recorded (Open then names
	// the key it lacks).
	if k.rot, err = parseHeader(buf); err != nil {
		return err
	}
	r := io.NewSectionReader(k.f, slotSize, st.Size()-slotSize)
	for n := int64(1); ; n++ {
		if _, err := io.ReadFull(r, buf); err != nil {
			break // a short last slot was a torn append: free
		}
		k.next = n + 1
		id, e, ok := decodeSlot(buf)
		if !ok {
			if buf[0] != 0 {
				k.zero(n) // torn: clear it so it is taken as free again
			}
			k.free = append(k.free, n)
			continue
		}
		if old, dup := k.slots[id]; dup {
			// A kill between a Put's write and its zeroing: keep the
			// entry under the rotation's new key, else the later one.
			drop := old.n
			if k.rot != nil && old.e.KEK == k.rot.To && e.KEK != k.rot.To {
				drop = n
			} else {
				k.slots[id] = slotAt{n: n, e: e}
			}
			k.zero(drop)
			k.free = append(k.free, drop)
			continue
		}
		k.slots[id] = slotAt{n: n, e: e}
	}
	return k.sync()
}

// slotBody checks a slot's checksum and returns what it covers.
func slotBody(b []byte) ([]byte, bool) {
	if crc32.ChecksumIEEE(b[5:]) != binary.BigEndian.Uint32(b[1:5]) {
		return nil, false
	}
	return b[5:], true
}

func decodeSlot(b []byte) (string, Entry, bool) {
	if b[0] != 1 {
		return "", Entry{}, false
	}
	body, ok := slotBody(b)
	if !ok {
		return "", Entry{}, false
	}
	kl := int(body[0])
	p := 1
	if p+kl+2 > len(body) {
		return "", Entry{}, false
	}
	kek := string(body[p : p+kl])
	p += kl
	il := int(binary.BigEndian.Uint16(body[p:]))
	p += 2
	if p+il+2 > len(body) {
		return "", Entry{}, false
	}
	id := string(body[p : p+il])
	p += il
	wl := int(binary.BigEndian.Uint16(body[p:]))
	p += 2
	if p+wl > len(body) {
		return "", Entry{}, false
	}
	return id, Entry{KEK: kek, Wrapped: bytes.Clone(body[p : p+wl])}, true
}

func encodeSlot(id string, e Entry) []byte {
	b := make([]byte, slotSize)
	b[0] = 1
	p := 5
	b[p] = byte(len(e.KEK))
	p++
	p += copy(b[p:], e.KEK)
	binary.BigEndian.PutUint16(b[p:], uint16(len(id)))
	p += 2
	p += copy(b[p:], id)
	binary.BigEndian.PutUint16(b[p:], uint16(len(e.Wrapped)))
	p += 2
	copy(b[p:], e.Wrapped)
	binary.BigEndian.PutUint32(b[1:5], crc32.ChecksumIEEE(b[5:]))
	return b
}

func (k *FileKeyring) writeHeaderLocked(r *Rotation) error {
	body, err := json.Marshal(struct {
		Rotation *Rotation `json:"rotation,omitempty"`
	}{r})
	if err != nil {
		return err
	}
	if len(keyringMagic)+len(body) > slotSize-4 {
		return fmt.Errorf("rotation's key file paths too long (%d bytes)", len(body))
	}
	// The magic stays at the start; the checksum covers what follows it.
	h := make([]byte, slotSize)
	copy(h, keyringMagic)
	copy(h[len(keyringMagic):], body)
	binary.BigEndian.PutUint32(h[slotSize-4:], crc32.ChecksumIEEE(h[:slotSize-4]))
	if _, err := k.f.WriteAt(h, 0); err != nil {
		return err
	}
	k.rot = r
	return k.sync()
}

func (k *FileKeyring) sync() error {
	if k.noSync {
		return nil
	}
	return k.f.Sync()
}

func (k *FileKeyring) zero(n int64) {
	_, _ = k.f.WriteAt(make([]byte, slotSize), n*slotSize)
}

// Get returns id's entry.
func (k *FileKeyring) Get(id string) (Entry, bool) {
	k.mu.Lock()
	defer k.mu.Unlock()
	s, ok := k.slots[id]
	return s.e, ok
}

// Put stores e as id's entry: written to a free slot and synced, then the
// slot it replaces zeroed and synced.
func (k *FileKeyring) Put(id string, e Entry) error { return k.put(id, e, false) }

// Add stores e as id's entry when id has none, else store.ErrExists.
func (k *FileKeyring) Add(id string, e Entry) error { return k.put(id, e, true) }

func (k *FileKeyring) put(id string, e Entry, onlyNew bool) error {
	if len(id) == 0 || len(id) > maxKeyID || len(e.KEK) > 32 || len(e.Wrapped) > 128 {
		return fmt.Errorf("keyring: entry %q: %w", id, errInvalid)
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.f == nil {
		return errClosed
	}
	if _, had := k.slots[id]; had && onlyNew {
		return fmt.Errorf("keyring: entry %q: %w", id, store.ErrExists)
	}
	n := k.next
	if len(k.free) > 0 {
		n = k.free[len(k.free)-1]
	}
	if _, err := k.f.WriteAt(encodeSlot(id, e), n*slotSize); err != nil {
		return fmt.Errorf("keyring: %w", noSpace(err))
	}
	if err := k.sync(); err != nil {
		return fmt.Errorf("keyring: %w", noSpace(err))
	}
	if n == k.next {
		k.next++
	} else {
		k.free = k.free[:len(k.free)-1]
	}
	old, had := k.slots[id]
	k.slots[id] = slotAt{n: n, e: e}
	if had {
		k.zero(old.n)
		k.free = append(k.free, old.n)
		if err := k.sync(); err != nil {
			return fmt.Errorf("keyring: %w", err)
		}
	}
	return nil
}

// Delete zeroes id's slot and syncs.
func (k *FileKeyring) Delete(id string) error {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.f == nil {
		return errClosed
	}
	s, ok := k.slots[id]
	if !ok {
		return nil
	}
	if _, err := k.f.WriteAt(make([]byte, slotSize), s.n*slotSize); err != nil {
		return fmt.Errorf("keyring: destroy %s: %w", id, err)
	}
	if err := k.sync(); err != nil {
		return fmt.Errorf("keyring: destroy %s: %w", id, err)
	}
	delete(k.slots, id)
	k.free = append(k.free, s.n)
	return nil
}

// IDs returns every entry's id, sorted.
func (k *FileKeyring) IDs() []string {
	k.mu.Lock()
	defer k.mu.Unlock()
	ids := make([]string, 0, len(k.slots))
	for id := range k.slots {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	return ids
}

// KEKs is Keyring.KEKs.
func (k *FileKeyring) KEKs() []string {
	k.mu.Lock()
	defer k.mu.Unlock()
	seen := map[string]bool{}
	for _, s := range k.slots {
		seen[s.e.KEK] = true
	}
	return slices.Sorted(maps.Keys(seen))
}

// Rotation returns the rotation in progress.
func (k *FileKeyring) Rotation() *Rotation {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.rot
}

// SetRotation records r in the header (nil: none).
func (k *FileKeyring) SetRotation(r *Rotation) error {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.f == nil {
		return errClosed
	}
	return k.writeHeaderLocked(r)
}

// CopyTo writes a copy of the keyring (its entries and header as they
// stand) to path, mode 0600, for a backup: wrapped keys only, never a KEK.
func (k *FileKeyring) CopyTo(path string) error {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.f == nil {
		return errClosed
	}
	tmp := path + ".tmp"
	out, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return err
	}
	_, err = io.Copy(out, io.NewSectionReader(k.f, 0, k.next*slotSize))
	if err == nil {
		err = out.Sync()
	}
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		os.Remove(tmp)
		return noSpace(err)
	}
	return nil
}

// Close closes the file; idempotent.
func (k *FileKeyring) Close() error {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.f == nil {
		return nil
	}
	err := k.f.Close()
	k.f = nil
	return err
}

var errClosed = errors.New("sealed: keyring closed")
