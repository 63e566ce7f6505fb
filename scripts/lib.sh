# SPDX-License-Identifier: GPL-2.0
# Shared helpers for the teo tooling.  Source it from bash scripts:
#   . "$(dirname "$0")/lib.sh"
# shellcheck shell=bash
# shellcheck disable=SC2034 # the variables are for the sourcing scripts

TEO_REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
TEO_CACHE=${TEO_CACHE:-$TEO_REPO/.cache}
# Default base tree: Debian's 6.12 LTS source package.
TEO_DEBIAN_PKG=linux-source-6.12
TEO_DEBIAN_TARBALL=/usr/src/linux-source-6.12.tar.xz
# Oldest base the overlay is written for (VERSION * 256 + PATCHLEVEL).
TEO_MIN_BASE=$((6 * 256 + 12))
# The in-tree paths this repository owns; each is copied over the base tree.
TEO_OVERLAY_PATHS="drivers/cpuidle/governors/teo.c
drivers/cpuidle/governors/teo.h
drivers/cpuidle/governors/.kunitconfig
drivers/cpuidle/governors/tests/teo_kunit.c
include/trace/events/cpuidle_teo.h
tools/testing/selftests/cpuidle-teo
Documentation/admin-guide/pm/teo.rst"
# Small changes to upstream files, applied in the order of the commits that
# name them (scripts/prepare-tree.sh ordered_edits).
TEO_EDITS_DIR=$TEO_REPO/series/edits
# A lock shared by everything that builds a kernel or benchmarks: two kernel
# builds, or a build and a benchmark, must never share this machine.  The
# private tree is only changed under it too.  It is not recursive: never call
# a script that takes it (prepare-tree.sh, with_build_lock) while holding it.
TEO_LOCK=${TEO_LOCK:-/tmp/teo-kernel-build.lock}

# ccache (its own folder, outside the repository) hashes paths under the
# cache relative to the build folder, so the private tree and the series
# check tree, laid out alike, share compile results.  Side effect: __FILE__
# reads ../src/<path> in those builds.
export CCACHE_BASEDIR="$TEO_CACHE" CCACHE_NOHASHDIR=1

# Run Debian's tools only, not whatever a user installed by hand (pyenv
# shims, /usr/local, ~/.cargo): every command must come from a package that
# scripts/deps.list names, and scripts/check-deps.sh audits that.  Tools
# that probe for optional programs (the kernel's Kconfig looks for rustc)
# must not find hand-installed ones either.
PATH=/usr/sbin:/usr/bin:/sbin:/bin
export PATH

teo_prog=$(basename "$0")
# The command line, as the lock file records it.
teo_cmdline="$teo_prog $*"

die() {
	printf '%s: error: %s\n' "$teo_prog" "$*" >&2
	exit 1
}

# A usage error: one line, exit 2.
usage_error() {
	printf '%s: error: %s (see --help)\n' "$teo_prog" "$*" >&2
	exit 2
}

note() {
	printf '%s: %s\n' "$teo_prog" "$*" >&2
}

# Print the Debian package that provides command $1 to the tooling, as
# scripts/deps.list says; nothing if it is not listed.
deps_package_of() {
	awk -v cmd="$1" '
		/^#/ || NF < 2 { next }
		{ n = split($2, c, ","); for (i = 1; i <= n; i++) if (c[i] == cmd) { print $1; exit } }
	' "$TEO_REPO/scripts/deps.list"
}

need_cmd() {
	local cmd pkg
	for cmd in "$@"; do
		command -v "$cmd" >/dev/null 2>&1 && continue
		pkg=$(deps_package_of "$cmd")
		[ -n "$pkg" ] ||
			die "'$cmd' not found, and scripts/deps.list names no package for it (a bug: add it there)"
		die "'$cmd' not found: it comes from the Debian package $pkg; run 'scripts/deps.sh' as root (or: apt-get install $pkg)"
	done
}

# Free space in MiB on the file system holding $1 (which must exist).
free_mib() {
	df -Pm "$1" | awk 'NR == 2 { print $4 }'
}

need_space() {
	local dir=$1 want_mib=$2 have
	mkdir -p "$dir"
	have=$(free_mib "$dir")
	[ "$have" -ge "$want_mib" ] ||
		die "only ${have} MiB free under $dir, need ${want_mib} MiB; free some space or set TEO_CACHE to a larger disk"
}

