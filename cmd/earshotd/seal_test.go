package main

import (
	"strings"
	"testing"
)

// TestSealExistingRefusals: keys seal-existing names what it needs when it
// cannot run: a data key (encryption at rest off), the embedded store.
func TestSealExistingRefusals(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--data-dir", dir}, "store.encryption_key_file"},
		{[]string{"--data-dir", dir, "--set", "store.backend=postgres", "--set", "store.dsn=postgres://127.0.0.1:1/x", "--set", "store.encryption_key_file=/nonexistent"}, "embedded store only"},
	} {
		_, err := earshotd(t, append([]string{"keys", "seal-existing"}, c.args...)...)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("keys seal-existing %v: %v; want an error naming %q", c.args, err, c.want)
		}
	}
}
