package sealed

import "os"

// OnRewrap sets the failpoint called after each re-wrap of a rotation.
func OnRewrap(s *Store, f func(n int)) { s.rewrapped = f }

// WaitResumed waits for the rotation Open resumed to end.
func WaitResumed(s *Store) { s.wg.Wait() }

// ReadKeyring reads a keyring file's entries and rotation without writing.
var ReadKeyring = readKeyring

// AppendRewrapped appends to the keyring file at path a slot holding id's
// data key re-wrapped from from to to, leaving the old slot: the state a
// kill leaves between a re-wrap's two writes (Keyring.Put).
func AppendRewrapped(path, id string, e Entry, from, to *KEK) error {
	raw, err := from.unwrap(id, e.Wrapped)
	if err != nil {
		return err
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		return err
	}
	defer f.Close()
	_, err = f.Write(encodeSlot(id, Entry{KEK: to.ID(), Wrapped: to.wrap(id, raw)}))
	return err
}

// CopyBlobKey re-wraps blob src's data key as blob dst's, touching
// neither blob: the state a kill leaves inside LinkBlob, between the key's
// write and the copy.
func CopyBlobKey(s *Store, src, dst string) error {
	e, ok := s.ring.Get(blobKey(src))
	if !ok {
		return os.ErrNotExist
	}
	raw, err := s.unwrapEntry(blobKey(src), e)
	if err != nil {
		return err
	}
	return s.ring.Put(blobKey(dst), s.wrapEntry(blobKey(dst), raw))
}