# The nearest existing path at or above path $1.
existing_parent() {
	local p=$1
	while [ ! -e "$p" ] && [ "$p" != / ] && [ "$p" != . ]; do
		p=$(dirname "$p")
	done
	printf '%s\n' "$p"
}

# Die unless folder $1 exists and is writable, or can be created; $2 names
# it in the message.  Creates nothing.
need_writable_dir() {
	local dir=$1 what=${2:-$1} p
	p=$(existing_parent "$dir")
	if [ -e "$dir" ] && [ ! -d "$dir" ]; then
		die "$what is not a folder"
	elif [ ! -d "$p" ]; then
		die "$what cannot be created: $p is not a folder"
	elif [ ! -w "$p" ] || [ ! -x "$p" ]; then
		die "$what is not writable (no write permission on $p); choose another folder"
	fi
}

# The cache folder must be usable before anything is unpacked or built.
need_cache() {
	need_writable_dir "$TEO_CACHE" "the cache folder TEO_CACHE=$TEO_CACHE"
	if ! mkdir -p "$TEO_CACHE" 2>/dev/null || [ ! -w "$TEO_CACHE" ]; then
		die "the cache folder TEO_CACHE=$TEO_CACHE is not writable (read-only file system?); choose another folder"
	fi
}

# --- cleanup of everything a script started --------------------------------
#
# Long-running children (kernel builds, QEMU, workloads) run in their own
# process group (spawn_group, run_group), so that a signal to this script
# stops all of them, grandchildren included; the build lock, temporary
# files and registered hooks are released on every exit.  Only the shell
# that registered them cleans up: a subshell starts its own lists.

teo_groups=
teo_pids=
teo_hooks=
teo_owner=
teo_last=
teo_heartbeat=

