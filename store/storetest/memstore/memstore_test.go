package memstore_test

import (
	"errors"
	"testing"

	"github.com/earshot-dev/earshot/store"
	"github.com/earshot-dev/earshot/store/storetest"
	"github.com/earshot-dev/earshot/store/storetest/memstore"
)

// TestConformance runs the backends' conformance suite against the fake,
// so a unit test that passes on it relies only on what the real stores
// promise.
func TestConformance(t *testing.T) {
	storetest.Run(t, func(t testing.TB) store.Store {
		s := memstore.New()
		t.Cleanup(func() {
			if err := s.Check(); err != nil && !errors.Is(err, store.ErrClosed) {
				t.Errorf("memstore inconsistent after test: %v", err)
			}
			s.Close()
		})
		return s
	})
}
