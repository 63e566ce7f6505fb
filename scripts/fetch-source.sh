#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Fetch a newer kernel source package from Debian unstable or experimental
# into the cache, without touching the system's apt configuration.
set -eu
. "$(dirname "$0")/lib.sh"

usage() {
	cat <<EOF
usage: $teo_prog linux-source-X.Y
       $teo_prog --newest [--cached | --refresh]

Download a Debian kernel source package from unstable (sid) or
experimental with a private apt configuration under \$TEO_CACHE/apt,
unpack it once into \$TEO_CACHE/base and print the tree's path, ready for
KERNEL_SRC:

  KERNEL_SRC=\$($0 --newest) scripts/teo series check

  linux-source-X.Y   that package (for example linux-source-7.3)
  --newest           the newest linux-source-X.Y of unstable and
                     experimental; the answer is kept for a day
  --cached           with --newest: print the tree fetched last, never
                     go to the network; exit 1 if there is none
  --refresh          with --newest: look again even if a day has not passed
  --mirror           print the Debian archive it would use and exit
  --help             show this text

The archive is the one this machine's apt sources name for Debian
(/etc/apt/sources.list, /etc/apt/sources.list.d/*.list and *.sources);
TEO_DEBIAN_MIRROR=URI overrides it (TEO_APT_ETC another apt folder, for
tests).  Nothing is installed and the system's apt configuration is not
changed.
EOF
}

NEWEST_MAX_AGE=86400

# The Debian archive URI of this machine's apt sources: the entry for the
# release it runs (VERSION_CODENAME), else one for sid, unstable, testing,
# trixie or bookworm; security and update suites are not archives of
# source packages.
debian_mirror() {
	local codename="" files=() f etc=${TEO_APT_ETC:-/etc/apt}
	if [ -n "${TEO_DEBIAN_MIRROR:-}" ]; then
		printf '%s\n' "${TEO_DEBIAN_MIRROR%/}"
		return
	fi
	[ -r /etc/os-release ] && codename=$(. /etc/os-release && printf '%s' "${VERSION_CODENAME:-}")
	for f in "$etc/sources.list" "$etc"/sources.list.d/*.list \
		 "$etc"/sources.list.d/*.sources; do
		[ -r "$f" ] && files+=("$f")
	done
	[ ${#files[@]} -gt 0 ] || return 1
	awk -v want="$codename" '
	function consider(uri, suite) {
		if (suite ~ /-(security|updates|backports|proposed-updates)$/)
			return
		if (suite == want && want != "" && !exact) { exact = uri; return }
		if (suite ~ /^(sid|unstable|experimental|testing|stable|trixie|bookworm|forky)$/ && !other)
			other = uri
	}
	# one-line format: deb [options] URI SUITE COMPONENT...
	FILENAME !~ /\.sources$/ {
		sub(/#.*/, "")
		if ($1 != "deb" && $1 != "deb-src") next
		i = 2
		if ($i ~ /^\[/) { while (i <= NF && $i !~ /\]$/) i++; i++ }
		consider($i, $(i + 1))
		next
	}
	# deb822: stanzas of Types, URIs, Suites, Enabled
	function stanza(   n, u, s, a, b, k, l) {
		if (types ~ /(^| )deb( |$)/ && enabled != "no") {
			n = split(uris, a, " ")
			l = split(suites, b, " ")
			for (k = 1; k <= n; k++)
				for (j = 1; j <= l; j++)
					consider(a[k], b[j])
		}
		types = uris = suites = enabled = ""
	}
	FNR == 1 && FILENAME ~ /\.sources$/ { stanza() }
	/^[ \t]*$/ { stanza(); next }
	/^[ \t]*#/ { next }
	/^Types:/ { $1 = ""; types = $0 " " }
	/^URIs:/ { $1 = ""; uris = $0 }
	/^Suites:/ { $1 = ""; suites = $0 }
	/^Enabled:/ { enabled = $2 }
	END { stanza(); u = exact ? exact : other; if (u == "") exit 1; sub(/\/$/, "", u); print u }
	' "${files[@]}"
}

apt_setup() {
	local mirror
	mirror=$(debian_mirror) ||
		die "no Debian archive in /etc/apt/sources.list or sources.list.d; set TEO_DEBIAN_MIRROR=URI"
	apt_dir=$TEO_CACHE/apt
	mkdir -p "$apt_dir/lists/partial" "$apt_dir/cache/archives/partial"
	printf '%s\n' "deb $mirror sid main" "deb $mirror experimental main" \
		> "$apt_dir/sources.list"
	# The machine's update hooks (appstream, packagekit ...) are for its
	# own package lists, not for these.
	printf '%s\n' '#clear APT::Update::Pre-Invoke;' '#clear APT::Update::Post-Invoke;' \
		'#clear APT::Update::Post-Invoke-Success;' > "$apt_dir/apt.conf"
	apt_opts=(-c "$apt_dir/apt.conf" -o "Dir::Etc::sourcelist=$apt_dir/sources.list"
		  -o Dir::Etc::sourceparts=- -o "Dir::State::Lists=$apt_dir/lists"
		  -o "Dir::Cache=$apt_dir/cache" -o Debug::NoLocking=1
		  -o APT::Sandbox::User=root)
	note "looking up Debian unstable and experimental at $mirror"
	apt-get "${apt_opts[@]}" -q update >/dev/null 2>&1 ||
		die "apt-get update from $mirror failed (no network?)"
}

