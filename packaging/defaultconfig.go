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
