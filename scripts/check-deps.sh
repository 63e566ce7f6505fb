#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Check that the dependency list covers every command the tooling runs.
set -eu
. "$(dirname "$0")/lib.sh"

# TEO_DEPS_LIST: another list, for the self-test.
DEPS_LIST=${TEO_DEPS_LIST:-$TEO_REPO/scripts/deps.list}

usage() {
	cat <<EOF
usage: $teo_prog lint
       $teo_prog audit DIR
       $teo_prog selftest
       $teo_prog --help

lint    Static checks of scripts/deps.list: every line well formed, no
        command listed twice, every package known to apt, every command
        that a script asks for with need_cmd listed (so that its error can
        name the package).

audit   Read the execve() logs that 'scripts/teo check' records with strace
        (DIR/*.strace, one per step; DIR/*.execs, plain lists of program
        paths, e.g. from the test VM) and check that every program run
        outside this repository, its cache and the base tree comes from a
        Debian package that deps.list names, or from a package those
        depend on, or from the required core of every Debian system
        (Priority: required).  The answer does not depend on what this
        machine has installed beyond that: a program installed by hand, or
        from a package nobody listed, fails the audit even though the run
        that used it passed.

selftest
        The audit must catch the failure that once broke CI on a new
        machine: with rsync left out of a copy of deps.list, a run that
        executed /usr/bin/rsync (the kselftest install does) fails, naming
        rsync; a program found in no package fails too; with the real list
        both pass or fail as they should.

Exit status: 0 when clean, 1 with one line per problem otherwise.
EOF
}

# Lines "PACKAGE COMMANDS" of deps.list.
deps_entries() {
	awk '!/^#/ && NF >= 2 { print $1, $2 }' "$DEPS_LIST"
}

# Commands that our scripts check for with need_cmd.
needed_commands() {
	local files
	files=$(grep -l 'need_cmd' "$TEO_REPO"/scripts/*.sh "$TEO_REPO"/scripts/teo \
		"$TEO_REPO"/tools/*/*.sh 2>/dev/null || true)
	[ -n "$files" ] || return 0
	# shellcheck disable=SC2086 # one word per file
	sed -n 's/^\(.*)\)\{0,1\}[[:space:]]*need_cmd \([^;|&)#]*\).*/\2/p' $files |
		tr -s ' \t' '\n' |
		grep -E '^[A-Za-z0-9_.+-]+$' | sort -u
}

cmd_lint() {
	local bad=0 pkg cmds cmd seen=" " apt_known
	need_cmd apt-cache
	while read -r pkg cmds; do
		apt_known=$(apt-cache show --no-all-versions "$pkg" 2>/dev/null | grep -c '^Package:' || true)
		if [ "$apt_known" = 0 ]; then
			printf '%s: package %s is unknown to apt (run apt-get update?)\n' "$DEPS_LIST" "$pkg"
			bad=1
		fi
		[ "$cmds" != - ] || continue
		for cmd in ${cmds//,/ }; do
			case $seen in
			*" $cmd "*)
				printf '%s: command %s is listed twice\n' "$DEPS_LIST" "$cmd"
				bad=1 ;;
			esac
			seen="$seen$cmd "
		done
	done < <(deps_entries)
	for cmd in $(needed_commands); do
		case $seen in
		*" $cmd "*) ;;
		*)
			printf 'need_cmd %s: the command is not in %s\n' "$cmd" "$DEPS_LIST"
			bad=1 ;;
		esac
	done
	[ "$bad" = 0 ] || return 1
	printf 'deps.list: %s packages, every need_cmd command listed\n' \
		"$(deps_entries | wc -l)"
}

