// Package systemd holds earshotd's systemd unit, earshotd.service, the one
// copy of it: the .deb installs the file as it is, and `earshotd service
// install` writes UnitFor(its own path) through kardianos/service.
//
// The unit runs the daemon as the system user earshot with
// /var/lib/earshot as its state directory, read-only elsewhere, with only
// CAP_NET_BIND_SERVICE and a system-call filter; TimeoutStopSec bounds the
// graceful stop that SIGTERM starts. It owns no code beyond reading the
// embedded file.
package systemd
