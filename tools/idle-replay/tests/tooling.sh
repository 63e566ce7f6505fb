# SPDX-License-Identifier: GPL-2.0
# The steps of 'scripts/replay.sh check' besides the build: the gates, the
# contract check and the tooling tests.  Sourced by scripts/replay.sh, which
# provides LAB, TEO_REPO, base, mainline, data_args and the settings.
# shellcheck shell=bash
# shellcheck disable=SC2154 # base, mainline, data_args: set by replay.sh

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

# The gates of the corpus: one pass of every scenario on every table.
check_gates() {
	local bin=$1 log=$2 rc=0
	shift 2
	"$bin" check --jobs 2 "${data_args[@]}" --gates "$GATES" --known-misses "$KNOWN" \
		--intended "$INTENDED" --kunit "$KUNIT_SRC" --mutants "$MUTANT_DIR" \
		"$@" >"$log" 2>&1 || rc=$?
	grep -E '^(DIVERGENCE|- BELOW|- NOT LISTED|- STALE|- NO MUTANT|- NO DIVERGENCE|- \.\.\.|(\*\*(PASSED|FAILED)|Targets missed|Mean over|gates:))' "$log" |
		sed 's/^/  /' | head -60 || true
	grep -q '^gates: ' "$log" || { sed 's/^/  /' "$log" | tail -5; rc=1; }
	result "$rc" "gates: oracle, targets against every baseline and the documented misses, intended differences and their mutants${1:+, targets} (log: $log)"
}

# The trace events change no decision: our teo.c with its trace calls
# compiled out (teo) and with them recording (teo-traced, the twin) must
# decide alike at every step of every scenario on every table and of the
# random cases, and every event of the twin must tell what it decided.
run_trace_gate() {
	"$1" diff --diff teo,teo-traced --events "${data_args[@]}" >"$2" 2>&1
}

# The gate's result from run_trace_gate's exit status $1 and log $2.
trace_gate_result() {
	local rc=$1 log=$2 counts runs dec div ev bad
	grep -E '^DIVERGENCE' -A6 "$log" | sed 's/^/  /' | head -40 || true
	grep -E '^  (teo_select|teo_update|first)' "$log" || true
	counts=$(awk '
		/^differential teo vs teo-traced: / { runs = $5; dec = $10; div += $13; n++ }
		/^differential teo vs teo-traced on random tables: / { div += $(NF - 1); n++ }
		/^events of teo-traced: / { ev = $4; bad = $6; n++ }
		END {
			if (n == 3)
				printf "%d %d %d %d %d\n", runs, dec, div, ev, bad
		}' "$log")
	if [ -z "$counts" ]; then
		sed 's/^/  /' "$log" | tail -5
		result 1 "trace events: the differential teo vs teo-traced printed no counts (log: $log)"
		return
	fi
	read -r runs dec div ev bad <<<"$counts"
	[ "$rc" = 0 ] && [ "$div" = 0 ] && [ "$bad" = 0 ] || rc=1
	result "$rc" "trace events change no decision: teo vs teo-traced over $runs runs and the random tables, $dec decisions, $div divergent; $ev decisions checked against their events, $bad inconsistent (log: $log)"
}

# UBSan reports name the source file; ours and the lab must have none.
own_sanitizer_errors() {
	grep -E 'runtime error' "$1" | grep -E "($TEO_REPO/drivers|$LAB)" || true
}

# Every governor of the build, a million random decisions each under
# ASan/UBSan; a violation of ours or the oracle's, or a sanitizer report
# from our code, fails.
run_contract() {
	local asan=$1 dir=$2 gov log rc bad=0
	# Not even the listing checks leaks: LeakSanitizer aborts under
	# ptrace, and 'scripts/teo check' runs this step under strace.
	for gov in $(ASAN_OPTIONS=detect_leaks=0 "$asan" list | awk '/^governors:/ { on = 1; next } /^[a-z]/ { on = 0 } on { print $1 }'); do
		log=$dir/fuzz-$gov.log
		rc=0
		# Leaks are no part of the contract; no_leaks checks the lab's.
		ASAN_OPTIONS=exitcode=86:detect_leaks=0 \
		UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=0 \
			"$asan" fuzz --gov "$gov" --decisions "$FUZZ_DECISIONS" \
			--seed "$FUZZ_SEED" --must-pass "$MUST_PASS" >"$log" 2>&1 || rc=$?
		sed -n '2,$p' "$log" | grep -vE '^(    |SUMMARY|=)' | sed 's/^/  /' | head -24
		grep -E 'runtime error|ERROR: AddressSanitizer|ERROR: LeakSanitizer' "$log" |
			sed 's/^/    /' | head -10 || true
		case $MUST_PASS, in
		*"$gov",*)
			[ -z "$(own_sanitizer_errors "$log")" ] || rc=1
			[ "$rc" = 0 ] || { bad=1; echo "  $gov: exit $rc (a violation of ours or the oracle's)"; } ;;
		*)
			[ "$rc" = 0 ] || echo "  baseline $gov: exit $rc, findings above (not a failure of ours)" ;;
		esac
	done
	return "$bad"
}