# Program paths that the logs in $1 show as executed, one per line as
# "STEP PATH".  strace runs with -z, so only successful execve() calls are
# there.
executed_programs() {
	local dir=$1 log step
	for log in "$dir"/*.strace; do
		[ -e "$log" ] || continue
		step=$(basename "$log" .strace)
		sed -n 's/^[0-9]* *execve("\([^"]*\)".*/\1/p' "$log" |
			sort -u | sed "s|^|$step |"
	done
	for log in "$dir"/*.execs; do
		[ -e "$log" ] || continue
		step=$(basename "$log" .execs)
		grep '^/' "$log" | sort -u | sed "s|^|$step |"
	done
}

# Is $1 one of ours (built or checked out by the tooling)?  A relative
# path is a program that a build runs from its own tree (the kernel's
# scripts/basic/fixdep, say): nothing on the system is run that way.
is_ours() {
	local path=$1 dir
	case $path in
	/*) ;;
	*) return 0 ;;
	esac
	for dir in "$TEO_REPO" "$TEO_CACHE" "${KERNEL_SRC:-/nonexistent}" /tmp /proc; do
		case $path in
		"$dir"/*) return 0 ;;
		esac
	done
	return 1
}

# Programs that a listed tool runs only when the machine happens to have
# them, and that nothing of ours needs: "PATH REASON" lines.  Keep this
# short; everything else a step runs must be covered by deps.list.
OPTIONAL_PROGRAMS="/usr/bin/gpgconf apt-key, under apt's signature checks, stops gpg agents with it when it is installed"

# Print the reason if $1 is an optional program, else fail.
optional_reason() {
	local path reason
	while read -r path reason; do
		[ "$1" != "$path" ] || { printf '%s\n' "$reason"; return 0; }
	done <<EOF
$OPTIONAL_PROGRAMS
EOF
	return 1
}

# Read "STEP PATH" lines and print "STEP PATH PACKAGE" for each, PACKAGE
# "-" when no package owns the path.  The merged-/usr twin of a path and the
# target of an alternatives link are tried too; dpkg-query runs once.
with_owners() {
	local lines cand
	lines=$(cat)
	cand=$(printf '%s\n' "$lines" | while read -r _ path; do
		printf '%s\n%s\n%s\n' "$path" "/usr$path" "${path#/usr}"
		readlink -f "$path" 2>/dev/null || true
	done | grep '^/' | sort -u)
	# shellcheck disable=SC2086 # one word per path; none has blanks
	# "diversion by PKG from: PATH" lines name no owner.
	dpkg-query -S $cand 2>/dev/null |
		awk -F': ' 'NF == 2 && $1 !~ /^diversion by / {
			split($1, p, /[:,]/); print $2, p[1] }' > "$audit_tmp/owners"
	printf '%s\n' "$lines" | while read -r step path; do
		printf '%s %s %s\n' "$step" "$path" "$(awk -v a="$path" -v b="/usr$path" \
			-v c="${path#/usr}" -v d="$(readlink -f "$path" 2>/dev/null)" '
			$1 == a || $1 == b || $1 == c || $1 == d { print $2; found = 1; exit }
			END { if (!found) print "-" }' "$audit_tmp/owners")"
	done
}

# Packages apt would install for deps.list (Depends and Pre-Depends,
# recursively, every alternative counted), one per line.
covered_packages() {
	# shellcheck disable=SC2046 # one word per package
	apt-cache depends --recurse --no-recommends --no-suggests --no-conflicts \
		--no-breaks --no-replaces --no-enhances \
		$(awk '!/^#/ && NF >= 2 { print $1 }' "$DEPS_LIST") 2>/dev/null |
		sed -n 's/^ *\(|\)\{0,1\}\(Pre\)\{0,1\}Depends: //p; /^[^ ]/p' |
		tr -d '<>|' | awk '{ print $1 }' | sort -u
}

is_required() {
	apt-cache show --no-all-versions "$1" 2>/dev/null |
		grep -qE '^(Priority: required|Essential: yes)$'
}

audit_tmp=

cmd_audit() {
	local dir=$1 step path pkg reason bad=0 n=0
	[ -d "$dir" ] || die "audit: $dir is not a folder"
	need_cmd apt-cache dpkg-query
	audit_tmp=$(mktemp -d)
	trap 'rm -rf "$audit_tmp"' EXIT
	covered_packages > "$audit_tmp/covered"
	[ -s "$audit_tmp/covered" ] ||
		die "audit: apt-cache knows none of the packages of $DEPS_LIST (run apt-get update)"
	executed_programs "$dir" > "$audit_tmp/all"
	[ -s "$audit_tmp/all" ] || die "audit: no executed programs recorded in $dir"
	# One line per distinct program outside ours, with the first step that
	# ran it.
	sort -k2,2 -u "$audit_tmp/all" | while read -r step path; do
		is_ours "$path" || printf '%s %s\n' "$step" "$path"
	done | with_owners > "$audit_tmp/programs"
	while read -r step path pkg; do
		n=$((n + 1))
		if reason=$(optional_reason "$path"); then
			printf 'step %s ran %s: optional (%s)\n' "$step" "$path" "$reason"
		elif [ "$pkg" = - ]; then
			printf 'step %s ran %s, which no Debian package provides (installed by hand?)\n' \
				"$step" "$path"
			bad=1
		elif ! grep -qxF "$pkg" "$audit_tmp/covered" && ! is_required "$pkg"; then
			printf 'step %s ran %s from package %s, which %s does not list (nor a package it lists depends on it)\n' \
				"$step" "$path" "$pkg" "scripts/deps.list"
			bad=1
		fi
	done < "$audit_tmp/programs"
	[ "$bad" = 0 ] || return 1
	printf 'exec audit: %d distinct programs outside the repository, all from listed or required packages\n' "$n"
}

# Expect the audit of programs $2 (one per line) with deps list $1 to exit
# $3 and to print a line matching $4.  With $5 = strace the programs are
# recorded as strace would, relative paths included.
expect_audit() {
	local list=$1 programs=$2 want=$3 pattern=$4 dir out rc=0
	dir=$(mktemp -d)
	if [ "${5:-}" = strace ]; then
		printf '%s\n' "$programs" |
			sed 's/.*/4242  execve("&", ["x"], 0x7ffd) = 0/' > "$dir/selftest.strace"
	else
		printf '%s\n' "$programs" > "$dir/selftest.execs"
	fi
	out=$(TEO_DEPS_LIST=$list "$0" audit "$dir" 2>&1) || rc=$?
	rm -rf "$dir"
	if [ "$rc" != "$want" ] || ! printf '%s\n' "$out" | grep -q -- "$pattern"; then
		printf 'selftest: audit of %s with %s: wanted exit %s and "%s", got exit %s:\n%s\n' \
			"$(printf '%s' "$programs" | tr '\n' ' ')" "$list" "$want" "$pattern" "$rc" "$out"
		return 1
	fi
}

