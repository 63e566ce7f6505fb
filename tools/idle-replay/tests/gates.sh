# SPDX-License-Identifier: GPL-2.0
# Negative tests of the gates of 'scripts/teo replay check': governors built
# wrong on purpose (tests/gates/wrong-*.c) judged as if they were ours, and
# documented-misses and intended-differences files that must fail; before
# them the tests of the machine-readable output (tests/outputs.sh), and
# among them those of the targets gate (tests/targets.sh).  Each runs one
# scenario on one table, so the whole set takes about a minute.
# Sourced by tests/tooling.sh, which scripts/teo replay check runs.
# shellcheck shell=bash
# shellcheck disable=SC2154 # base, mainline, data_args, LAB, ...: tooling.sh

GT=$LAB/tests/gates

# shellcheck source=tools/idle-replay/tests/outputs.sh
. "$LAB/tests/outputs.sh"
# shellcheck source=tools/idle-replay/tests/targets.sh
. "$LAB/tests/targets.sh"

# Build the lab with the wrong governors and the same-as-ours "mutant"
# into a folder of the check's build folder $1 (kept, so only a change
# rebuilds it); print the binary.
gate_test_build() {
	local out=$1/gate-tests ours=$TEO_REPO/drivers/cpuidle/governors/teo.c
	make -s -j2 -C "$LAB" BASE="$base" MAINLINE="$mainline" O="$out" \
		GOV_EXTRA="wrong-below=$GT/wrong-below.c wrong-deep=$GT/wrong-deep.c wrong-shallow=$GT/wrong-shallow.c" \
		GOV_MUTANTS="mutant-same=$ours" "$out/idle-replay" >/dev/null 2>&1 &&
		printf '%s\n' "$out/idle-replay"
}

# The baselines of this build, as --gov options.
gate_test_baselines() {
	"$1" list --tsv | awk -F'\t' '$1 == "governor" &&
		($3 == "base" || $3 == "mainline") { printf "--gov %s ", $2 }'
}

# check of governor $2 (judged as ours) on scenario $3, table $4 with binary
# $1 and the further options; the output to $gate_log, the exit status kept.
gate_run() {
	local bin=$1 gov=$2 sc=$3 table=$4
	shift 4
	# shellcheck disable=SC2046 # one word per option
	"$bin" check --jobs 2 "${data_args[@]}" --gates "$GATES" --ours "$gov" \
		--gov "$gov" $(gate_test_baselines "$bin") --scenario "$sc" \
		--platform "$table" "$@" >"$gate_log" 2>&1
}

# Expect the last gate_run to have failed with exactly one line matching $1
# (an extended regular expression); $2 says what the test shows.
gate_expect_line() {
	local rc=$1 want=$2 what=$3 n
	n=$(grep -cE "$want" "$gate_log" || true)
	if [ "$rc" != 0 ] && [ "$n" = 1 ]; then
		result 0 "gate fails: $what: $(grep -E "$want" "$gate_log" | cut -c1-160)"
	else
		result 1 "gate: $what: wanted exit 1 and one line /$want/, got exit $rc and $n lines (log: $gate_log)"
	fi
}

# Judge ours with tools/idle-replay/tests/gates/$2.intended as the list of
# intended differences; expect the one line $3 ($4: what it shows).
gate_intended() {
	local bin=$1 list=$2 want=$3 what=$4 rc=0
	gate_run "$bin" teo s2-desktop-idle i5-10600k --known-misses /dev/null \
		--intended "$GT/$list.intended" --kunit "$KUNIT_SRC" --mutants "$GT/mutants" \
		--decisions 20000 || rc=$?
	gate_expect_line "$rc" "$want" "$what"
}

# The regression gate's own verdict line of the last gate_run.
gate_verdict() {
	grep -E '^\*\*(PASSED|FAILED)\*\*: [0-9]+ targets evaluated' "$gate_log" | cut -c1-12
}

# A known-misses file listing the misses of draft $1 (TSV of --draft-misses)
# but those matching $2, with a cause.
gate_list_from_draft() {
	awk -F'\t' -v skip="${2:-^$}" 'NR > 1 && !($0 ~ skip) {
		printf "%s %s %s %s the governor is built wrong on purpose (tests/gates)\n", $1, $2, $3, $4 }' "$1"
}