# Expect $bin validate FILE to fail with "FILE:LINE: reason" from the file's
# "# expect: LINE: reason" line, on one line of its own.
check_bad_file() {
	local bin=$1 file=$2 want=$3 err rc=0
	err=$("$bin" validate "$file" 2>&1 >/dev/null) || rc=$?
	if [ "$rc" = 1 ] && [[ $err == "idle-replay: $file:$want"* ]] &&
	   [ "$(printf '%s\n' "$err" | wc -l)" = 1 ]; then
		result 0 "bad input rejected: ${file#"$LAB"/}:$want"
	else
		result 1 "bad input $file: wanted one line '$file:$want', got exit $rc: $err"
	fi
}

bad_files() {
	local bin=$1 dir=$2 f want
	for f in "$LAB"/tests/bad/*.plat "$LAB"/tests/bad/*.trace "$LAB"/tests/bad/*.costs; do
		want=$(sed -n 's/^# expect: //p' "$f" | head -1)
		[ -n "$want" ] || want=$(cat "$f.expect")
		check_bad_file "$bin" "$f" "$want"
	done
	# A path with a space is named as it is.
	mkdir -p "$dir/with space"
	cp "$LAB/tests/bad/negative.plat" "$dir/with space/bad file.plat"
	check_bad_file "$bin" "$dir/with space/bad file.plat" \
		"$(sed -n 's/^# expect: //p' "$LAB/tests/bad/negative.plat")"
}

# Tables the kernel would run although they break the lab's old rules.
odd_tables() {
	local bin=$1 f want out rc
	for f in "$LAB"/tests/data/*.plat; do
		want=$(sed -n 's/^# note: //p' "$f" | head -1)
		rc=0
		out=$("$bin" validate "$f" 2>&1) || rc=$?
		[ "$rc" = 0 ] && [[ $out == *"$want"* ]] || rc=1
		result "$rc" "table run as the kernel would: ${f#"$LAB"/} ($want)"
	done
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
	# A VM's recording with --platform: the ends of polling (time limit,
	# nothing to do, no handler) are no arrivals.
	rc=0
	"$bin" convert --platform "$LAB/platforms/i5-10600k.plat" "$LAB/tests/data/trace-cmd-vm.txt" \
		"$dir/trace-cmd-vm.poll-trace" 2>"$dir/poll.err" || rc=$?
	[ "$rc" = 0 ] && diff -u "$LAB/tests/data/trace-cmd-vm.poll-trace" "$dir/trace-cmd-vm.poll-trace" >&2 || rc=1
	grep -q ' 11 ends of polling left out' "$dir/poll.err" || rc=1
	result "$rc" "converter: with --platform a poll's time-limit exits are left out (tests/data/trace-cmd-vm.poll-trace)"
	in=$LAB/tests/bad/perf-bad-cpu.txt
	rc=0
	if "$bin" convert "$in" "$dir/bad.trace" 2>"$dir/bad.err" ||
	   [ -e "$dir/bad.trace" ] || [ -e "$dir/bad.trace.tmp" ] ||
	   ! grep -q "perf-bad-cpu.txt:2: cpu 999 out of range" "$dir/bad.err"; then
		rc=1
	fi
	result "$rc" "converter: bad input named with its line, nothing written"
}

# run --per-state: every governor's counters per state, which add up to its
# entries (its decisions but for the periods still open at the end), and
# whose time shares are the table's.
per_state() {
	local bin=$1 dir=$2 rc=0
	"$bin" run --trace "$LAB/tests/data/trace-cmd.trace" --platform rk3399 \
		--gov teo --per-state > "$dir/per-state.out" 2>&1 || rc=1
	awk '
		/decisions/ {
			n = split($0, part, ";")
			for (i = 1; i <= n; i++)
				if (match(part[i], /[A-Za-z0-9.-]+: [0-9]+ decisions/)) {
					split(substr(part[i], RSTART, RLENGTH), f, "[: ]+")
					dec[f[1]] = f[2]
				}
		}
		/^per state/ { on = 1; next }
		on && NF == 7 && $2 ~ /^[0-9]+$/ { use[$1] += $4; rows[$1]++ }
		END {
			if (rows["oracle"] != 3 || rows["teo"] != 3) exit 1
			for (g in dec)
				if (use[g] > dec[g] || use[g] + 2 < dec[g]) exit 1
		}' "$dir/per-state.out" || rc=1
	result "$rc" "run --per-state: usage, time, above and below per governor and state, adding up to its entries"
}

# Governor sources: a missing kernel API is named; a file registering
# nothing is named; a quoted #include finds the gov.h next to the source
# (so each tree's governors use their own tree's gov.h).
governor_builds() {
	local out=$1 err rc=0 label gov_h
	err=$(make -s -C "$LAB" BASE="$base" O="$out" probe \
		SRC="$LAB/tests/bad/needs-missing-api.c" LABEL=probe 2>&1) && rc=1
	[[ $err == *"needs kernel API the shim lacks: function tick_nohz_get_next_hrtimer()"* ]] || rc=1
	result "$rc" "a governor needing an API the shim lacks fails to build, naming it"

	rc=0
	make -s -C "$LAB" BASE="$base" O="$out" probe SRC="$LAB/tests/govh/probe.c" \
		LABEL=govh >/dev/null 2>&1 || rc=1
	grep -q "$LAB/tests/govh/gov.h" "$out/probe/gov-govh.o.d" 2>/dev/null || rc=1
	for label in $(make -s -C "$LAB" BASE="$base" MAINLINE="$mainline" labels |
		       awk '$2 == "base" || $2 == "mainline" { print $1 "=" $3 }'); do
		gov_h=$(dirname "${label#*=}")/gov.h
		grep -q "$gov_h" "$out/fast/gov-${label%%=*}.o.d" || rc=1
	done
	result "$rc" "each governor builds with the gov.h next to it (base and mainline trees' own)"

	rc=0
	err=$(make -s -C "$LAB" BASE="$base" O="$out/nothing" \
		GOV_EXTRA="quiet=$LAB/tests/bad/registers-nothing.c" "$out/nothing/idle-replay" 2>&1 &&
	      "$out/nothing/idle-replay" list 2>&1) && rc=1
	[[ $err == *"governor 'quiet' ($LAB/tests/bad/registers-nothing.c) registered nothing"* ]] || rc=1
	result "$rc" "a --gov file that registers no governor is named at start-up"
}

# Is this shell traced (strace, gdb)?  LeakSanitizer needs to stop and
# inspect the process and gives up with a fatal error under ptrace.
traced() {
	[ "$(awk '/^TracerPid:/ { print $2 }' /proc/self/status)" != 0 ]
}

# The lab frees what it allocates: no leak report on valid runs.
no_leaks() {
	local asan=$1 dir=$2 rc=0
	if traced; then
		printf 'SKIP leak check: LeakSanitizer cannot run under ptrace (strace); scripts/teo check runs it untraced (scripts/replay.sh leaks)\n'
		return 0
	fi
	export ASAN_OPTIONS=exitcode=86:detect_leaks=1
	"$asan" validate "$LAB/platforms/rk3399.plat" "$LAB/tests/data/perf-script.trace" \
		>/dev/null 2>"$dir/leak.log" || rc=1
	"$asan" run --scenario s2-desktop-idle >/dev/null 2>>"$dir/leak.log" || rc=1
	"$asan" run --trace "$LAB/tests/data/trace-cmd.trace" --platform rk3399 \
		>/dev/null 2>>"$dir/leak.log" || rc=1
	"$asan" run --trace "$LAB/tests/data/trace-cmd-vm.trace" --platform "$LAB/platforms/i5-10600k.plat" \
		--per-state >/dev/null 2>>"$dir/leak.log" || rc=1
	"$asan" convert --platform "$LAB/platforms/i5-10600k.plat" "$LAB/tests/data/trace-cmd-vm.txt" \
		"$dir/leak.trace" >/dev/null 2>>"$dir/leak.log" || rc=1
	"$asan" report --out "$dir/leak-report" --scenario S4 --platform rk3399 \
		>/dev/null 2>>"$dir/leak.log" || rc=1
	"$asan" list >/dev/null 2>>"$dir/leak.log" || rc=1
	unset ASAN_OPTIONS
	result "$rc" "no ASan/LeakSanitizer report on valid validate, run (also --per-state), convert (--platform), report and list (log: $dir/leak.log)"
	rc=0
	(cd "$dir/leak-report" && gnuplot plots.gp) >/dev/null 2>&1 || rc=1
	result "$rc" "a report of one family (S4, no S6 sweep) plots with gnuplot"
}

# $1: expected exit status; then the command.  It must print one error
# line (after a usage text if $want_usage) and nothing else.
expect_error() {
	local want=$1 err rc=0 errors
	shift
	err=$("$@" 2>&1 >/dev/null) || rc=$?
	errors=$(printf '%s\n' "$err" | grep -c 'error:' || true)
	if [ "$rc" = "$want" ] && [ "$errors" = 1 ] &&
	   [ "$(printf '%s\n' "$err" | tail -1 | grep -c 'error:')" = 1 ] &&
	   { [ "${want_usage:-0}" = 1 ] || [ "$(printf '%s\n' "$err" | wc -l)" = 1 ]; }; then
		result 0 "'${*#"$TEO_REPO"/}' fails with one line: $(printf '%s\n' "$err" | tail -1)"
	else
		result 1 "'$*': wanted exit $want and one error line, got exit $rc: $err"
	fi
}

# Bad arguments are refused before anything is built or fetched.
script_arguments() {
	local dir=$1 r=$TEO_REPO/scripts/replay.sh f=$TEO_REPO/scripts/fetch-source.sh
	local good=$LAB/tests/govh/probe.c
	want_usage=1 expect_error 2 "$r"
	expect_error 2 "$r" nosuch
	expect_error 2 "$r" report --gov nolabel
	expect_error 2 "$r" report --gov x=/nonexistent/teo.c
	expect_error 2 "$r" report --gov teo-7.3="$good"
	expect_error 2 "$r" report --gov a="$good" --gov a="$good"
	mkdir -p "$dir/with space"
	cp "$good" "$dir/with space/gov.c"
	expect_error 2 "$r" report --gov a="$dir/with space/gov.c"
	expect_error 2 "$r" report --scenario nosuch
	expect_error 2 "$r" run --scenario nosuch
	expect_error 2 "$r" convert --hz abc in out
	expect_error 2 "$r" convert only-one
	expect_error 2 "$r" check --bogus
	expect_error 2 "$r" targets extra
	expect_error 2 "$r" overhead --rounds 0
	expect_error 2 "$r" diff "$good"
	expect_error 2 "$r" diff /etc/hostname "$good"
	expect_error 2 "$r" report --gov a=/etc/hostname
	KERNEL_SRC=/nonexistent expect_error 1 "$r" list
	KERNEL_SRC=/nonexistent expect_error 1 "$r" convert "$good" -
	expect_error 2 "$f" linux-source-6
	expect_error 2 "$f" linux-source-7.3/../../x
	expect_error 2 "$f" --cached
	want_usage=1 expect_error 2 "$f"
}

# fetch-source.sh finds the archive in one-line and deb822 apt sources.
mirror_sources() {
	local dir=$1/apt rc=0 got
	mkdir -p "$dir/sources.list.d"
	printf '%s\n' 'deb [arch=amd64] http://one.example/debian/ bookworm main' \
		'deb http://sec.example/debian-security bookworm-security main' > "$dir/sources.list"
	got=$(TEO_APT_ETC=$dir "$TEO_REPO/scripts/fetch-source.sh" --mirror) || rc=1
	[ "$got" = http://one.example/debian ] || rc=1
	rm "$dir/sources.list"
	printf '%s\n' 'Types: deb' 'URIs: http://sec.example/debian-security' \
		'Suites: bookworm-security' '' 'Types: deb deb-src' \
		'URIs: http://two.example/debian/' 'Suites: bookworm bookworm-updates' \
		'Components: main' > "$dir/sources.list.d/debian.sources"
	got=$(TEO_APT_ETC=$dir "$TEO_REPO/scripts/fetch-source.sh" --mirror) || rc=1
	[ "$got" = http://two.example/debian ] || rc=1
	result "$rc" "fetch-source.sh takes the archive from one-line and deb822 apt sources"
}

# The differential of a file with itself: no divergence, and the counts
# table that scripts/series.sh reads.
diff_self() {
	local tsv=$TEO_CACHE/replay/check/diff-self.tsv head old new runs dec div cases rdec rdiv rc=0
	local teo=$base/drivers/cpuidle/governors/teo.c
	"$TEO_REPO/scripts/replay.sh" diff --counts "$tsv" "$teo" "$teo" >/dev/null 2>&1 || rc=1
	{ read -r head && IFS=$'\t' read -r old new runs dec div cases rdec rdiv; } < "$tsv" || rc=1
	[ "$head" = "$(printf 'old\tnew\truns\tdecisions\tdivergent\trandom_cases\trandom_decisions\trandom_divergent')" ] ||
		rc=1
	[ "$old" = "$teo" ] && [ "$new" = "$teo" ] || rc=1
	[ "${runs:-0}" -gt 0 ] && [ "${dec:-0}" -gt 0 ] && [ "${cases:-0}" -gt 0 ] &&
		[ "${rdec:-0}" -gt 0 ] && [ "$div" = 0 ] && [ "$rdiv" = 0 ] || rc=1
	result "$rc" "replay.sh diff of a source with itself: $runs runs, $cases random cases, 0 divergent"
}

# The overhead measurement plays back exactly what each governor decided.
overhead_playback() {
	local bin=$1 out rc=0
	out=$("$bin" overhead --rounds 1 2>&1) || rc=1
	printf '%s\n' "$out" | grep -q '| yes |' || rc=1
	! printf '%s\n' "$out" | grep -q '| NO |' || rc=1
	result "$rc" "overhead: the recorded calls play back to the same decisions"
}

# The lab builds no kernel: it must not wait for the kernel build lock.
no_build_lock() {
	local dir=$1 rc=0 holder
	(exec 9>"$dir/build.lock" && flock 9 && exec sleep 300) &
	holder=$!
	sleep 0.2
	TEO_LOCK=$dir/build.lock timeout 120 "$TEO_REPO/scripts/replay.sh" list \
		>/dev/null 2>&1 || rc=1
	kill "$holder" 2>/dev/null || true
	wait "$holder" 2>/dev/null || true
	result "$rc" "replay.sh runs while another process holds the kernel build lock"
}

tooling_tests() {
	local out=$1 dir=$2
	bad_files "$out/idle-replay" "$dir"
	odd_tables "$out/idle-replay"
	check_converter "$out/idle-replay" "$dir"
	per_state "$out/idle-replay" "$dir"
	governor_builds "$out"
	no_leaks "$out/idle-replay-asan" "$dir"
	script_arguments "$dir"
	mirror_sources "$dir"
	overhead_playback "$out/idle-replay"
	no_build_lock "$dir"
	diff_self
	gate_tests "$out" "$dir"
	trace_gate_tests "$out"
}
