package packaging

import (
	"bytes"
	_ "embed"
)

//go:embed earshot.yaml
var defaultConfig []byte

// DefaultConfig returns the commented default config file the .deb
// installs as /etc/earshot/earshot.yaml (and `earshotd service install`
// writes when there is none). The caller gets its own copy.
func DefaultConfig() []byte { return bytes.Clone(defaultConfig) }

//go:embed sysctl.conf
var sysctlConf []byte

// SysctlConf returns the kernel setting the .deb installs as
// /usr/lib/sysctl.d/30-earshot.conf: net.core.rmem_max raised to the
// receive queue the call doors' UDP sockets ask for (ingest/rtp
// ReadBuffer), which the kernel caps at it. The caller gets its own copy.
func SysctlConf() []byte { return bytes.Clone(sysctlConf) }