# A file must be refused before the corpus runs, with one line naming it.
gate_refuses() {
	local bin=$1 opt=$2 file=$3 want=$4 err rc=0
	err=$("$bin" check "${data_args[@]}" --gates "$GATES" "$opt" "$file" \
		--kunit "$KUNIT_SRC" --scenario s2-desktop-idle --platform i5-10600k \
		2>&1 >/dev/null) || rc=$?
	if [ "$rc" != 0 ] && [[ $err == *"$file:"*"$want"* ]]; then
		result 0 "gate refuses $(basename "$file"): $(printf '%s\n' "$err" | head -1 | cut -c1-150)"
	else
		result 1 "gate: $file must be refused with '$want', got exit $rc: $err"
	fi
}

# $1: the check's build folder, $2: its output folder.
gate_tests() {
	local dir=$2/gates bin rc draft list met bteo key
	mkdir -p "$dir"
	gate_log=$dir/gate.log
	output_tests "$1" "$2"
	bin=$(gate_test_build "$1") || { result 1 "gate tests: the lab with the wrong governors does not build"; return; }
	bteo=$("$bin" list --tsv | awk -F'\t' '$1 == "governor" && $3 == "base" && $2 ~ /^teo-/ { print $2 }')

	# The oracle gate: a governor that enters a disabled deep state comes
	# out below the oracle in an open loop.
	rc=0
	gate_run "$bin" wrong-below s2-desktop-idle "$LAB/tests/data/off.plat" \
		--known-misses /dev/null || rc=$?
	gate_expect_line "$rc" '^- BELOW THE ORACLE: s2-desktop-idle on offstate, wrong-below' \
		"a governor below the oracle"

	# The work target: the deepest state on every hop of a token ring.
	rc=0
	gate_run "$bin" wrong-deep s3-pingpong-2cpu-w10 i5-10600k --known-misses /dev/null \
		--draft-misses "$dir/deep.tsv" || rc=$?
	gate_expect_line "$rc" "^- NOT LISTED: \`s3-pingpong-2cpu-w10 i5-10600k best work\`" \
		"a governor that loses work in a closed loop"

	# The energy targets: the shallowest state with the tick kept in an
	# open loop of long idle periods.
	rc=0
	gate_run "$bin" wrong-shallow s2-desktop-idle i5-10600k --known-misses /dev/null \
		--draft-misses "$dir/shallow.tsv" || rc=$?
	gate_expect_line "$rc" "^- NOT LISTED: \`S2 median $bteo energy\`" \
		"a governor that misses the median energy target against the base teo"

	# Listing every miss with a cause lets the targets pass (the control
	# of the next two tests) ...
	list=$dir/shallow.known
	gate_list_from_draft "$dir/shallow.tsv" > "$list"
	rc=0
	gate_run "$bin" wrong-shallow s2-desktop-idle i5-10600k --known-misses "$list" || rc=$?
	draft=$(gate_verdict)
	[ "$rc" = 0 ] && [ "$draft" = '**PASSED**: ' ] && [ -s "$list" ] || rc=1
	result "$rc" "gate: the same misses, each listed with its cause, pass the targets ($(wc -l < "$list") lines)"

	# ... but a miss left out fails, named with its key, whichever
	# target it is: median energy, median miss, one table's energy,
	for key in "S2 median $bteo energy" "S2 median $bteo miss" \
		   "S2 i5-10600k $bteo table-energy"; do
		gate_list_from_draft "$dir/shallow.tsv" "^${key// /\\t}\t" > "$list"
		rc=0
		gate_run "$bin" wrong-shallow s2-desktop-idle i5-10600k --known-misses "$list" || rc=$?
		gate_expect_line "$rc" "^- NOT LISTED: \`$key\`" "an unlisted miss (${key##* })"
	done

	# and so does a listed miss that no longer misses: a target our teo
	# meets on this table, listed as missed.
	rc=0
	gate_run "$bin" teo s2-desktop-idle i5-10600k --known-misses /dev/null \
		--draft-misses "$dir/teo.tsv" || true
	gate_list_from_draft "$dir/teo.tsv" > "$list"
	met=$("$bin" list --tsv | awk -F'\t' '$1 == "governor" &&
		($3 == "base" || $3 == "mainline") { print $2 }' |
	      while read -r gov; do
		printf 'S2 median %s energy\nS2 median %s miss\nS2 i5-10600k %s table-energy\n' \
			"$gov" "$gov" "$gov"
	      done | while read -r key; do
		grep -qF "$key " "$list" || { printf '%s\n' "$key"; break; }
	      done)
	printf '%s a miss that was fixed long ago, still listed\n' "$met" >> "$list"
	gate_run "$bin" teo s2-desktop-idle i5-10600k --known-misses "$list" || rc=$?
	gate_expect_line "$rc" "^- STALE: .*: \`$met\` no longer misses" "a stale listed miss"

	# A listed miss the run cannot measure (work of an open loop) is stale
	# too: a typo must not pass for a documented miss.
	gate_list_from_draft "$dir/teo.tsv" > "$list"
	printf 's2-desktop-idle i5-10600k best work an open loop has no work target\n' >> "$list"
	rc=0
	gate_run "$bin" teo s2-desktop-idle i5-10600k --known-misses "$list" || rc=$?
	gate_expect_line "$rc" "^- STALE: .*: \`s2-desktop-idle i5-10600k best work\` names nothing" \
		"a listed miss that names nothing the run measures"

	targets_gate_tests "$bin" "$dir"

	# The intended differences: a listed difference whose mutant decides
	# like ours, and one without a mutant.
	gate_intended "$bin" same '^- NO DIVERGENCE: same: mutant-same decides like teo' \
		"a mutant that does not diverge"
	gate_intended "$bin" no-mutant '^- NO MUTANT: absent: no mutant ' \
		"a listed difference without a mutant"
	gate_intended "$bin" property '^- NO MUTANT: property: .* is not a rule mutant' \
		"a listed difference whose mutant is a property"
	gate_intended "$bin" other-kunit "^- NO MUTANT: same: .* names KUnit case\\(s\\) 'teo_walk_weighs_all_wakeups', not " \
		"a listed difference whose mutant covers another KUnit case"
	# ... ours deciding otherwise than the base teo with nothing listed,
	# and a listed difference whose KUnit case does not exist.
	gate_intended "$bin" none '^\*\*FAILED\*\*: ours differs from .* but no difference is listed' \
		"differences from the base teo that are not listed"
	gate_refuses "$bin" --intended "$GT/no-kunit.intended" \
		"KUnit case 'teo_case_that_does_not_exist' is not in the KUnit suites"

	# The contract check: a governor that enters a disabled state while an
	# enabled one is within the limit breaks C2; it fails where it must pass.
	rc=0
	"$bin" fuzz --gov wrong-below --must-pass wrong-below --decisions 20000 \
		>"$gate_log" 2>&1 || rc=$?
	gate_expect_line "$rc" '^ +VIOLATION +[0-9]+ +C2 disabled state returned' \
		"a governor that breaks the cpuidle contract"

	# Files that would let a miss through: no per-family bounds, no
	# wildcards, no entry without a cause, no entry twice.
	printf 'base teo S3 1.0 0.5 165.0\n' > "$dir/family.conf"
	gate_refuses "$bin" --gates "$dir/family.conf" "no bounds per family"
	printf 'S3 * teo-6.12 table-energy the closed loops lock in everywhere anyway\n' > "$dir/wild.known"
	gate_refuses "$bin" --known-misses "$dir/wild.known" "no wildcards"
	printf 'S3 dt-mt8195-big teo-6.12 table-energy\n' > "$dir/nocause.known"
	gate_refuses "$bin" --known-misses "$dir/nocause.known" "the measured cause is missing"
	printf 'S9 median teo-6.12 miss ours takes the deep state as menu does\nS9 median teo-6.12 miss ours takes the deep state as menu does\n' > "$dir/twice.known"
	gate_refuses "$bin" --known-misses "$dir/twice.known" "the same miss is listed on line 1"
}

