package main

import (
	"path/filepath"
	"testing"
)

// TestTelephoneModelMissing: a telephone model that is not there is an
// error, not the wideband model in its place.
func TestTelephoneModelMissing(t *testing.T) {
	saved := telephoneModel
	t.Cleanup(func() { telephoneModel = saved })
	telephoneModel = filepath.Join(t.TempDir(), "model", "en-us-telephone")
	for _, batch := range []bool{true, false} {
		if e, err := engineFor("mulaw8k", "default", 1, batch); err == nil {
			e.Close()
			t.Errorf("engineFor(mulaw8k, batch %v) with no model at %s: no error", batch, telephoneModel)
		}
	}
}
