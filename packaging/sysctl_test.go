package packaging

import (
	"strconv"
	"strings"
	"testing"

	"github.com/earshot-dev/earshot/ingest/rtp"
)

// TestSysctlCoversReadBuffer: the net.core.rmem_max the .deb sets lets a
// call socket have the whole receive queue it asks for (rtp.ReadBuffer);
// the kernel caps SO_RCVBUF at rmem_max, Debian's default 208 KiB.
func TestSysctlCoversReadBuffer(t *testing.T) {
	var got int
	for line := range strings.Lines(string(SysctlConf())) {
		key, value, ok := strings.Cut(line, "=")
		if strings.HasPrefix(strings.TrimSpace(line), "#") || !ok {
			continue
		}
		if strings.TrimSpace(key) != "net.core.rmem_max" {
			t.Errorf("sysctl.conf sets %s: only net.core.rmem_max is earshot's", strings.TrimSpace(key))
			continue
		}
		n, err := strconv.Atoi(strings.TrimSpace(value))
		if err != nil {
			t.Fatalf("net.core.rmem_max = %q: %v", value, err)
		}
		got = n
	}
	if got < rtp.ReadBuffer {
		t.Errorf("net.core.rmem_max = %d, below the %d bytes a call socket asks for", got, rtp.ReadBuffer)
	}
}
