#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# The replay lab (tools/idle-replay): build it against the base tree and the
# newest mainline tree, and run the report, the gates, the targets, the
# strict differential, the overhead measurement or the trace converter.
set -eu
. "$(dirname "$0")/lib.sh"

LAB=$TEO_REPO/tools/idle-replay
FUZZ_DECISIONS=1000000
FUZZ_SEED=1
# Governors whose contract violations fail the check (the baselines' are
# findings to report, not failures of ours; teo-traced is ours with its
# trace events recording).
MUST_PASS=oracle,teo,teo-traced
GATES=$LAB/gates.conf
KNOWN=$LAB/known-misses
INTENDED=$LAB/intended-differences
MUTANT_DIR=$TEO_REPO/tools/teo-mutants
KUNIT_SRC=$TEO_REPO/drivers/cpuidle/governors/tests/teo_kunit.c
SCENARIO_FAMILIES="S1 S2 S3 S4 S5 S6 S7 S8 S9 P X"

usage() {
	cat <<EOF
usage: $teo_prog COMMAND [options]

Commands:
  report [--out DIR] [--gov LABEL=PATH]... [--scenario NAME|FAMILY]
        Replay every scenario on every table of the corpus through the
        oracle, our teo, the base tree's and the newest mainline tree's teo
        and menu, seed 001 as a variant of the base teo, and any governor
        source given with --gov; write report.md, results.tsv and SVG plots
        to DIR (default \$TEO_CACHE/replay/report) and print the report.
  check [--targets]
        The gates (exit 1 on a failure): the oracle gate, the targets against
        every baseline and the work target of closed loops
        (tools/idle-replay/gates.conf) with the documented misses
        (tools/idle-replay/known-misses), the intended differences from the
        base teo (tools/idle-replay/intended-differences), each with a
        mutant of tools/teo-mutants that must diverge from ours,
        the randomized contract check under ASan/UBSan ($FUZZ_DECISIONS
        decisions per governor), the trace gate (our teo.c with its trace
        calls compiled out and with them recording must decide alike
        everywhere, and the recorded events must match the decisions),
        bad-input, converter and tooling tests, and the negative tests of
        the gates and of the trace gate (events made to lie must be caught).
        --targets: the targets are a gate too.
  targets
        The targets table our teo is judged by; exit 1 if one is missed.
  diff [--counts FILE] OLD.c NEW.c [NEWER.c ...]
        Compile governor sources (each with the headers next to it, so a
        kernel tree's teo.c builds with that tree's gov.h) and compare the
        state and tick decisions of each with the next at every step of
        every scenario on every table and on random tables.  Prints the
        first divergences and, per pair, one line with the runs, decisions
        and divergent runs of the scenarios and of the random tables;
        exits 0 whether or not they diverge, 1 on an error.  Proves "no
        functional change"; a chain (a patch series) takes one build.
        --counts: write the same counts to FILE as a tab-separated table,
        one row per pair (old, new, runs, decisions, divergent,
        random_cases, random_decisions, random_divergent), for programs:
        the lines are for people.
  overhead [--rounds N]
        ns per select+reflect of each governor, side by side (informational).
  convert [--hz N] [--platform NAME|FILE] INPUT OUTPUT
        Turn 'perf script' or 'trace-cmd report' text (power:cpu_idle,
        irq, IPI, timer and sched_switch events) into a trace file; OUTPUT
        '-' writes to standard output.  --platform: the recorded machine's
        table, which says which states poll.
  leaks
        Only the leak check of 'check' (LeakSanitizer on valid validate,
        run, report and list); 'check' skips it when traced, as under the
        strace of 'scripts/teo check', which runs this step untraced.
  run ARGS...   pass ARGS to the tool's run command (see 'list'; --per-state
                adds each state's usage, time, above and below)
  list          governors, platforms and scenarios

Options:
  --help        show this text

Environment: KERNEL_SRC (base tree; default: Debian's $TEO_DEBIAN_PKG),
TEO_MAINLINE_SRC (a mainline tree, or 'none'; default: the newest Debian
ships, fetched once by scripts/fetch-source.sh --newest), TEO_CORPUS
(more folders of .plat files, ':'-separated), TEO_CACHE (default
<repo>/.cache).  The lab: tools/idle-replay/README.
EOF
}

# Usage errors: one line, exit 2, before anything is built.
usage_error() {
	printf '%s: error: %s\n' "$teo_prog" "$*" >&2
	exit 2
}

# --- trees -------------------------------------------------------------------

# Does tree $1 have what the lab reads?  Prints the reason if not.
lab_tree_problem() {
	local f
	for f in Makefile drivers/cpuidle/governors/teo.c \
		 drivers/cpuidle/governors/menu.c drivers/cpuidle/governors/gov.h; do
		[ -f "$1/$f" ] || { printf 'has no %s\n' "$f"; return 0; }
	done
	kernel_version "$1" >/dev/null || printf 'has no VERSION/PATCHLEVEL in its Makefile\n'
}

# Unpack the parts of Debian's base tarball the lab reads, without the
# kernel build lock (the lab builds no kernel): governors, idle drivers,
# the architectures (device trees, idle tables and the headers they use),
# and the few core files extract-tables.py reads.
lab_partial_base() {
	local dest=$TEO_CACHE/replay/base/$TEO_DEBIAN_PKG tmp p=$TEO_DEBIAN_PKG
	if [ ! -f "$dest/.teo-unpacked" ]; then
		[ -f "$TEO_DEBIAN_TARBALL" ] ||
			die "no base tree: set KERNEL_SRC, or install $TEO_DEBIAN_PKG (scripts/deps.sh)"
		need_cmd tar xz flock
		mkdir -p "$TEO_CACHE/replay/base"
		exec 7>>"$TEO_CACHE/replay/base/.unpack.lock"
		flock 7
		if [ ! -f "$dest/.teo-unpacked" ]; then
			note "unpacking the lab's part of $TEO_DEBIAN_TARBALL (once)"
			tmp=$(mktemp -d "$TEO_CACHE/replay/base/unpack.XXXXXX")
			tar -xJf "$TEO_DEBIAN_TARBALL" -C "$tmp" --wildcards \
				"$p/Makefile" "$p/drivers/cpuidle/*" "$p/drivers/idle/*" \
				"$p/drivers/of/cpu.c" "$p/include/linux/cpuidle.h" \
				"$p/include/uapi/linux/input-event-codes.h" \
				"$p/arch/*" "$p/include/dt-bindings/*" \
				"$p/scripts/dtc/include-prefixes/*" ||
				{ rm -rf "$tmp"; die "could not unpack $TEO_DEBIAN_TARBALL"; }
			rm -rf "$dest"
			mv "$tmp/$p" "$dest"
			rm -rf "$tmp"
			touch "$dest/.teo-unpacked"
		fi
		exec 7>&-
	fi
	printf '%s\n' "$dest"
}

# The pristine base tree whose teo.c and menu.c are baselines.
base_tree() {
	local dir problem debian=$TEO_CACHE/base/$TEO_DEBIAN_PKG
	if [ -n "${KERNEL_SRC:-}" ]; then
		[ -d "$KERNEL_SRC" ] || die "KERNEL_SRC=$KERNEL_SRC is not a folder"
		dir=$(cd "$KERNEL_SRC" && pwd)
	elif [ -f "$debian/.teo-unpacked" ]; then
		dir=$debian
	else
		dir=$(lab_partial_base) || exit 1
	fi
	problem=$(lab_tree_problem "$dir")
	[ -z "$problem" ] || die "base tree $dir $problem"
	printf '%s\n' "$dir"
}

# The newest mainline tree: fetched once ($1 = fetch) or only if cached.
mainline_tree() {
	local dir problem
	case ${TEO_MAINLINE_SRC:-} in
	none) return 0 ;;
	"")
		if [ "$1" = fetch ]; then
			dir=$("$TEO_REPO/scripts/fetch-source.sh" --newest) ||
				die "cannot fetch the mainline baseline (no network?); TEO_MAINLINE_SRC=none runs without it"
		else
			dir=$("$TEO_REPO/scripts/fetch-source.sh" --newest --cached 2>/dev/null) || return 0
		fi ;;
	*)
		[ -d "$TEO_MAINLINE_SRC" ] || die "TEO_MAINLINE_SRC=$TEO_MAINLINE_SRC is not a folder"
		dir=$(cd "$TEO_MAINLINE_SRC" && pwd) ;;
	esac
	problem=$(lab_tree_problem "$dir")
	[ -z "$problem" ] || die "mainline tree $dir $problem"
	printf '%s\n' "$dir"
}

