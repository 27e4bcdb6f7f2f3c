// Package packaging builds earshot's Debian package and holds what it
// installs besides the binary and the systemd unit (package systemd): the
// commented default config earshot.yaml (embedded, see DefaultConfig) and
// the maintainer scripts in debian/; the Kamailio config for a cluster is
// in packaging/kamailio. build-deb.sh assembles the .deb with
// dpkg-deb; the tests build it and check its contents and scripts.
//
// earshot.yaml documents every key of app.Config with the defaults
// SetDefaults gives; a test fails when the two disagree.
package packaging
