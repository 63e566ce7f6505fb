#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Tests of tools/idle-replay/extract-tables.py on a small fake kernel tree.
set -eu

here=$(cd "$(dirname "$0")" && pwd)
tool=$here/../../extract-tables.py
tree=$here/tree
expected=$here/expected
prog=${0##*/}

usage() {
	cat <<EOF
usage: $prog [--update] [--help]

Run tools/idle-replay/extract-tables.py on the fake kernel tree in
tests/extract/tree and compare its output with tests/extract/expected;
then check that bad input (a missing or wrong KERNEL_SRC, an OUTDIR that
cannot be written or must not be replaced, no cpp, too many broken device
trees, a driver the extractor cannot read) fails with one clear line and
writes nothing.  With dtc installed, also runs the extractor's --check-dtc
self-test on the fake tree.

  --update   rewrite tests/extract/expected from the current extractor
             (review the diff before committing it)

Needs python3 and cpp.  Exit status 0 when every check passes.
EOF
}

update=
case "${1:-}" in
-h | --help)
	usage
	exit 0
	;;
--update) update=1 ;;
"") ;;
*)
	usage >&2
	exit 2
	;;
esac

# The interpreter itself (not a wrapper that needs PATH: see "no cpp").
python=$(python3 -c 'import sys; print(sys.executable)') || {
	echo "$prog: python3 not found" >&2
	exit 1
}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
failures=0

pass() { echo "ok   $*"; }
fail() {
	echo "FAIL $*"
	failures=$((failures + 1))
}

# The fake tree has one broken board out of seven: let it be skipped.
extract() {
	"$python" "$tool" -q -j 1 --max-skipped 20 "$@"
}

if [ -n "$update" ]; then
	rm -rf "$tmp/new"
	extract "$tree" "$tmp/new" 2>/dev/null
	rm -rf "$expected"
	mkdir "$expected"
	cp "$tmp/new"/* "$expected"/
	echo "$prog: rewrote $expected; review it with git diff"
	exit 0
fi

# --- the fake tree gives exactly the expected files
if extract "$tree" "$tmp/out" 2>"$tmp/err"; then
	if diff -ru "$expected" "$tmp/out" >"$tmp/diff"; then
		pass "fake tree: output matches tests/extract/expected"
	else
		fail "fake tree: output differs from tests/extract/expected:"
		cat "$tmp/diff"
	fi
	if grep -q "break a lab rule (see INDEX): dt-acme-odd-little intel-brk" "$tmp/err" &&
		grep -q "skipped 1 of 7 device tree(s)" "$tmp/err"; then
		pass "fake tree: warns about the rule-breaking tables and the skipped board"
	else
		fail "fake tree: expected warnings missing:"
		cat "$tmp/err"
	fi
else
	fail "fake tree: the extractor failed:"
	cat "$tmp/err"
fi

# --- same output with parallel workers, and a second run replaces the first
if extract -j 2 "$tree" "$tmp/out" 2>/dev/null && diff -r "$expected" "$tmp/out" >/dev/null; then
	pass "a second run with -j 2 replaces OUTDIR with the same output"
else
	fail "a second run with -j 2 does not give the same output"
fi
leftover=$(find "$tmp" -maxdepth 1 -name '.out.*' | head -1)
if [ -z "$leftover" ]; then
	pass "no temporary directory left beside OUTDIR"
else
	fail "temporary directory left: $leftover"
fi

# --- the parser against dtc
if command -v dtc >/dev/null; then
	if extract --check-dtc "$tree" "$tmp/dtc" >/dev/null 2>"$tmp/err"; then
		pass "--check-dtc: the parser and dtc give the same tables"
	else
		fail "--check-dtc:"
		cat "$tmp/err"
	fi
else
	echo "skip --check-dtc: dtc is not installed (Debian package device-tree-compiler)"
fi

# --- bad input: exit 1, one line on stderr naming the problem, nothing written
# expect_fail NAME PATTERN OUTDIR [ARG...]: run the extractor with ARGs and
# OUTDIR (and PATH=$extract_path if set); OUTDIR must not exist afterwards.
expect_fail() {
	local name=$1 pattern=$2 out=$3 status=0
	shift 3
	PATH=${extract_path:-$PATH} "$python" "$tool" -q "$@" "$out" >"$tmp/o" 2>"$tmp/e" ||
		status=$?
	if [ "$status" -ne 1 ]; then
		fail "$name: exit status $status, expected 1"
	elif [ "$(wc -l <"$tmp/e")" -ne 1 ] || ! grep -q -- "$pattern" "$tmp/e"; then
		fail "$name: expected one line matching '$pattern', got:"
		cat "$tmp/e"
	elif [ -s "$tmp/o" ]; then
		fail "$name: wrote to stdout:"
		cat "$tmp/o"
	elif [ -e "$out" ] || [ -n "$(find "$(dirname "$out")" -maxdepth 1 -name ".${out##*/}.*")" ]; then
		fail "$name: left $out or a temporary directory behind"
	else
		pass "$name: $(cat "$tmp/e")"
	fi
}