# "X.Y" of tree $1.
tree_xy() {
	local v
	v=$(kernel_version "$1")
	printf '%s\n' "${v%.*}"
}

# --- governors and the build ---------------------------------------------------

extra=""		# label=path ... of --gov
extra_labels=" "
mutants=""		# label=path ... of the intended differences' mutants

# A usage error naming $2 unless file $1 is the source of a cpuidle
# governor (what the lab's shim can build): anything else would fail only
# later, in the compiler or linker.
need_governor_source() {
	grep -q 'struct cpuidle_governor' "$1" 2>/dev/null ||
		usage_error "$2: '$1' is not a cpuidle governor source (no struct cpuidle_governor in it)"
}

# Check one --gov LABEL=PATH (before anything is built) and add it.
add_gov() {
	local label path
	case $1 in
	*=*) ;;
	*) usage_error "--gov wants LABEL=PATH, got '$1'" ;;
	esac
	label=${1%%=*}
	path=${1#*=}
	case $label in
	""|*[!A-Za-z0-9._-]*) usage_error "--gov label '$label' is not a plain name (letters, digits, . _ -)" ;;
	oracle|teo|teo-traced|teo-[0-9]*|menu-[0-9]*) usage_error "--gov label '$label' is taken by the lab (oracle, teo, teo-traced, teo-X.Y, menu-X.Y)" ;;
	esac
	case $extra_labels in
	*" $label "*) usage_error "--gov label '$label' given twice" ;;
	esac
	case $path in
	*[[:space:]=]*) usage_error "--gov $label: the path must not contain spaces or '=' (make cannot build it): '$path'" ;;
	esac
	[ -f "$path" ] || usage_error "--gov $label: no such file: '$path'"
	need_governor_source "$path" "--gov $label"
	extra_labels="$extra_labels$label "
	extra="$extra $label=$(cd "$(dirname "$path")" && pwd)/$(basename "$path")"
}

