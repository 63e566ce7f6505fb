#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# The replay lab (tools/idle-replay): build it against the base tree and run
# the report, the deterministic checks, or the trace converter.
set -eu
. "$(dirname "$0")/lib.sh"

LAB=$TEO_REPO/tools/idle-replay
FUZZ_DECISIONS=1000000
FUZZ_SEED=1
# Governors whose contract violations fail the check (the baselines' are
# findings to report, not failures of ours).
MUST_PASS=oracle,teo

usage() {
	cat <<EOF
usage: $teo_prog COMMAND [options]

Commands:
  report [--out DIR] [--gov LABEL=PATH]... [--scenario NAME|FAMILY]
        Replay every scenario through the oracle, our teo, 6.12's teo and
        menu (plus any governor source given with --gov) and write
        report.md, results.tsv and SVG plots to DIR (default
        \$TEO_CACHE/replay/report).  Prints the report.
  check
        The deterministic gates: differential check (our teo against
        6.12's, every decision of every scenario on every platform),
        regression gate, randomized contract check under ASan/UBSan
        ($FUZZ_DECISIONS decisions per governor), bad-input and converter
        tests.  Exits non-zero on any failure.
  convert [--hz N] INPUT OUTPUT
        Turn 'perf script' or 'trace-cmd report' text (power:cpu_idle,
        irq, timer and sched_switch events) into a trace file; OUTPUT '-'
        writes to standard output.
  diff OLD.c NEW.c
        Compile two governor sources (each with the headers next to it, so
        a kernel tree's teo.c builds with that tree's gov.h) and compare
        their state and tick decisions at every step of every scenario on
        every platform and on random tables.  Prints the counts on one
        line: "differential: R runs, D decisions, N divergent" (N counts
        the runs and random cases that diverge anywhere; plus the
        first divergences) and exits 0 whether or not they diverge; 1 on
        an error.  Used to check "no functional change" claims.
  run ARGS...   pass ARGS to the tool's run command (see 'list')
  list          governors, platforms and scenarios

Options:
  --help        show this text

Environment: KERNEL_SRC (base tree; default: scripts/prepare-tree.sh's),
TEO_CACHE (default <repo>/.cache).  The tool's own help: tools/idle-replay/README.
EOF
}

# Path of the pristine base tree whose teo.c and menu.c are the baselines.
# The lab only reads it, so once Debian's tree is unpacked it does not go
# through prepare-tree.sh (whose lock a kernel build may hold for long).
base_tree() {
	local slot debian=$TEO_CACHE/base/$TEO_DEBIAN_PKG
	if [ -n "${KERNEL_SRC:-}" ]; then
		(cd "$KERNEL_SRC" 2>/dev/null && pwd) ||
			die "KERNEL_SRC=$KERNEL_SRC does not exist"
	elif [ -f "$debian/.teo-unpacked" ]; then
		printf '%s\n' "$debian"
	else
		slot=$("$TEO_REPO/scripts/prepare-tree.sh") ||
			die "scripts/prepare-tree.sh failed"
		cat "$slot/base"
	fi
}

# The lab's results do not depend on the machine's load, but its builds and
# runs would disturb a benchmark or slow a kernel build: take the build lock
# for the rest of the command, once the base tree is known (prepare-tree.sh
# may need the lock itself).
hold_machine() {
	base_tree >/dev/null
	build_lock
}

# Build the lab (targets: fast, asan) with extra governors $1; print the
# build folder.
build() {
	local extra=$1 base key out target
	shift
	need_cmd make gcc sha1sum
	base=$(base_tree)
	for target in teo.c menu.c gov.h; do
		[ -f "$base/drivers/cpuidle/governors/$target" ] ||
			die "$base has no drivers/cpuidle/governors/$target"
	done
	key=$(printf '%s\n%s\n' "$base" "$extra" | sha1sum | cut -c1-12)
	out=$TEO_CACHE/replay/build-$key
	mkdir -p "$out"
	for target in "$@"; do
		make -s -C "$LAB" BASE="$base" O="$out" GOV_EXTRA="$extra" \
			"$out/$target" >&2 || die "building the replay lab failed"
	done
	printf '%s\n' "$out"
}

# --- report -----------------------------------------------------------------

cmd_report() {
	local out=$TEO_CACHE/replay/report extra="" args=() bin tmp label
	while [ $# -gt 0 ]; do
		case $1 in
		--out) [ $# -ge 2 ] || die "--out needs a folder"; out=$2; shift ;;
		--gov)
			[ $# -ge 2 ] || die "--gov needs LABEL=PATH"
			case $2 in
			*=*) ;;
			*) die "--gov wants LABEL=PATH, got '$2'" ;;
			esac
			label=${2%%=*}
			case $label in
			oracle|teo|teo-6.12|menu-6.12|*[!A-Za-z0-9._-]*|"")
				die "--gov label '$label' is taken or not a plain name" ;;
			esac
			[ -f "${2#*=}" ] || die "--gov $2: no such file"
			extra="$extra $label=$(cd "$(dirname "${2#*=}")" && pwd)/$(basename "${2#*=}")"
			shift ;;
		--scenario) [ $# -ge 2 ] || die "--scenario needs a name"; args+=(--scenario "$2"); shift ;;
		--help|-h) usage; exit 0 ;;
		*) die "report: unknown argument '$1'" ;;
		esac
		shift
	done
	need_cmd gnuplot
	hold_machine
	bin=$(build "${extra# }" idle-replay)/idle-replay
	mkdir -p "$(dirname "$out")"
	tmp=$(mktemp -d "$out.tmp.XXXXXX")
	# Write everything aside and swap it in, so a failure leaves no report.
	if ! "$bin" report --out "$tmp" "${args[@]}" >&2 ||
	   ! (cd "$tmp" && gnuplot plots.gp); then
		rm -rf "$tmp"
		die "the report failed; nothing was written"
	fi
	rm -rf "$out"
	mv "$tmp" "$out"
	cat "$out/report.md"
	note "report: $out/report.md (plots: $out/*.svg, data: $out/results.tsv)"
}