teo_install_traps() {
	local prev
	[ "$teo_owner" != "$BASHPID" ] || return 0
	teo_owner=$BASHPID
	teo_groups=
	teo_pids=
	teo_hooks=
	# Keep an EXIT trap the script set before: it becomes the last hook.
	# Only in the script's own shell: in a subshell "trap -p" still shows
	# the parent's traps, which bash does not run when the subshell exits;
	# taking them over ran the parent's cleanup (its rm -rf hooks, and
	# teo_cleanup itself, recursing until bash crashed) in every subshell.
	if [ "$BASHPID" = "$$" ]; then
		prev=$(trap -p EXIT)
		prev=${prev#"trap -- '"}
		prev=${prev%"' EXIT"}
		[ -z "$prev" ] || [ "$prev" = teo_cleanup ] || teo_hooks=$prev
	fi
	trap teo_cleanup EXIT
	trap 'teo_signal INT 130' INT
	trap 'teo_signal TERM 143' TERM
	trap 'teo_signal HUP 129' HUP
}

teo_signal() {
	trap - INT TERM HUP
	note "interrupted by SIG$1: stopping what this run started"
	exit "$2"
}

# Stop process group $1 (TERM, then KILL after 10 s) and reap its leader.
stop_group() {
	local pid=$1 i
	kill -TERM -- "-$pid" 2>/dev/null || return 0
	for i in 1 2 3 4 5 6 7 8 9 10; do
		kill -0 -- "-$pid" 2>/dev/null || break
		sleep 1
	done
	[ "$i" != 10 ] || kill -KILL -- "-$pid" 2>/dev/null || true
	wait "$pid" 2>/dev/null || true
}

teo_cleanup() {
	local status=$? pid hook
	[ "$teo_owner" = "$BASHPID" ] || return "$status"
	trap - INT TERM HUP
	for pid in $teo_pids; do
		kill "$pid" 2>/dev/null || true
	done
	for pid in $teo_groups; do
		stop_group "$pid"
	done
	while IFS= read -r hook; do
		[ -z "$hook" ] || eval "$hook" || true
	done <<HOOKS
$teo_hooks
HOOKS
	teo_release_lock
	return "$status"
}

# Run shell command $1 when the script exits, however it exits (the last
# registered runs first).
at_exit() {
	teo_install_traps
	teo_hooks="$1
$teo_hooks"
}

# Remove path $1 when the script exits.
remove_at_exit() {
	at_exit "rm -rf $(printf '%q' "$1")"
}

# Start "$@" in the background in its own process group; its pid (the
# group's id) is left in $teo_last.
spawn_group() {
	teo_install_traps
	setsid "$@" &
	teo_last=$!
	teo_groups="$teo_groups $teo_last"
}

# Start "$@" in the background; it is killed at exit.  Pid in $teo_last.
spawn() {
	teo_install_traps
	"$@" &
	teo_last=$!
	teo_pids="$teo_pids $teo_last"
}

# Forget the finished child $1.
forget_child() {
	local p keep_g='' keep_p=''
	for p in $teo_groups; do [ "$p" = "$1" ] || keep_g="$keep_g $p"; done
	for p in $teo_pids; do [ "$p" = "$1" ] || keep_p="$keep_p $p"; done
	teo_groups=$keep_g
	teo_pids=$keep_p
}

# Run "$@" in its own process group, wait for it and return its status.
run_group() {
	local pid status=0
	spawn_group "$@"
	pid=$teo_last
	wait "$pid" || status=$?
	forget_child "$pid"
	return "$status"
}

# --- progress ---------------------------------------------------------------

# Say every minute that step $1 is still running (expected to take $2);
# stop with heartbeat_stop.
heartbeat_start() {
	# shellcheck disable=SC2016 # expanded by the child shell
	spawn bash -c '
		t0=$SECONDS
		while sleep 60; do
			printf "%s: ... still %s: %d min so far (expected: %s)\n" \
				"$0" "$1" $(((SECONDS - t0) / 60)) "$2" >&2
		done' "$teo_prog" "$1" "$2"
	teo_heartbeat=$teo_last
}

heartbeat_stop() {
	[ -n "$teo_heartbeat" ] || return 0
	kill "$teo_heartbeat" 2>/dev/null || true
	wait "$teo_heartbeat" 2>/dev/null || true
	forget_child "$teo_heartbeat"
	teo_heartbeat=
}

# Run the long step "$3..." in its own process group: say what runs ($1)
# and how long it usually takes ($2).  On a terminal the command's own
# output shows progress; otherwise a heartbeat line comes every minute.
run_step() {
	local what=$1 expect=$2 status=0 t0=$SECONDS
	shift 2
	note "$what (expected: $expect)"
	[ -t 2 ] || heartbeat_start "$what" "$expect"
	run_group "$@" || status=$?
	heartbeat_stop
	[ "$status" -ne 0 ] || note "done in $((SECONDS - t0)) s: $what"
	return "$status"
}

# --- the machine-wide build lock -------------------------------------------
#
# flock(2) on $TEO_LOCK, held on file descriptor 9 by the shell that took
# it and inherited by its children.  The holder writes who it is into the
# lock file (when the file is its own), so that a waiter can say for whom
# it waits.

teo_locked=0

# Describe the current holder of the lock as well as it can be known.
lock_holder() {
	local pid rest ino
	if read -r pid rest < "$TEO_LOCK" 2>/dev/null && [ -n "$pid" ] &&
	   kill -0 "$pid" 2>/dev/null; then
		printf 'pid %s %s\n' "$pid" "$rest"
		return
	fi
	# Not recorded (a manual flock, or an older script): /proc/locks names
	# the pid that took it, which may be a helper that has exited.
	ino=$(stat -c %i "$TEO_LOCK" 2>/dev/null) || { echo "an unknown process"; return; }
	while read -r pid; do
		if kill -0 "$pid" 2>/dev/null; then
			printf 'pid %s (%s)\n' "$pid" "$(ps -o user=,args= -p "$pid" 2>/dev/null | cut -c1-160)"
			return
		fi
	done < <(awk -v ino=":$ino" '$2 == "FLOCK" &&
		substr($6, length($6) - length(ino) + 1) == ino { print $5 }' /proc/locks 2>/dev/null)
	echo "a process that did not record itself in the lock file"
}

teo_open_lock() {
	local err
	if [ -e "$TEO_LOCK" ] && [ ! -O "$TEO_LOCK" ]; then
		# Another user's lock file: flock works on a read-only descriptor.
		{ exec 9<"$TEO_LOCK"; } 2>/dev/null ||
			die "the build lock $TEO_LOCK belongs to user $(stat -c %U "$TEO_LOCK") and $(id -un) cannot read it; ask them to run 'chmod a+r $TEO_LOCK', or set TEO_LOCK to another file if you do not share builds with them"
		return
	fi
	err=$( { : 9>>"$TEO_LOCK"; } 2>&1 ) ||
		die "cannot create the build lock $TEO_LOCK (${err##*: }); set TEO_LOCK to a file you can write"
	exec 9>>"$TEO_LOCK"
}

teo_release_lock() {
	[ "$teo_locked" = 1 ] || return 0
	# Clear the record in our own file (never truncate another user's).
	if [ -O "$TEO_LOCK" ]; then
		: 2>/dev/null > "$TEO_LOCK" || true
	fi
	flock -u 9 2>/dev/null || true
	exec 9>&-
	teo_locked=0
}

# Hold the build lock in this shell until build_unlock or exit; while
# waiting, say so and for whom.  It is not recursive: call no script that
# takes it (prepare-tree.sh, vm.sh) while holding it.
build_lock() {
	local t0=$SECONDS
	need_cmd flock
	teo_install_traps
	teo_open_lock
	if ! flock -n 9; then
		note "waiting for the build lock $TEO_LOCK, held by $(lock_holder)"
		until flock -w 60 9; do
			note "... still waiting for the build lock ($(((SECONDS - t0) / 60)) min), held by $(lock_holder)"
		done
		note "got the build lock after $((SECONDS - t0)) s"
	fi
	teo_locked=1
	if [ -O "$TEO_LOCK" ]; then
		printf '%s user %s since %s: %s\n' "$$" "$(id -un)" \
			"$(date -u '+%H:%M:%S UTC')" "$teo_cmdline" 2>/dev/null > "$TEO_LOCK" || true
	fi
}

build_unlock() {
	teo_release_lock
}

# Run "$@" holding the machine-wide build lock, in its own process group.
with_build_lock() {
	local status=0
	build_lock
	run_group "$@" || status=$?
	build_unlock
	return "$status"
}

# Print a folder to put first in PATH for kunit.py: its qemu-system-x86_64
# runs the real one without the "-accel kvm" and "-accel hvf" that
# kunit.py asks for first since Linux 6.15.  An openable /dev/kvm is no
# proof that KVM runs a guest: under nested virtualisation the KUnit
# kernel hangs until kunit.py's timeout (300 s) and reports no tests,
# while TCG runs the whole suite in seconds of guest time.  Every base
# then runs KUnit the same way.
kunit_qemu_dir() {
	local dir=$TEO_CACHE/kunit-qemu real
	real=$(command -v qemu-system-x86_64) ||
		die "'qemu-system-x86_64' not found: it comes from the Debian package $(deps_package_of qemu-system-x86_64 || true); run 'scripts/deps.sh' as root"
	[ "$real" != "$dir/qemu-system-x86_64" ] ||
		die "PATH starts with $dir: call kunit_qemu_dir with the PATH lib.sh sets"
	mkdir -p "$dir"
	cat > "$dir/qemu-system-x86_64.new" <<EOF_WRAPPER
#!/bin/sh
# Generated by scripts/lib.sh (kunit_qemu_dir): QEMU without -accel kvm/hvf.
set -eu
drop=0
for arg do
	shift
	if [ "\$drop" = 1 ]; then
		drop=0
		case \$arg in
		kvm|hvf) continue ;;
		esac
		set -- "\$@" -accel "\$arg"
	elif [ "\$arg" = -accel ]; then
		drop=1
	else
		set -- "\$@" "\$arg"
	fi
done
exec $real "\$@"
EOF_WRAPPER
	chmod +x "$dir/qemu-system-x86_64.new"
	mv -f "$dir/qemu-system-x86_64.new" "$dir/qemu-system-x86_64"
	printf '%s\n' "$dir"
}

# Check a custom idle state list "[poll,]LAT/RES[,LAT/RES...]" (us) as the
# cpuidle-emu module will: at most CPUIDLE_STATE_MAX (10) states counting
# the polling one, exit latencies up to 100 ms, residencies not decreasing,
# each number a 32-bit unsigned value.  Dies with a usage error naming the
# option $2 (default --states).
check_states_list() {
	local list=$1 opt=${2:-"--states"} item lat res n=0 prev=0 rest
	local want="want [poll,]LAT/RES[,LAT/RES...] in microseconds, e.g. poll,1/1,120/360"
	[ -n "$list" ] || usage_error "$opt: empty list; $want"
	rest=$list
	if [ "$rest" = poll ] || [ "${rest#poll,}" != "$rest" ]; then
		n=1
		rest=${rest#poll}
		rest=${rest#,}
	fi
	[ -z "$rest" ] && return 0
	[[ $rest =~ ^[0-9]{1,10}/[0-9]{1,10}(,[0-9]{1,10}/[0-9]{1,10})*$ ]] ||
		usage_error "$opt '$list': $want"
	for item in ${rest//,/ }; do
		lat=$((10#${item%/*}))
		res=$((10#${item#*/}))
		n=$((n + 1))
		[ "$n" -le 10 ] ||
			usage_error "$opt '$list': more than 10 states (the kernel's CPUIDLE_STATE_MAX, polling state included)"
		[ "$lat" -le 100000 ] ||
			usage_error "$opt '$list': exit latency $lat us of state $((n - 1)) is above 100000 us (100 ms), which cpuidle-emu refuses"
		[ "$res" -le 4294967295 ] ||
			usage_error "$opt '$list': residency $res us does not fit 32 bits"
		[ "$res" -ge "$prev" ] ||
			usage_error "$opt '$list': residency $res us of state $((n - 1)) is below the previous state's $prev us; list the states shallowest first"
		prev=$res
	done
}

# Print "VERSION.PATCHLEVEL.SUBLEVEL" of the kernel tree $1, or fail.
kernel_version() {
	local mk=$1/Makefile v p s
	[ -f "$mk" ] || return 1
	v=$(sed -n 's/^VERSION = \([0-9]*\)$/\1/p' "$mk")
	p=$(sed -n 's/^PATCHLEVEL = \([0-9]*\)$/\1/p' "$mk")
	s=$(sed -n 's/^SUBLEVEL = \([0-9]*\)$/\1/p' "$mk")
	[ -n "$v" ] && [ -n "$p" ] || return 1
	printf '%s.%s.%s\n' "$v" "$p" "${s:-0}"
}

# Check that the path $1 given as KERNEL_SRC is a readable folder.
check_kernel_src() {
	local src=$1
	if [ ! -e "$src" ]; then
		die "KERNEL_SRC=$src does not exist"
	elif [ ! -d "$src" ]; then
		die "KERNEL_SRC=$src is a file, not a kernel source folder"
	elif [ ! -r "$src" ] || [ ! -x "$src" ]; then
		die "KERNEL_SRC=$src is not readable by $(id -un)"
	fi
}

# Check that $1 is a kernel tree the overlay can go onto; die otherwise.
check_kernel_tree() {
	local src=$1 ver major minor
	check_kernel_src "$src"
	ver=$(kernel_version "$src") ||
		die "KERNEL_SRC=$src is not a kernel tree (no top-level Makefile with VERSION/PATCHLEVEL)"
	if [ ! -f "$src/drivers/cpuidle/governors/Makefile" ] ||
	   [ ! -f "$src/tools/testing/kunit/kunit.py" ]; then
		die "KERNEL_SRC=$src (version $ver) lacks drivers/cpuidle/governors or tools/testing/kunit"
	fi
	major=${ver%%.*}
	minor=${ver#*.}
	minor=${minor%%.*}
	[ $((major * 256 + minor)) -ge "$TEO_MIN_BASE" ] ||
		die "KERNEL_SRC=$src is Linux $ver; the overlay needs 6.12 or later"
	if [ -e "$src/.config" ] || [ -d "$src/include/config" ]; then
		die "KERNEL_SRC=$src has build artifacts (.config); kunit.py needs a clean tree: point at a clean checkout (this tool never cleans yours)"
	fi
}

# Name of the cache slot for a base tree path.
tree_key() {
	local src=$1 ver
	ver=$(kernel_version "$src")
	printf 'linux-%s-%s\n' "$ver" "$(printf '%s' "$src" | sha1sum | cut -c1-8)"
}