# Seed 001 ("avoid selecting the deepest idle state over-eagerly") applied to
# a copy of base tree $1's teo.c in the cache, next to a copy of its gov.h;
# prints the copy.  The patched file is never part of the repository.
seed001_source() {
	local base=$1 src=$1/drivers/cpuidle/governors dir key
	local old='if (2 \* idx_intercept_sum > cpu_data->total - idx_hit_sum) {'
	local new='if (2 * (idx_intercept_sum + idx_hit_sum) > cpu_data->total) {'
	key=$(cat "$src/teo.c" "$src/gov.h" | sha1sum | cut -c1-12)
	dir=$TEO_CACHE/replay/variants/seed001-$key
	if [ ! -f "$dir/teo.c" ]; then
		mkdir -p "$dir"
		cp "$src/gov.h" "$dir/gov.h"
		sed "s/$old/$new/" "$src/teo.c" > "$dir/teo.c.tmp"
		if cmp -s "$src/teo.c" "$dir/teo.c.tmp" || ! grep -qF "$new" "$dir/teo.c.tmp"; then
			rm -rf "$dir"
			die "seed 001 does not apply to $src/teo.c (the intercept test differs)"
		fi
		mv "$dir/teo.c.tmp" "$dir/teo.c"
	fi
	printf '%s\n' "$dir/teo.c"
}