# --- check ------------------------------------------------------------------

passed=0
failed=0

result() {
	local ok=$1
	shift
	if [ "$ok" = 0 ]; then
		passed=$((passed + 1))
		printf 'PASS %s\n' "$*"
	else
		failed=$((failed + 1))
		printf 'FAIL %s\n' "$*"
	fi
}

check_differential() {
	local bin=$1 log=$2 rc=0
	"$bin" check >"$log" 2>&1 || rc=$?
	grep -E '^(DIVERGENCE|GATE)' "$log" | head -20 || true
	grep -E '^(differential|regression gate|speed)' "$log" || true
	result "$rc" "differential check and regression gate (log: $log)"
}

# UBSan reports name the source file; ours and the lab must have none.
sanitizer_findings() {
	local log=$1
	grep -E 'runtime error|ERROR: AddressSanitizer|ERROR: LeakSanitizer' "$log" |
		sed 's/^/    /' | head -10 || true
}

own_sanitizer_errors() {
	local log=$1
	grep -E 'runtime error' "$log" | grep -E "($TEO_REPO/drivers|$LAB)" || true
}

check_contract() {
	local asan=$1 dir=$2 gov log rc
	for gov in oracle teo teo-6.12 menu-6.12; do
		log=$dir/fuzz-$gov.log
		rc=0
		ASAN_OPTIONS=exitcode=86:detect_leaks=1 \
		UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=0 \
			"$asan" fuzz --gov "$gov" --decisions "$FUZZ_DECISIONS" \
			--seed "$FUZZ_SEED" --must-pass "$MUST_PASS" >"$log" 2>&1 || rc=$?
		sed -n '2,$p' "$log" | grep -vE '^(    |SUMMARY|=)' | sed 's/^/  /' | head -24
		sanitizer_findings "$log"
		case $MUST_PASS, in
		*"$gov",*)
			[ -z "$(own_sanitizer_errors "$log")" ] || rc=1
			result "$rc" "contract check of $gov under ASan/UBSan (log: $log)" ;;
		*)
			[ "$rc" = 0 ] || note "baseline $gov: exit $rc, findings above (not a failure of ours)"
			result 0 "contract check of $gov ran under ASan/UBSan; violations above are findings (log: $log)" ;;
		esac
	done
}

# Expect $bin validate FILE to fail with "FILE:LINE: reason" from the file's
# "# expect: LINE: reason" line.
check_bad_file() {
	local bin=$1 file=$2 want err rc=0
	want=$(sed -n 's/^# expect: //p' "$file" | head -1)
	err=$("$bin" validate "$file" 2>&1 >/dev/null) || rc=$?
	if [ "$rc" = 1 ] && [[ $err == *"$file:$want"* ]]; then
		result 0 "bad input rejected: $file:$want"
	else
		result 1 "bad input $file: wanted '$file:$want', got exit $rc: $err"
	fi
}

