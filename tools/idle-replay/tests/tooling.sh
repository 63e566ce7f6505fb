# SPDX-License-Identifier: GPL-2.0
# The negative tests of the replay lab's gates (tests/gates.sh) are bash;
# the rest of 'scripts/teo replay check' is Python
# (scripts/teotool/labcheck.py), which runs this file as
#
#   bash tests/tooling.sh BUILD DIR [--data FOLDER]...
#
# BUILD is the check's build folder, DIR its output folder, the rest the
# lab's corpus options.  The environment names the paths, all from
# scripts/teotool/paths.py: TEO_REPO, TEO_LAB (tools/idle-replay),
# TEO_LAB_GATES (its gates.conf), TEO_LAB_KUNIT (our KUnit suite),
# TEO_LAB_BASE and TEO_LAB_MAINLINE (the trees; empty: no mainline) and
# TEO_RESULTS.  This gives gates.sh what it takes and records every result
# as "STATUS<TAB>TEXT" in the file TEO_RESULTS names, for the check to
# count (0: passed).
# shellcheck shell=bash
# shellcheck disable=SC2034 # LAB, GATES, KUNIT_SRC, base, ...: for gates.sh
set -eu

LAB=$TEO_LAB
GATES=$TEO_LAB_GATES
KUNIT_SRC=$TEO_LAB_KUNIT
base=$TEO_LAB_BASE
mainline=$TEO_LAB_MAINLINE
build=$1
dir=$2
shift 2
data_args=("$@")

# $1: 0 if the test passed; the rest says what it showed.
result() {
	local ok=$1
	shift
	if [ "$ok" = 0 ]; then
		printf 'PASS %s\n' "$*"
	else
		printf 'FAIL %s\n' "$*"
	fi
	printf '%s\t%s\n' "$ok" "$*" >> "$TEO_RESULTS"
}

# shellcheck source=tools/idle-replay/tests/gates.sh
. "$LAB/tests/gates.sh"

gate_tests "$build" "$dir"
trace_gate_tests "$build"