# Build the lab (targets: idle-replay, idle-replay-asan) with base tree
# $base, mainline tree $mainline and extra governors $extra; print the
# build folder.  The binary names the sources and platform folder of this
# repository ($LAB), so a cache shared by two work trees keeps one build
# per tree.
build() {
	local key out jobs=2
	need_cmd make gcc sha1sum
	key=$(printf '%s\n%s\n%s\n%s\n%s\n' "$LAB" "$base" "$mainline" "$extra" "$mutants" |
		sha1sum | cut -c1-12)
	out=$TEO_CACHE/replay/build-$key
	mkdir -p "$out" 2>/dev/null || die "cannot create $out; set TEO_CACHE to a writable folder"
	make -s -j"$jobs" -C "$LAB" BASE="$base" MAINLINE="$mainline" O="$out" \
		GOV_EXTRA="${extra# }" GOV_MUTANTS="${mutants# }" "${@/#/$out/}" >&2 ||
		die "building the replay lab failed"
	printf '%s\n' "$out"
}

# Our teo.c (with teo.h and teo_trace.h) with the mutant of each difference listed in
# intended-differences applied, one copy per mutant in the cache; adds
# "mutant-ID=path" to $mutants for the build.  A listed ID without a mutant
# is left to the gate, which names it.
prepare_mutants() {
	local id rest m key dir gov=drivers/cpuidle/governors
	need_cmd patch sha1sum
	while read -r id rest; do
		case $id in ""|"#"*) continue ;; esac
		m=$MUTANT_DIR/$id.patch
		if ! [[ $id =~ ^[A-Za-z0-9_-]+$ ]] || [ ! -f "$m" ]; then
			continue
		fi
		key=$(cat "$TEO_REPO/$gov/teo.c" "$TEO_REPO/$gov/teo.h" "$TEO_REPO/$gov/teo_trace.h" "$m" | sha1sum | cut -c1-12)
		dir=$TEO_CACHE/replay/mutants/$id-$key
		if [ ! -f "$dir/$gov/teo.c" ]; then
			rm -rf "$dir.tmp"
			mkdir -p "$dir.tmp/$gov"
			cp "$TEO_REPO/$gov/teo.c" "$TEO_REPO/$gov/teo.h" "$TEO_REPO/$gov/teo_trace.h" "$dir.tmp/$gov/"
			patch -s -f -p1 --no-backup-if-mismatch -d "$dir.tmp" -i "$m" >/dev/null ||
				{ rm -rf "$dir.tmp"; die "mutant $m does not apply to $gov/teo.c"; }
			rm -rf "$dir"
			mv "$dir.tmp" "$dir"
		fi
		mutants="$mutants mutant-$id=$dir/$gov/teo.c"
	done < "$INTENDED"
}

# Find the trees: base, and mainline ($1: fetch, or cached).
trees() {
	base=$(base_tree) || exit 1
	mainline=$(mainline_tree "$1") || exit 1
	if [ -n "$mainline" ] && [ "$(tree_xy "$mainline")" = "$(tree_xy "$base")" ]; then
		note "the mainline tree is Linux $(tree_xy "$base") like the base tree: no separate mainline baselines"
		mainline=""
	fi
	return 0
}

# --data arguments: the hand-written tables, the tables extracted from the
# trees (once extract-tables.py is there), and TEO_CORPUS.
data_args=()
corpus() {
	local tree out key dir rest
	data_args=(--data "$LAB/platforms")
	if [ -f "$LAB/extract-tables.py" ]; then
		need_cmd python3
		for tree in "$base" $mainline; do
			key=$(printf '%s\n' "$tree" | cat - "$LAB/extract-tables.py" | sha1sum | cut -c1-12)
			out=$TEO_CACHE/replay/corpus/$(tree_xy "$tree")-$key
			if [ ! -f "$out/INDEX" ]; then
				rm -rf "$out.tmp"
				mkdir -p "$out.tmp"
				python3 "$LAB/extract-tables.py" "$tree" "$out.tmp" >&2 ||
					die "extract-tables.py failed on $tree"
				rm -rf "$out"
				mv "$out.tmp" "$out"
			fi
			data_args+=(--data "$out")
		done
	fi
	rest=${TEO_CORPUS:-}
	while [ -n "$rest" ]; do
		dir=${rest%%:*}
		[ "$dir" = "$rest" ] && rest="" || rest=${rest#*:}
		[ -z "$dir" ] && continue
		[ -d "$dir" ] || die "TEO_CORPUS: $dir is not a folder"
		data_args+=(--data "$(cd "$dir" && pwd)")
	done
}

# A scenario name or family, checked for its form before the build (the
# tool checks that it exists).
check_scenario_arg() {
	case " $SCENARIO_FAMILIES " in
	*" $1 "*) return 0 ;;
	esac
	[[ $1 =~ ^(s[1-9]|p|x)-[a-z0-9-]+$ ]] ||
		usage_error "--scenario '$1' is neither a family ($SCENARIO_FAMILIES) nor a scenario name (s4-fio-nvme, ...; see 'list')"
}

