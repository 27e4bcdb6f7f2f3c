package main

import (
	"path/filepath"
	"testing"
)

// TestTelephoneHMMMissing: a telephone model that is not there is an
// error, not the wideband model in its place.
func TestTelephoneHMMMissing(t *testing.T) {
	dir := t.TempDir()
	if got, err := telephoneHMM(dir); err != nil || got != dir {
		t.Errorf("telephoneHMM(%s) = %q, %v; want the directory", dir, got, err)
	}
	missing := filepath.Join(dir, "model", "en-us-telephone")
	if got, err := telephoneHMM(missing); err == nil {
		t.Errorf("telephoneHMM(%s) = %q, nil; want an error", missing, got)
	}
}