# Our teo.c (with its headers) with the sed expression $4 applied to file
# $3 of them, built as the lab's own teo (and so as the traced twin) into
# $1/trace-liars/$2; print the binary.
trace_variant() {
	local build=$1/trace-liars/$2 file=$3 expr=$4 g=drivers/cpuidle/governors
	mkdir -p "$build/$g"
	cp "$TEO_REPO/$g/teo.c" "$TEO_REPO/$g/teo.h" "$TEO_REPO/$g/teo_trace.h" "$build/$g/"
	sed -i "$expr" "$build/$g/$file"
	if cmp -s "$build/$g/$file" "$TEO_REPO/$g/$file"; then
		result 1 "trace gate: the change '$2' no longer applies to $file"
		return 1
	fi
	if ! make -s -j2 -C "$LAB" BASE="$base" O="$build/lab" OURS="$build/$g/teo.c" \
		"$build/lab/idle-replay" >"$build/make.log" 2>&1; then
		result 1 "trace gate: the lab with the change '$2' does not build (log: $build/make.log)"
		return 1
	fi
	printf '%s\n' "$build/lab/idle-replay"
}

# The trace gate on one scenario and table with binary $1 into log $2.
trace_gate_run() {
	"$1" diff --diff teo,teo-traced --events "${data_args[@]}" \
		--scenario s4-fio-nvme --platform i5-10600k --decisions 20000 >"$2" 2>&1 || true
}