# The newest linux-source-X.Y the private lists know.
newest_package() {
	apt-cache "${apt_opts[@]}" pkgnames linux-source- 2>/dev/null |
		grep -E '^linux-source-[0-9]+\.[0-9]+$' | sort -V | tail -1
}

# Download and unpack $1 into $TEO_CACHE/base/$1 unless it is there.
fetch() {
	local pkg=$1 dest=$TEO_CACHE/base/$1 tmp tarball
	[ ! -f "$dest/.teo-unpacked" ] || return 0
	[ -n "${apt_dir:-}" ] || apt_setup
	need_space "$TEO_CACHE" 3072
	tmp=$(mktemp -d "$TEO_CACHE/base/fetch.XXXXXX")
	# shellcheck disable=SC2064 # the folder is known now
	trap "rm -rf '$tmp'" EXIT
	(cd "$tmp" && apt-get "${apt_opts[@]}" -q download "$pkg" >/dev/null 2>&1) ||
		die "$pkg is not in Debian unstable or experimental"
	dpkg-deb -x "$tmp"/"$pkg"_*.deb "$tmp/deb"
	tarball=$(ls "$tmp/deb/usr/src/$pkg".tar.*) ||
		die "the $pkg package holds no /usr/src/$pkg.tar.*"
	note "unpacking $pkg (once)"
	tar -xf "$tarball" -C "$tmp"
	[ -d "$tmp/$pkg" ] || die "$tarball does not contain $pkg/"
	rm -rf "$dest"
	mv "$tmp/$pkg" "$dest"
	touch "$dest/.teo-unpacked"
	rm -rf "$tmp"
	trap - EXIT
}

# The package --newest found last, if it is unpacked (and young enough).
recorded_newest() {
	local max_age=$1 rec=$TEO_CACHE/base/newest pkg age
	[ -f "$rec" ] || return 1
	pkg=$(cat "$rec")
	[[ $pkg =~ ^linux-source-[0-9]+\.[0-9]+$ ]] || return 1
	[ -f "$TEO_CACHE/base/$pkg/.teo-unpacked" ] || return 1
	age=$(( $(date +%s) - $(stat -c %Y "$rec") ))
	[ "$max_age" -lt 0 ] || [ "$age" -le "$max_age" ] || return 1
	printf '%s\n' "$pkg"
}

pkg="" newest=0 cached=0 refresh=0
while [ $# -gt 0 ]; do
	case $1 in
	--help|-h) usage; exit 0 ;;
	--newest) newest=1 ;;
	--cached) cached=1 ;;
	--refresh) refresh=1 ;;
	--mirror)
		debian_mirror || die "no Debian archive in ${TEO_APT_ETC:-/etc/apt}/sources.list or sources.list.d; set TEO_DEBIAN_MIRROR=URI"
		exit 0 ;;
	-*) usage >&2; echo "$teo_prog: error: unknown option '$1'" >&2; exit 2 ;;
	*)
		[ -z "$pkg" ] || { echo "$teo_prog: error: more than one package given" >&2; exit 2; }
		[[ $1 =~ ^linux-source-[0-9]+\.[0-9]+$ ]] || {
			echo "$teo_prog: error: '$1' is not a package name of the form linux-source-X.Y" >&2
			exit 2
		}
		pkg=$1 ;;
	esac
	shift
done
if [ $newest = 1 ] && [ -n "$pkg" ]; then
	echo "$teo_prog: error: give a package or --newest, not both" >&2
	exit 2
fi
if [ $newest = 0 ] && { [ $cached = 1 ] || [ $refresh = 1 ]; }; then
	echo "$teo_prog: error: --cached and --refresh go with --newest" >&2
	exit 2
fi
if [ $newest = 0 ] && [ -z "$pkg" ]; then
	usage >&2
	echo "$teo_prog: error: no package given" >&2
	exit 2
fi

mkdir -p "$TEO_CACHE/base" 2>/dev/null ||
	die "cannot create $TEO_CACHE/base; set TEO_CACHE to a writable folder"
if [ $cached = 1 ]; then
	pkg=$(recorded_newest -1) || die "no mainline tree fetched yet: run '$0 --newest'"
	printf '%s\n' "$TEO_CACHE/base/$pkg"
	exit 0
fi
need_cmd apt-get apt-cache dpkg-deb tar flock
# One fetch at a time per cache (a private lock: this is no kernel build).
exec 8>>"$TEO_CACHE/base/.fetch.lock"
flock 8
if [ $newest = 1 ]; then
	if [ $refresh = 1 ] || ! pkg=$(recorded_newest $NEWEST_MAX_AGE); then
		apt_setup
		pkg=$(newest_package)
		[ -n "$pkg" ] || die "no linux-source-X.Y package in Debian unstable or experimental"
		fetch "$pkg"
		printf '%s\n' "$pkg" > "$TEO_CACHE/base/newest"
	fi
else
	fetch "$pkg"
fi
printf '%s\n' "$TEO_CACHE/base/$pkg"