check_converter() {
	local bin=$1 dir=$2 in name rc
	for in in "$LAB"/tests/data/*.txt; do
		name=$(basename "$in" .txt)
		rc=0
		"$bin" convert "$in" "$dir/$name.trace" 2>/dev/null || rc=$?
		[ "$rc" = 0 ] && diff -u "$LAB/tests/data/$name.trace" "$dir/$name.trace" >&2 || rc=1
		[ "$rc" = 0 ] && "$bin" run --trace "$dir/$name.trace" --platform rk3399 >/dev/null || rc=1
		result "$rc" "converter: $name.txt gives tests/data/$name.trace, which replays"
	done
	in=$LAB/tests/bad/perf-bad-cpu.txt
	rc=0
	if "$bin" convert "$in" "$dir/bad.trace" 2>"$dir/bad.err" ||
	   [ -e "$dir/bad.trace" ] || [ -e "$dir/bad.trace.tmp" ] ||
	   ! grep -q "perf-bad-cpu.txt:2: cpu 999 out of range" "$dir/bad.err"; then
		rc=1
	fi
	result "$rc" "converter: bad input named with its line, nothing written"
}

check_missing_api() {
	local out=$1 err rc=0
	err=$(make -s -C "$LAB" BASE="$(base_tree)" O="$out" probe \
		SRC="$LAB/tests/bad/needs-missing-api.c" LABEL=probe 2>&1) && rc=1
	[[ $err == *"needs kernel API the shim lacks: function tick_nohz_get_next_hrtimer()"* ]] || rc=1
	result "$rc" "a governor needing an API the shim lacks fails to build, naming it"
}

cmd_check() {
	local out dir f
	[ $# -eq 0 ] || { [ "$1" = --help ] && { usage; exit 0; }; die "check takes no arguments"; }
	hold_machine
	out=$(build "" idle-replay idle-replay-asan)
	dir=$TEO_CACHE/replay/check
	rm -rf "$dir"
	mkdir -p "$dir"
	check_differential "$out/idle-replay" "$dir/differential.log"
	check_contract "$out/idle-replay-asan" "$dir"
	for f in "$LAB"/tests/bad/*.plat "$LAB"/tests/bad/*.trace; do
		check_bad_file "$out/idle-replay" "$f"
	done
	check_converter "$out/idle-replay" "$dir"
	check_missing_api "$out"
	printf '%s passed, %s failed\n' "$passed" "$failed"
	[ "$failed" = 0 ]
}

# --- diff -------------------------------------------------------------------

# Absolute path of an existing file $1, or die naming the option $2.
abs_file() {
	[ -f "$1" ] || die "$2: no such file: $1"
	printf '%s/%s\n' "$(cd "$(dirname "$1")" && pwd)" "$(basename "$1")"
}

cmd_diff() {
	local old new bin log counts
	[ "${1:-}" != --help ] || { usage; exit 0; }
	[ $# -eq 2 ] || die "diff needs OLD.c and NEW.c"
	old=$(abs_file "$1" "diff OLD")
	new=$(abs_file "$2" "diff NEW")
	case "$old$new" in
	*[[:space:]=]*) die "diff: paths must not contain spaces or '='" ;;
	esac
	bin=$(build "old=$old new=$new" idle-replay)/idle-replay
	log=$(mktemp)
	# Exit 1 also means "diverged or failed the gate": judge by the output.
	"$bin" check --diff old,new >"$log" 2>&1 || true
	grep -E '^DIVERGENCE' "$log" | head -5 || true
	counts=$(awk '
		/^differential old vs new: / { runs = $5; dec = $10; div += $13; n++ }
		/^differential old vs new on random tables: / { div += $(NF - 1); n++ }
		END { if (n == 2) printf "differential: %d runs, %d decisions, %d divergent\n", runs, dec, div }' "$log")
	if [ -z "$counts" ]; then
		sed 's/^/    /' "$log" | head -20 >&2
		rm -f "$log"
		die "the differential run failed"
	fi
	rm -f "$log"
	printf '%s\n' "$counts"
}

# --- convert, run, list -----------------------------------------------------

cmd_convert() {
	local hz=250 bin tmp
	while [ $# -gt 0 ]; do
		case $1 in
		--hz) [ $# -ge 2 ] || die "--hz needs a value"; hz=$2; shift ;;
		--help|-h) usage; exit 0 ;;
		*) break ;;
		esac
		shift
	done
	[ $# -eq 2 ] || die "convert needs INPUT and OUTPUT"
	bin=$(build "" idle-replay)/idle-replay
	if [ "$2" != - ]; then
		"$bin" convert --hz "$hz" "$1" "$2"
		return
	fi
	tmp=$(mktemp -d)
	"$bin" convert --hz "$hz" "$1" "$tmp/out.trace" || { rm -rf "$tmp"; exit 1; }
	cat "$tmp/out.trace"
	rm -rf "$tmp"
}

main() {
	local cmd
	[ $# -gt 0 ] || { usage >&2; exit 2; }
	cmd=$1
	shift
	case $cmd in
	report) cmd_report "$@" ;;
	check) cmd_check "$@" ;;
	diff) cmd_diff "$@" ;;
	convert) cmd_convert "$@" ;;
	run|list) "$(build "" idle-replay)/idle-replay" "$cmd" "$@" ;;
	--help|-h|help) usage ;;
	*) usage >&2; die "unknown command '$cmd'" ;;
	esac
}

main "$@"