expect_fail "missing KERNEL_SRC" "KERNEL_SRC .*does not exist" "$tmp/bad" "$tmp/nonexistent"
touch "$tmp/afile"
expect_fail "KERNEL_SRC is a file" "KERNEL_SRC .*is not a directory" "$tmp/bad" "$tmp/afile"
expect_fail "not a kernel tree" "not a kernel tree: drivers/idle/intel_idle.c is missing" \
	"$tmp/bad" "$here"
expect_fail "OUTDIR under a file" "cannot create OUTDIR .*is not a directory" \
	"$tmp/afile/out" "$tree"

# An OUTDIR that holds other files is left alone.
mkdir "$tmp/mine"
echo keep >"$tmp/mine/notes.txt"
status=0
"$python" "$tool" -q "$tree" "$tmp/mine" >/dev/null 2>"$tmp/e" || status=$?
if [ "$status" -eq 1 ] && [ "$(wc -l <"$tmp/e")" -eq 1 ] &&
	grep -q "refusing to replace it" "$tmp/e" && [ "$(cat "$tmp/mine/notes.txt")" = keep ] &&
	[ "$(ls -A "$tmp/mine")" = notes.txt ]; then
	pass "foreign OUTDIR: $(cat "$tmp/e")"
else
	fail "foreign OUTDIR: status $status, $(cat "$tmp/e"), contents: $(ls -A "$tmp/mine")"
fi

if [ "$(id -u)" -ne 0 ]; then
	mkdir "$tmp/ro"
	chmod a-w "$tmp/ro"
	expect_fail "unwritable OUTDIR" "cannot create OUTDIR .*is not writable" "$tmp/ro/out" "$tree"
	chmod u+w "$tmp/ro"
else
	echo "skip unwritable OUTDIR: running as root, which may write anywhere"
fi

# No cpp on PATH: python3 only.
mkdir "$tmp/bin"
ln -s "$python" "$tmp/bin/python3"
extract_path=$tmp/bin expect_fail "no cpp" "cpp not found: install the Debian package cpp" \
	"$tmp/bad" "$tree"

# One broken board of seven is over the default limit (3 %).
expect_fail "too many broken device trees" \
	"1 of 7 device trees failed to preprocess or parse (more than 3%)" "$tmp/bad" "$tree"

# Copies of the fake tree with one file spoiled.
spoil() {
	rm -rf "$tmp/spoilt"
	cp -a "$tree" "$tmp/spoilt"
	sed -i "$2" "$tmp/spoilt/$1"
}
spoil drivers/idle/intel_idle.c '/cpuidle_poll_state_init(drv);/d'
expect_fail "intel_idle without the polling state" \
	"cannot confirm that intel_idle registers the polling state as state 0" \
	"$tmp/bad" --max-skipped 20 "$tmp/spoilt"
spoil drivers/idle/intel_idle.c 's/\.exit_latency = 0x64,/.exit_latency = C6_EXIT,/'
expect_fail "unreadable exit latency" \
	"intel_idle.c:29: cannot evaluate exit latency 'C6_EXIT' (unknown symbol C6_EXIT)" \
	"$tmp/bad" --max-skipped 20 "$tmp/spoilt"
spoil drivers/of/cpu.c 's/domain-idle-states/cluster-idle-states/'
expect_fail "a different of_get_cpu_state_node()" \
	"drivers/of/cpu.c: cannot confirm that a CPU's idle states are" \
	"$tmp/bad" --max-skipped 20 "$tmp/spoilt"

if [ "$failures" -ne 0 ]; then
	echo "$prog: $failures check(s) failed"
	exit 1
fi
echo "$prog: all checks passed"
