#!/bin/sh
# Build the earshot .deb with dpkg-deb (no nfpm, no docker).
#
# usage: packaging/build-deb.sh [BINARY]
#   BINARY   earshotd to package; default: built here with `go build`.
# environment:
#   DEB_OUT  output directory (default: dist/ at the top of the repo)
#   VERSION  package version (default: from git, else 0.1.0)
#   ARCH     Debian architecture (default: dpkg --print-architecture)
#   GO       go command (default: go)
# Prints the path of the .deb it wrote.
set -eu

here=$(cd "$(dirname "$0")" && pwd)
top=$(dirname "$here")
out=${DEB_OUT:-$top/dist}
arch=${ARCH:-$(dpkg --print-architecture)}

if [ -z "${VERSION:-}" ]; then
	VERSION=0.1.0
	if desc=$(git -C "$top" describe --tags --match 'v[0-9]*' 2>/dev/null); then
		VERSION=$(echo "${desc#v}" | sed 's/-/+/; s/-/./g')
	elif sha=$(git -C "$top" rev-parse --short HEAD 2>/dev/null); then
		VERSION="0.1.0~git$(git -C "$top" log -1 --format=%cd --date=format:%Y%m%d).$sha"
	fi
fi
case "$VERSION" in
[0-9]*) ;;
*) echo "build-deb: VERSION must start with a digit: $VERSION" >&2; exit 1 ;;
esac

stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT INT TERM
root="$stage/earshot"
mkdir -p "$root/DEBIAN"

if [ $# -ge 1 ]; then
	install -D -m 0755 "$1" "$root/usr/bin/earshotd"
else
	mkdir -p "$root/usr/bin"
	(cd "$top" && ${GO:-go} build -trimpath -o "$root/usr/bin/earshotd" ./cmd/earshotd)
	chmod 0755 "$root/usr/bin/earshotd"
fi
install -D -m 0644 "$top/systemd/earshotd.service" "$root/lib/systemd/system/earshotd.service"
install -D -m 0644 "$here/earshot.yaml" "$root/etc/earshot/earshot.yaml"
install -D -m 0644 "$top/README.md" "$root/usr/share/doc/earshot/README.md"
# net.core.rmem_max at the call sockets' receive queue (ingest/rtp ReadBuffer).
install -D -m 0644 "$here/sysctl.conf" "$root/usr/lib/sysctl.d/30-earshot.conf"
# Kamailio in front of a cluster (docs/deploy-kamailio.md): the config as
# `earshotd kamailio config` prints it by default, and an example node list.
install -D -m 0644 "$here/kamailio/kamailio.cfg" "$root/usr/share/earshot/kamailio/kamailio.cfg"
install -D -m 0644 "$here/kamailio/dispatcher.list" "$root/usr/share/earshot/kamailio/dispatcher.list"
# The telephone-band acoustic model (`make model`), as committed: the files
# it changes, and links into pocketsphinx-en-us's model for the others.
model="$root/usr/share/earshot/model/en-us-telephone"
mkdir -p "$model"
for f in "$top"/model/en-us-telephone/*; do
	if [ -L "$f" ]; then
		ln -s "$(readlink "$f")" "$model/$(basename "$f")"
	else
		install -m 0644 "$f" "$model/$(basename "$f")"
	fi
done
for s in postinst prerm postrm; do
	install -m 0755 "$here/debian/$s" "$root/DEBIAN/$s"
done
echo /etc/earshot/earshot.yaml >"$root/DEBIAN/conffiles"

size=$(du -sk --exclude=DEBIAN "$root" | cut -f1)
cat >"$root/DEBIAN/control" <<CONTROL
Package: earshot
Version: $VERSION
Architecture: $arch
Maintainer: earshot developers <earshot@localhost>
Installed-Size: $size
Depends: libc6, libpocketsphinx3, libsphinxbase3, pocketsphinx-en-us, libspeexdsp1, libopus0, libspandsp2, ffmpeg, adduser
Section: sound
Priority: optional
Homepage: https://github.com/earshot-dev/earshot
Description: on-premises speech-to-text appliance
 earshotd serves the /v2 transcription API (REST and WebSocket), takes
 call audio over SIP/RTP and WebRTC, recognises speech on the box with
 PocketSphinx, keeps jobs in one bbolt file plus audio files, and calls
 back on-premises systems. It runs as the systemd service earshotd.
CONTROL

mkdir -p "$out"
deb="$out/earshot_${VERSION}_${arch}.deb"
# zstd (dpkg 1.21.18 and later: Debian 12, Ubuntu 21.10): 0.3 s to compress
# where xz took 14 s (17.6 CPU s), for a .deb 16 % larger (17.2 MB, 14.8 MB).
dpkg-deb --root-owner-group -Zzstd --build "$root" "$deb" >/dev/null
echo "$deb"
