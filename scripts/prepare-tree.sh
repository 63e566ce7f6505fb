#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Lay the teo overlay onto a private copy of a kernel tree and print the
# folder that holds it (src/) and its build folders.
set -eu
. "$(dirname "$0")/lib.sh"

usage() {
	cat <<EOF
usage: $teo_prog [--refresh] [--as-is] [--help]

Prepare a private kernel tree with this repository's files laid over it and
print its cache folder.  The tree is in <folder>/src; build folders go next
to it.  The base tree is never modified: the private copy hard-links its
unchanged files and replaces the files the overlay and the edits touch.

Base tree:
  KERNEL_SRC unset   Debian's $TEO_DEBIAN_PKG, unpacked once into
                     \$TEO_CACHE/base (installed with apt-get if missing)
  KERNEL_SRC=/path   any clean kernel tree, $((TEO_MIN_BASE / 256)).$((TEO_MIN_BASE % 256)) or later

Options:
  --refresh   rebuild the private copy even if it looks current
  --as-is     a copy of the base tree without the overlay and the edits
              (its own teo.c and menu.c; own cache slot <key>-as-is), for
              running a patched upstream tree's governors in the VM
  --help      show this text

Environment: TEO_CACHE (default: <repo>/.cache)
EOF
}

refresh=0
as_is=0
while [ $# -gt 0 ]; do
	case $1 in
	--refresh) refresh=1 ;;
	--as-is) as_is=1 ;;
	--help|-h) usage; exit 0 ;;
	*) usage_error "unknown argument '$1'" ;;
	esac
	shift
done

# Unpack Debian's source package into the cache once; print the tree path.
debian_base() {
	local dest=$TEO_CACHE/base/$TEO_DEBIAN_PKG tmp

	if [ -f "$dest/.teo-unpacked" ]; then
		printf '%s\n' "$dest"
		return
	fi
	if [ ! -f "$TEO_DEBIAN_TARBALL" ]; then
		[ "$(id -u)" -eq 0 ] ||
			die "$TEO_DEBIAN_TARBALL is missing: run 'apt-get install $TEO_DEBIAN_PKG' as root, or set KERNEL_SRC"
		note "installing $TEO_DEBIAN_PKG with apt-get"
		apt-get install -y -q "$TEO_DEBIAN_PKG" >&2 ||
			die "apt-get install $TEO_DEBIAN_PKG failed"
	fi
	need_space "$TEO_CACHE" 2048
	note "unpacking $TEO_DEBIAN_TARBALL (once)"
	tmp=$(mktemp -d "$TEO_CACHE/base/unpack.XXXXXX")
	if ! tar -xJf "$TEO_DEBIAN_TARBALL" -C "$tmp"; then
		rm -rf "$tmp"
		die "could not unpack $TEO_DEBIAN_TARBALL"
	fi
	[ -d "$tmp/$TEO_DEBIAN_PKG" ] || {
		rm -rf "$tmp"
		die "$TEO_DEBIAN_TARBALL does not contain $TEO_DEBIAN_PKG/"
	}
	rm -rf "$dest"
	mv "$tmp/$TEO_DEBIAN_PKG" "$dest"
	rmdir "$tmp"
	touch "$dest/.teo-unpacked"
	printf '%s\n' "$dest"
}

# Copy tree $1 to $2, hard-linking files where the file system allows.
link_copy() {
	local from=$1 to=$2 entry mode=-al

	mkdir -p "$to"
	# Hard links need one file system; fall back to a real copy.
	if ! ln "$from/Makefile" "$to/.link-test" 2>/dev/null; then
		note "$from is on another file system: copying it (slower)"
		mode=-a
	fi
	rm -f "$to/.link-test"
	for entry in "$from"/* "$from"/.[!.]*; do
		[ -e "$entry" ] || continue
		case ${entry##*/} in
		.git|.teo-unpacked) continue ;;
		esac
		cp $mode "$entry" "$to/"
	done
}

# Replace a hard link with a private copy so the base never changes.
unshare_file() {
	local f=$1
	[ -f "$f" ] || return 0
	cp -p "$f" "$f.teo-tmp"
	mv -f "$f.teo-tmp" "$f"
}

# The upstream edits in the order the series applies them: those of each
# series/NN-*.commit (its Edits: line) in the order of NN, then any edit no
# commit names.  Two edits of the same lines of a file (MAINTAINERS) only
# apply in that order.
ordered_edits() {
	local c e listed=" "
	for c in "${TEO_EDITS_DIR%/*}"/[0-9]*.commit; do
		[ -e "$c" ] || continue
		# One word per edit name.
		# shellcheck disable=SC2013
		for e in $(sed -n '1,/^$/s/^Edits:[[:space:]]*//p' "$c"); do
			[ -f "$TEO_EDITS_DIR/$e" ] || continue
			printf '%s\n' "$TEO_EDITS_DIR/$e"
			listed="$listed$e "
		done
	done
	for e in "$TEO_EDITS_DIR"/*.patch; do
		[ -e "$e" ] || continue
		case $listed in
		*" ${e##*/} "*) ;;
		*) printf '%s\n' "$e" ;;
		esac
	done
}