# --- report --------------------------------------------------------------------

cmd_report() {
	local out=$TEO_CACHE/replay/report args=() bin tmp seed
	while [ $# -gt 0 ]; do
		case $1 in
		--out) [ $# -ge 2 ] || usage_error "--out needs a folder"; out=$2; shift ;;
		--gov) [ $# -ge 2 ] || usage_error "--gov needs LABEL=PATH"; add_gov "$2"; shift ;;
		--scenario)
			[ $# -ge 2 ] || usage_error "--scenario needs a name or a family"
			check_scenario_arg "$2"
			args+=(--scenario "$2"); shift ;;
		--help|-h) usage; exit 0 ;;
		*) usage_error "report: unknown argument '$1'" ;;
		esac
		shift
	done
	case $out in
	*[[:space:]]*) usage_error "--out: the folder must not contain spaces: '$out'" ;;
	esac
	need_cmd gnuplot
	trees fetch
	seed=$(seed001_source "$base")
	extra="$extra teo-$(tree_xy "$base")-seed001=$seed"
	corpus
	bin=$(build idle-replay)/idle-replay || exit 1
	mkdir -p "$(dirname "$out")" || die "cannot create $(dirname "$out")"
	tmp=$(mktemp -d "$out.tmp.XXXXXX") || die "cannot write next to $out"
	# Write everything aside and swap it in, so a failure leaves no report.
	if ! "$bin" report --out "$tmp" --jobs 2 "${data_args[@]}" "${args[@]}" \
		--gates "$GATES" --known-misses "$KNOWN" \
		--intended "$INTENDED" --kunit "$KUNIT_SRC" >&2 ||
	   ! (cd "$tmp" && gnuplot plots.gp); then
		rm -rf "$tmp"
		die "the report failed; nothing was written"
	fi
	rm -rf "$out"
	mv "$tmp" "$out"
	cat "$out/report.md"
	note "report: $out/report.md (plots: $out/*.svg, data: $out/results.tsv)"
}

cmd_targets() {
	local bin
	[ $# -eq 0 ] || { [ "$1" = --help ] && { usage; exit 0; }; usage_error "targets takes no arguments"; }
	trees fetch
	corpus
	bin=$(build idle-replay)/idle-replay || exit 1
	"$bin" targets --jobs 2 "${data_args[@]}"
}

cmd_overhead() {
	local bin rounds=()
	while [ $# -gt 0 ]; do
		case $1 in
		--rounds)
			if [ $# -lt 2 ] || ! [[ $2 =~ ^[1-9][0-9]{0,3}$ ]]; then
				usage_error "--rounds wants a number of rounds, 1..9999"
			fi
			rounds=(--rounds "$2"); shift ;;
		--help|-h) usage; exit 0 ;;
		*) usage_error "overhead: unknown argument '$1'" ;;
		esac
		shift
	done
	trees fetch
	bin=$(build idle-replay)/idle-replay || exit 1
	"$bin" overhead "${rounds[@]}"
}

# --- check ---------------------------------------------------------------------

# The check's steps and the tooling tests.
# shellcheck source=tools/idle-replay/tests/tooling.sh
. "$LAB/tests/tooling.sh"
# shellcheck source=tools/idle-replay/tests/gates.sh
. "$LAB/tests/gates.sh"