# The trace gate's negative tests: teo.c with one of its events made to
# tell a lie by the sed expression $3 must be caught, the first
# inconsistent decision naming the check $4.  $1: the check's build
# folder, $2: the lie's name.
trace_liar() {
	local bin log first
	bin=$(trace_variant "$1" "$2" teo.c "$3") || return 0
	log=$(dirname "$bin")/diff.log
	trace_gate_run "$bin" "$log"
	first=$(sed -n 's/^  first: //p' "$log")
	if [[ $first == *": $4" ]] && ! grep -q ' 0 inconsistent with their events' "$log"; then
		result 0 "trace gate catches a lie ($2): ${first:0:150}"
	else
		result 1 "trace gate: the lie '$2' must be caught with '$4', got '${first:-nothing}' (log: $log)"
	fi
}

# $1: the check's build folder.
trace_gate_tests() {
	local call='^\ttrace_teo_select(dev->cpu, &sel, cpu_data->sleep_length_ns, \*stop_tick);'
	local update='^\ttrace_teo_update(dev->cpu, dev->last_state_idx, kind, credited);'
	local bin log
	trace_liar "$1" tick "s/$call/\ttrace_teo_select(dev->cpu, \&sel, cpu_data->sleep_length_ns, !*stop_tick);/" \
		"teo_select names another state or tick decision than the one returned"
	trace_liar "$1" candidate "s/$call/\tsel.candidate = -1;\n&/" \
		"teo_select has a candidate without the sleep length, or the sleep length without a candidate"
	trace_liar "$1" intercepts "s/$call/\tif (sel.candidate >= 0)\n\t\tsel.reason = TEO_SELECT_INTERCEPTS;\n&/" \
		"intercepts without a state shallower than the candidate"
	trace_liar "$1" short-idle "s/$call/\tif (sel.candidate >= 0 \&\& *stop_tick)\n\t\tsel.reason = TEO_SELECT_SHORT_IDLE;\n&/" \
		"short-idle with the tick stopped by this selection"
	trace_liar "$1" update "s/$update/\ttrace_teo_update(dev->cpu, !dev->last_state_idx, kind, credited);/" \
		"teo_update names another state than the one entered"

	# An event that changes what it records: the traced twin then decides
	# otherwise than teo, which the gate must find although the events
	# agree with the twin's own decisions.
	bin=$(trace_variant "$1" changer teo_trace.h \
		's/__entry->state = sel->state;/__entry->state = ((struct teo_selection *)sel)->state = 0;/') ||
		return 0
	log=$(dirname "$bin")/diff.log
	trace_gate_run "$bin" "$log"
	if grep -q '^DIVERGENCE s4-fio-nvme on i5-10600k' "$log"; then
		result 0 "trace gate catches an event that changes a decision: $(grep -m1 '^DIVERGENCE' "$log")"
	else
		result 1 "trace gate: an event that changes a decision must make teo and teo-traced diverge (log: $log)"
	fi
}
