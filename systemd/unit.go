package systemd

import (
	_ "embed"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
)

// UnitName is the unit's file name, and Name the service's name.
const (
	UnitName = Name + ".service"
	Name     = "earshotd"
)

// DefaultExec is the binary ExecStart names in the unit as shipped, where
// the .deb installs earshotd.
const DefaultExec = "/usr/bin/earshotd"

// DefaultConfig is the config file ExecStart passes to `earshotd run`.
const DefaultConfig = "/etc/earshot/earshot.yaml"

// ErrBadExec is returned by UnitFor when the binary path cannot be written
// into ExecStart as it is.
var ErrBadExec = errors.New("systemd: executable path not usable in ExecStart")

//go:embed earshotd.service
var unit string

// Unit returns earshotd.service as shipped.
func Unit() string { return unit }

// UnitFor returns the unit with ExecStart running exe instead of
// DefaultExec; everything else is as shipped. exe must be an absolute,
// clean path of the characters [A-Za-z0-9._+/-] (no quoting, no systemd
// specifiers, no template markup), else ErrBadExec.
func UnitFor(exe string) (string, error) {
	if !filepath.IsAbs(exe) || filepath.Clean(exe) != exe {
		return "", fmt.Errorf("%w: %q is not an absolute clean path", ErrBadExec, exe)
	}
	for _, c := range []byte(exe) {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.IndexByte("._+/-", c) >= 0) {
			return "", fmt.Errorf("%w: %q has character %q", ErrBadExec, exe, c)
		}
	}
	const line = "\nExecStart=" + DefaultExec + " "
	if strings.Count(unit, line) != 1 {
		return "", fmt.Errorf("systemd: %s has no single ExecStart=%s line", UnitName, DefaultExec)
	}
	return strings.Replace(unit, line, "\nExecStart="+exe+" ", 1), nil
}