cmd_selftest() {
	local rsync no_rsync bad=0
	rsync=$(command -v rsync) ||
		die "selftest: rsync is not installed; run scripts/deps.sh first"
	no_rsync=$(mktemp)
	grep -v '^rsync[[:space:]]' "$DEPS_LIST" > "$no_rsync"
	expect_audit "$no_rsync" "$rsync" 1 "from package rsync, which" || bad=1
	expect_audit "$DEPS_LIST" "$rsync" 0 "exec audit: 1 distinct" || bad=1
	expect_audit "$DEPS_LIST" "/opt/by-hand/tool" 1 "no Debian package provides" || bad=1
	# dpkg reports /bin/sh as diverted; its owner is dash.
	expect_audit "$DEPS_LIST" "/bin/sh" 0 "exec audit: 1 distinct" || bad=1
	expect_audit "$DEPS_LIST" "/usr/bin/gpgconf" 0 "optional (apt-key" || bad=1
	# A build's own program, by a relative path, next to a system one.
	expect_audit "$DEPS_LIST" "$rsync
scripts/basic/fixdep
./tools/objtool/objtool" 0 "exec audit: 1 distinct" strace || bad=1
	rm -f "$no_rsync"
	[ "$bad" = 0 ] || return 1
	printf 'selftest: the audit catches an unlisted package (rsync) and a hand-installed program; diversions, optional programs and a build'"'"'s own programs pass\n'
}

[ $# -gt 0 ] || { usage >&2; die "no command given"; }
case $1 in
lint) [ $# -eq 1 ] || die "lint takes no arguments"; cmd_lint ;;
audit) [ $# -eq 2 ] || die "audit needs DIR"; cmd_audit "$2" ;;
selftest) [ $# -eq 1 ] || die "selftest takes no arguments"; cmd_selftest ;;
--help|-h) usage ;;
*) usage >&2; die "unknown command '$1'" ;;
esac
