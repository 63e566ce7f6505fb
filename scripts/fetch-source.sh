#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Fetch a newer kernel source package from Debian unstable or experimental
# into the cache, without touching the system's apt configuration.
set -eu
. "$(dirname "$0")/lib.sh"

usage() {
	cat <<EOF
usage: $teo_prog PACKAGE [--help]

Download Debian's source package PACKAGE (for example linux-source-7.3,
from experimental, or linux-source-7.2, from unstable) with a private apt
configuration under \$TEO_CACHE/apt, unpack it once into \$TEO_CACHE/base
and print the tree's path, ready for KERNEL_SRC:

  KERNEL_SRC=\$($0 linux-source-7.3) scripts/teo series check

Nothing is installed and the system's apt sources are not changed.
EOF
}

case ${1:-} in
--help|-h) usage; exit 0 ;;
linux-source-[0-9]*) pkg=$1 ;;
"") usage >&2; die "no package given" ;;
*) usage >&2; die "'$1' is not a linux-source-X.Y package name" ;;
esac

need_cmd apt-get dpkg-deb tar
dest=$TEO_CACHE/base/$pkg
if [ -f "$dest/.teo-unpacked" ]; then
	printf '%s\n' "$dest"
	exit 0
fi

apt_dir=$TEO_CACHE/apt
mkdir -p "$apt_dir/lists/partial" "$apt_dir/cache/archives/partial"
printf '%s\n' "deb http://deb.debian.org/debian sid main" \
	"deb http://deb.debian.org/debian experimental main" > "$apt_dir/sources.list"
apt_opts=(-o "Dir::Etc::sourcelist=$apt_dir/sources.list"
	  -o Dir::Etc::sourceparts=- -o "Dir::State::Lists=$apt_dir/lists"
	  -o "Dir::Cache=$apt_dir/cache" -o Debug::NoLocking=1
	  -o APT::Sandbox::User=root)

note "looking up $pkg in Debian unstable and experimental"
apt-get "${apt_opts[@]}" -q update >/dev/null ||
	die "apt-get update with $apt_dir/sources.list failed (no network?)"
need_space "$TEO_CACHE" 3072
tmp=$(mktemp -d "$TEO_CACHE/base/fetch.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
(cd "$tmp" && apt-get "${apt_opts[@]}" -q download "$pkg" >/dev/null 2>&1) ||
	die "$pkg is not in Debian unstable or experimental"
dpkg-deb -x "$tmp"/"$pkg"_*.deb "$tmp/deb"
tarball=$(ls "$tmp/deb/usr/src/$pkg".tar.*) ||
	die "the $pkg package holds no /usr/src/$pkg.tar.*"
note "unpacking $pkg"
tar -xf "$tarball" -C "$tmp"
[ -d "$tmp/$pkg" ] || die "$tarball does not contain $pkg/"
rm -rf "$dest"
mv "$tmp/$pkg" "$dest"
touch "$dest/.teo-unpacked"
printf '%s\n' "$dest"