cmd_check() {
	local out dir targets=() start=$SECONDS fuzz_pid trace_pid rc=0 trc=0
	while [ $# -gt 0 ]; do
		case $1 in
		--targets) targets=(--targets) ;;
		--help|-h) usage; exit 0 ;;
		*) usage_error "check: unknown argument '$1'" ;;
		esac
		shift
	done
	trees fetch
	corpus
	prepare_mutants
	out=$(build idle-replay idle-replay-asan) || exit 1
	note "built the lab ($((SECONDS - start)) s)"
	dir=$TEO_CACHE/replay/check
	rm -rf "$dir"
	mkdir -p "$dir"
	# The contract check under ASan and the trace gate next to the gates'
	# two processes.
	run_contract "$out/idle-replay-asan" "$dir" > "$dir/contract.out" 2>&1 &
	fuzz_pid=$!
	run_trace_gate "$out/idle-replay" "$dir/trace-gate.log" &
	trace_pid=$!
	check_gates "$out/idle-replay" "$dir/gates.log" "${targets[@]}"
	wait "$fuzz_pid" || rc=$?
	cat "$dir/contract.out"
	result "$rc" "contract check of every governor under ASan/UBSan (logs: $dir/fuzz-*.log)"
	wait "$trace_pid" || trc=$?
	trace_gate_result "$trc" "$dir/trace-gate.log"
	note "gates, contract check and trace gate done ($((SECONDS - start)) s)"
	tooling_tests "$out" "$dir"
	printf '%s passed, %s failed (%s s)\n' "$passed" "$failed" "$((SECONDS - start))"
	[ "$failed" = 0 ]
}

