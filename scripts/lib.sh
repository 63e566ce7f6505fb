# SPDX-License-Identifier: GPL-2.0
# Shared helpers of the bash scripts that remain (the VM, the benchmark,
# the series, the replay lab's driver).  Source it from bash scripts:
#   . "$(dirname "$0")/lib.sh"
# The rules themselves (names and paths, the lock's record, input checks)
# live in the Python package scripts/teotool; scripts/teotool/shell.py is
# how this file asks for them.
# shellcheck shell=bash
# shellcheck disable=SC2034 # the variables are for the sourcing scripts

TEO_REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)

# Run Debian's tools only, not whatever a user installed by hand (pyenv
# shims, /usr/local, ~/.cargo): see scripts/teotool/paths.py.
export PATH=/usr/sbin:/usr/bin:/sbin:/bin

teo_prog=$(basename "$0")
# The command line, as the lock file records it.
teo_cmdline="$teo_prog $*"

teo_py() {
	/usr/bin/python3 "$TEO_REPO/scripts/teotool/shell.py" "$teo_prog" "$@"
}

# TEO_CACHE, TEO_LOCK, TEO_DEBIAN_PKG, TEO_DEBIAN_TARBALL, TEO_MIN_BASE,
# TEO_OVERLAY_PATHS (scripts/teotool/paths.py).
teo_env=$(teo_py env) || {
	echo "$teo_prog: error: scripts/teotool/shell.py failed" >&2
	exit 1
}
eval "$teo_env"
# ccache (its own folder, outside the repository) hashes paths under the
# cache relative to the build folder, so the private tree and the series
# check tree, laid out alike, share compile results.
export CCACHE_BASEDIR="$TEO_CACHE" CCACHE_NOHASHDIR=1

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

# Die naming the Debian package of each missing command (deps.list).
need_cmd() {
	local cmd
	for cmd in "$@"; do
		command -v "$cmd" >/dev/null 2>&1 || teo_py need-cmd "$cmd" || exit
	done
}

# Die unless $2 MiB are free under folder $1 (created if missing).
need_space() {
	teo_py need-space "$1" "$2" || exit
}

# Die unless folder $1 exists and is writable, or can be created; $2 names
# it in the message.  Creates nothing.
need_writable_dir() {
	teo_py writable-dir "$1" "${2:-$1}" || exit
}

# Check a custom idle state list "[poll,]LAT/RES[,LAT/RES...]" (us) as the
# cpuidle-emu module will (scripts/teotool/states.py); a usage error names
# the option $2 (default --states).
check_states_list() {
	teo_py states "$1" "${2:-"--states"}" || exit
}

# Print "VERSION.PATCHLEVEL.SUBLEVEL" of the kernel tree $1, or fail.
kernel_version() {
	teo_py kernel-version "$1"
}

# Print a folder to put first in PATH for kunit.py: its qemu-system-x86_64
# drops the "-accel kvm/hvf" that kunit.py of 6.15+ asks for first
# (scripts/teotool/kunit.py says why).
kunit_qemu_dir() {
	teo_py kunit-qemu-dir || exit
}

# --- cleanup of everything a script started --------------------------------
#
# Long-running children (kernel builds, QEMU, workloads) run in their own
# process group (spawn_group, run_group), so that a signal to this script
# stops all of them, grandchildren included; the build lock, temporary
# files and registered hooks are released on every exit.  Only the shell
# that registered them cleans up: a subshell starts its own lists.  (The
# Python commands do the same with context managers: teotool/process.py.)

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

# Stop process group $1 (TERM, then KILL after 10 s) and reap its leader;
# a child that has no group yet (before its setsid) by its pid.
stop_group() {
	local pid=$1 i
	kill -TERM -- "-$pid" 2>/dev/null || kill -TERM "$pid" 2>/dev/null || return 0
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

# Run the long step "$3..." in its own process group: say what runs ($1)
# and how long it usually takes ($2).  On a terminal the command's own
# output shows progress; otherwise a heartbeat line comes every minute.
run_step() {
	local what=$1 expect=$2 status=0 t0=$SECONDS
	shift 2
	note "$what (expected: $expect)"
	if [ ! -t 2 ]; then
		# shellcheck disable=SC2016 # expanded by the child shell
		spawn bash -c 't0=$SECONDS; while sleep 60; do
			printf "%s: ... still %s: %d min so far (expected: %s)\n" \
				"$0" "$1" $(((SECONDS - t0) / 60)) "$2" >&2; done' \
			"$teo_prog" "$what" "$expect"
		teo_heartbeat=$teo_last
	fi
	run_group "$@" || status=$?
	if [ -n "$teo_heartbeat" ]; then
		kill "$teo_heartbeat" 2>/dev/null || true
		wait "$teo_heartbeat" 2>/dev/null || true
		forget_child "$teo_heartbeat"
		teo_heartbeat=
	fi
	[ "$status" -ne 0 ] || note "done in $((SECONDS - t0)) s: $what"
	return "$status"
}

# --- the machine-wide build lock -------------------------------------------
#
# flock(2) on $TEO_LOCK, held on file descriptor 9 by the shell that took
# it and inherited by its children (a flock belongs to the open file, so
# the lock the Python helper takes on descriptor 9 stays with this shell).
# The rules -- who may open it how, the waiting message every minute, the
# holder's record -- are those of scripts/teotool/process.py.  It is not
# recursive: never call a script that takes it while holding it.

teo_locked=0

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
# waiting, say so and for whom.
build_lock() {
	local mode t0=$SECONDS status waited=()
	need_cmd flock
	teo_install_traps
	mode=$(teo_py lock-mode) || exit
	if [ "$mode" = r ]; then
		exec 9<"$TEO_LOCK"
	else
		exec 9>>"$TEO_LOCK"
	fi
	# The helper gives up after a minute (status 3) so that a signal to
	# this shell is never held up for longer; then it is asked again.
	while :; do
		status=0
		teo_py lock-wait 9 "$$" "$teo_cmdline" "${waited[@]}" || status=$?
		[ "$status" = 3 ] || break
		waited=("$((SECONDS - t0))")
	done
	[ "$status" = 0 ] || exit "$status"
	teo_locked=1
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
