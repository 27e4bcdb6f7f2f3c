package app

import (
	"bytes"
	"errors"
	"log/slog"
	"strings"
	"testing"

	"github.com/earshot-dev/earshot/ingest/rtp"
)

// TestCheckReadQueue: a capped queue is a warning naming
// net.core.rmem_max and what was granted; a full one is an info line.
func TestCheckReadQueue(t *testing.T) {
	for _, c := range []struct {
		granted int
		err     error
		want    []string
	}{
		{212992, nil, []string{"level=WARN", "net.core.rmem_max", "granted_bytes=212992", "asked_bytes=1048576"}},
		{rtp.ReadBuffer, nil, []string{"level=INFO", "bytes=1048576"}},
		{0, errors.New("no socket"), []string{"level=WARN", "no socket"}},
	} {
		var buf bytes.Buffer
		checkReadQueue(slog.New(slog.NewTextHandler(&buf, nil)), c.granted, c.err)
		for _, w := range c.want {
			if !strings.Contains(buf.String(), w) {
				t.Errorf("granted %d, err %v: log %q lacks %q", c.granted, c.err, buf.String(), w)
			}
		}
	}
}