cmd_leaks() {
	local out dir
	[ $# -eq 0 ] || { [ "$1" = --help ] && { usage; exit 0; }; usage_error "leaks takes no arguments"; }
	trees cached
	corpus
	out=$(build idle-replay-asan) || exit 1
	dir=$TEO_CACHE/replay/leaks
	rm -rf "$dir"
	mkdir -p "$dir"
	! traced || die "leaks: this process is traced, and LeakSanitizer cannot run under ptrace"
	no_leaks "$out/idle-replay-asan" "$dir"
	[ "$failed" = 0 ]
}

# --- diff ----------------------------------------------------------------------

# Absolute path of an existing file $1, or a usage error naming $2.
abs_file() {
	[ -f "$1" ] || usage_error "$2: no such file: '$1'"
	need_governor_source "$1" "$2"
	printf '%s/%s\n' "$(cd "$(dirname "$1")" && pwd)" "$(basename "$1")"
}

cmd_diff() {
	local bin work counts='' src i n runs dec div rcases rdec rdiv
	local -a srcs=()
	[ "${1:-}" != --help ] || { usage; exit 0; }
	if [ "${1:-}" = --counts ]; then
		[ $# -ge 2 ] || usage_error "--counts needs a file"
		counts=$2
		shift 2
	fi
	[ $# -ge 2 ] || usage_error "diff needs OLD.c and NEW.c"
	for src in "$@"; do
		src=$(abs_file "$src" "diff") || exit 2
		srcs+=("$src")
	done
	extra=""
	for i in "${!srcs[@]}"; do
		case ${srcs[i]} in
		*[[:space:]=]*) usage_error "diff: paths must not contain spaces or '='" ;;
		esac
		extra="$extra g$i=${srcs[i]}"
	done
	trees cached
	corpus
	# One build for the whole chain: the lab compiles every source once.
	bin=$(build idle-replay)/idle-replay || exit 1
	n=$((${#srcs[@]} - 1))
	work=$(mktemp -d)
	remove_at_exit "$work"
	# The pairs are independent: two at a time, one per core (each run is
	# single-threaded), reported in their order.
	for ((i = 0; i < n; i++)); do
		[ "$i" -lt 2 ] || wait -n
		(
			"$bin" diff --diff "g$i,g$((i + 1))" --out "$work/$i.tsv" \
				"${data_args[@]}" >"$work/$i.log" 2>&1 || echo $? > "$work/$i.failed"
		) &
	done
	wait
	[ -z "$counts" ] ||
		printf 'old\tnew\truns\tdecisions\tdivergent\trandom_cases\trandom_decisions\trandom_divergent\n' \
			> "$counts" || die "cannot write $counts"
	for ((i = 0; i < n; i++)); do
		if [ -e "$work/$i.failed" ]; then
			sed 's/^/    /' "$work/$i.log" | head -20 >&2
			die "the differential run of ${srcs[i]} and ${srcs[i + 1]} failed"
		fi
		[ "$n" = 1 ] || printf '%s -> %s\n' "${srcs[i]}" "${srcs[i + 1]}"
		grep -E '^DIVERGENCE' -A6 "$work/$i.log" | head -40 || true
		# The counts come from the tool's table, never from its display.
		{ read -r _ && read -r runs dec div rcases rdec rdiv; } < "$work/$i.tsv" ||
			die "the differential of ${srcs[i]} and ${srcs[i + 1]} wrote no counts"
		[ -z "$counts" ] ||
			printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "${srcs[i]}" "${srcs[i + 1]}" \
				"$runs" "$dec" "$div" "$rcases" "$rdec" "$rdiv" >> "$counts"
		printf 'differential: %d runs, %d decisions, %d divergent (random tables: %d cases, %d decisions, %d divergent)\n' \
			"$runs" "$dec" "$div" "$rcases" "$rdec" "$rdiv"
	done
}

# --- convert, run, list --------------------------------------------------------

cmd_convert() {
	local hz=250 bin tmp
	local -a plat=()
	while [ $# -gt 0 ]; do
		case $1 in
		--platform)
			[ $# -ge 2 ] || usage_error "--platform needs a value"
			plat=(--platform "$2")
			shift ;;
		--hz)
			[ $# -ge 2 ] || usage_error "--hz needs a value"
			case $2 in
			100|250|300|1000) hz=$2 ;;
			*) usage_error "--hz wants 100, 250, 300 or 1000, got '$2'" ;;
			esac
			shift ;;
		--help|-h) usage; exit 0 ;;
		-) break ;;
		-*) usage_error "convert: unknown option '$1'" ;;
		*) break ;;
		esac
		shift
	done
	[ $# -eq 2 ] || usage_error "convert needs INPUT and OUTPUT"
	[ "$1" = - ] || [ -f "$1" ] || usage_error "convert: no such file: '$1'"
	trees cached
	# A table named rather than given as a file is looked up in the corpus.
	case ${plat[1]:-x.plat} in
	*/*|*.plat) data_args=() ;;
	*) corpus ;;
	esac
	bin=$(build idle-replay)/idle-replay || exit 1
	plat=("${data_args[@]}" "${plat[@]}")
	if [ "$2" != - ]; then
		"$bin" convert --hz "$hz" "${plat[@]}" "$1" "$2"
		return
	fi
	tmp=$(mktemp -d)
	"$bin" convert --hz "$hz" "${plat[@]}" "$1" "$tmp/out.trace" || { rm -rf "$tmp"; exit 1; }
	cat "$tmp/out.trace"
	rm -rf "$tmp"
}

cmd_tool() {
	local cmd=$1 bin prev="" arg
	shift
	for arg in "$@"; do
		[ "$prev" != --scenario ] || check_scenario_arg "$arg"
		prev=$arg
	done
	trees cached
	corpus
	bin=$(build idle-replay)/idle-replay || exit 1
	if [ "$cmd" = list ]; then
		"$bin" list "${data_args[@]}" "$@"
	else
		"$bin" run "${data_args[@]}" "$@"
	fi
}

main() {
	local cmd
	if [ $# -eq 0 ]; then
		usage >&2
		usage_error "no command given"
	fi
	cmd=$1
	shift
	case $cmd in
	report) cmd_report "$@" ;;
	check) cmd_check "$@" ;;
	targets) cmd_targets "$@" ;;
	diff) cmd_diff "$@" ;;
	overhead) cmd_overhead "$@" ;;
	leaks) cmd_leaks "$@" ;;
	convert) cmd_convert "$@" ;;
	run|list)
		[ "${1:-}" != --help ] || { usage; exit 0; }
		cmd_tool "$cmd" "$@" ;;
	--help|-h|help) usage ;;
	*) usage_error "unknown command '$cmd' (see --help)" ;;
	esac
}

main "$@"