# Apply the upstream edits to tree $1; on a mismatch name the file and base.
apply_edits() {
	local tree=$1 ver=$2 edit target

	while IFS= read -r edit; do
		sed -n 's|^+++ b/\([^[:space:]]*\).*|\1|p' "$edit" |
		while IFS= read -r target; do
			unshare_file "$tree/$target"
		done
		if ! patch -s -p1 -d "$tree" --dry-run --fuzz=0 --forward \
			-i "$edit" >/dev/null 2>&1; then
			target=$(sed -n 's|^+++ b/\([^[:space:]]*\).*|\1|p' "$edit" | tr '\n' ' ')
			note "edit ${edit#"$TEO_REPO"/} does not apply to ${target% } of Linux $ver"
			return 1
		fi
		patch -s -p1 -d "$tree" --fuzz=0 --forward --no-backup-if-mismatch \
			-i "$edit" >/dev/null
	done < <(ordered_edits)
}

# Print what makes tree $1's copies of the overlay paths equal to the
# repository's: "copy<TAB>from<TAB>to" for each file that differs and
# "remove<TAB>file" for files of our directories the repository dropped.
overlay_changes() {
	local tree=$1 path rel

	while IFS= read -r path; do
		[ -e "$TEO_REPO/$path" ] || continue
		if [ -d "$TEO_REPO/$path" ]; then
			# The directory is ours alone: drop files we no longer have.
			if [ -d "$tree/$path" ]; then
				(cd "$tree/$path" && find . -type f) | while IFS= read -r rel; do
					[ -e "$TEO_REPO/$path/$rel" ] ||
						printf 'remove\t%s\n' "$tree/$path/$rel"
				done
			fi
			(cd "$TEO_REPO/$path" && find . -type f) | while IFS= read -r rel; do
				cmp -s "$TEO_REPO/$path/$rel" "$tree/$path/$rel" 2>/dev/null ||
					printf 'copy\t%s\t%s\n' "$TEO_REPO/$path/$rel" "$tree/$path/$rel"
			done
		else
			cmp -s "$TEO_REPO/$path" "$tree/$path" 2>/dev/null ||
				printf 'copy\t%s\t%s\n' "$TEO_REPO/$path" "$tree/$path"
		fi
	done <<EOF
$TEO_OVERLAY_PATHS
EOF
}

# Update tree $1's overlay files, touching only those that differ so that
# rebuilds stay incremental.
sync_overlay() {
	local action from to
	overlay_changes "$1" | while IFS=$'\t' read -r action from to; do
		case $action in
		remove) rm -f "$from" ;;
		copy)
			mkdir -p "$(dirname "$to")"
			# Never write through a hard link into the base tree.
			rm -f "$to"
			cp "$from" "$to"
			;;
		esac
	done
}

# Everything that decides the content of the private copy besides overlay
# files, which are synced on every call.
tree_stamp() {
	local base=$1
	{
		printf 'base=%s\n' "$base"
		kernel_version "$base"
		ordered_edits | while IFS= read -r edit; do cat "$edit"; done
		printf '%s\n' "$TEO_OVERLAY_PATHS"
	} | sha1sum | cut -c1-40
}

main() {
	local base ver slot stamp new

	need_cmd patch sha1sum tar xz flock cmp
	# The base first, then the cache: a wrong KERNEL_SRC creates nothing.
	if [ -n "${KERNEL_SRC:-}" ]; then
		check_kernel_src "$KERNEL_SRC"
		base=$(cd "$KERNEL_SRC" && pwd)
		check_kernel_tree "$base"
	fi
	need_cache
	mkdir -p "$TEO_CACHE/base" "$TEO_CACHE/trees"

	if [ -z "${KERNEL_SRC:-}" ]; then
		[ -f "$TEO_CACHE/base/$TEO_DEBIAN_PKG/.teo-unpacked" ] || build_lock
		base=$(debian_base)
	fi
	check_kernel_tree "$base"
	ver=$(kernel_version "$base")
	slot=$TEO_CACHE/trees/$(tree_key "$base")
	stamp=$(tree_stamp "$base")
	if [ $as_is = 1 ]; then
		slot=$slot-as-is
		stamp=$(printf 'as-is base=%s %s\n' "$base" "$ver" | sha1sum | cut -c1-40)
	fi

	# Nothing to change: no need to wait for builds.
	if [ $refresh = 0 ] && [ -f "$slot/src.stamp" ] &&
	   [ "$(cat "$slot/src.stamp")" = "$stamp" ] &&
	   { [ $as_is = 1 ] || [ -z "$(overlay_changes "$slot/src")" ]; }; then
		printf '%s\n' "$slot"
		return
	fi

	# Builds may be reading the private tree: change it only under the lock.
	build_lock
	if [ $refresh = 1 ] || [ ! -f "$slot/src.stamp" ] ||
	   [ "$(cat "$slot/src.stamp")" != "$stamp" ]; then
		need_space "$TEO_CACHE" 1024
		note "preparing a private copy of Linux $ver from $base"
		mkdir -p "$slot"
		new=$(mktemp -d "$slot/src.new.XXXXXX")
		chmod 755 "$new"
		link_copy "$base" "$new"
		if [ $as_is = 1 ]; then
			: # the base as it is
		elif ! apply_edits "$new" "$ver"; then
			rm -rf "$new"
			die "the base does not take the series' edits; the cache and $base are unchanged"
		fi
		[ $as_is = 1 ] || sync_overlay "$new"
		rm -rf "$slot/src.old"
		[ ! -d "$slot/src" ] || mv "$slot/src" "$slot/src.old"
		mv "$new" "$slot/src"
		rm -rf "$slot/src.old"
		printf '%s\n' "$stamp" > "$slot/src.stamp"
		printf '%s\n' "$base" > "$slot/base"
	elif [ $as_is = 0 ]; then
		sync_overlay "$slot/src"
	fi
	printf '%s\n' "$slot"
}

main
