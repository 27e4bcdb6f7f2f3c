package admin

import (
	"errors"

	"github.com/earshot-dev/earshot/store"
)

// keyRotator is a sealed store (store/sealed): the only kind
// OpRotateDataKey rotates.
type keyRotator interface {
	RotateDataKey(path string) (int, error)
}

// rotateDataKey carries out OpRotateDataKey.
func rotateDataKey(st store.Store, path string) (int, error) {
	r, ok := st.(keyRotator)
	if !ok {
		return 0, errors.New("rotate-data-key: this store is not encrypted (store.encryption_key_file)")
	}
	return r.RotateDataKey(path)
}
