package sealed

import (
	"errors"
	"fmt"
)

// KeysSuffix names a backup's key file: FILE's wrapped data keys are in
// FILE+KeysSuffix.
const KeysSuffix = ".keys"

type fileBackend interface {
	Dir() string
	BackupFile(path string) (int64, error)
}

// Dir is the backend's directory ("" for a backend that is not one
// local directory).
func (s *Store) Dir() string {
	if b, ok := s.inner.(fileBackend); ok {
		return b.Dir()
	}
	return ""
}

// BackupFile writes the backend's backup to path and the keyring as it
// stands after it to path+KeysSuffix: the wrapped data keys, never a
// key-encryption key. The keyring is copied after the database, so every
// job in the copy has its key (a job created between has a key and no
// record, harmless).
func (s *Store) BackupFile(path string) (int64, error) {
	b, ok := s.inner.(fileBackend)
	if !ok {
		return 0, errors.New("sealed: backup: the backend is not a local file")
	}
	fk, ok := s.ring.(*FileKeyring)
	if !ok {
		return 0, errors.New("sealed: backup: the keyring is not a local file")
	}
	n, err := b.BackupFile(path)
	if err != nil {
		return n, err
	}
	if err := fk.CopyTo(path + KeysSuffix); err != nil {
		return n, fmt.Errorf("sealed: backup keys: %w", err)
	}
	return n, nil
}
