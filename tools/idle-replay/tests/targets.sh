# SPDX-License-Identifier: GPL-2.0
# The negative tests of the targets gate (check --targets): a missed family
# target passes only with its line in the documented misses, and a missed
# mean over the families always fails.  The governor is wrong-shallow of
# tests/gates, judged as ours on one scenario and one table.  Sourced by
# tests/gates.sh, whose gate_run, gate_expect_line and gate_list_from_draft
# these use.
# shellcheck shell=bash
# shellcheck disable=SC2154 # data_args, GT, gate_log: set by gates.sh

# check --targets of wrong-shallow on s2-desktop-idle, table $2 (a name or
# a file), with binary $1 and the documented misses $3.
targets_run() {
	gate_run "$1" wrong-shallow s2-desktop-idle "$2" --known-misses "$3" --targets
}

# The known-misses keys of the family targets wrong-shallow misses on
# table $2 with binary $1, from targets --tsv ($3: the file to write).
targets_missed_keys() {
	# shellcheck disable=SC2046 # one word per option
	"$1" targets "${data_args[@]}" --ours wrong-shallow --gov wrong-shallow \
		$(gate_test_baselines "$1") --scenario s2-desktop-idle --platform "$2" \
		--tsv "$3" >/dev/null 2>&1 || true
	awk -F'\t' 'NR > 1 && $8 == "missed" {
		if ($3 == "energy" || $3 == "miss") print $1, "median", $5, $3
		else if ($3 == "worst-table") print $1, $9, $5, "table-energy"
	}' "$3"
}

# The targets as a gate (check --targets): each missed family target must
# be listed in known-misses, and the mean over the families, which no line
# can document, must be met.  $1: the binary, $2: the output folder.
targets_gate_tests() {
	local bin=$1 dir=$2 flat=$GT/near-flat.plat list=$2/flat.known rc keys key

	# On a table whose deep state saves little the shallowest state misses
	# its family's targets but not the mean: with every miss listed (the
	# regression gate's misses of the same run), the targets pass ...
	gate_run "$bin" wrong-shallow s2-desktop-idle "$flat" --known-misses /dev/null \
		--draft-misses "$dir/flat.tsv" || true
	gate_list_from_draft "$dir/flat.tsv" > "$list"
	rc=0
	targets_run "$bin" "$flat" "$list" || rc=$?
	grep -qE '^\*\*PASSED\*\*: targets gate: ([1-9][0-9]*) of [0-9]+ targets missed, \1 of them listed' \
		"$gate_log" || rc=1
	result "$rc" "targets gate: missed targets, each listed with its cause, pass ($(grep -E '^\*\*(PASSED|FAILED)\*\*: targets gate' "$gate_log" | cut -c1-100))"

	# ... but the line of one left out fails, named with the target, its
	# baseline and the line that would document it, whichever target it
	# is: median energy, median miss, the worst table's energy.
	keys=$(targets_missed_keys "$bin" "$flat" "$dir/flat-targets.tsv")
	[ "$(printf '%s\n' "$keys" | grep -c .)" = 3 ] ||
		result 1 "targets gate: wrong-shallow on $flat should miss its family's three targets, missed: ${keys:-none} (table: $dir/flat-targets.tsv)"
	while read -r key; do
		[ -n "$key" ] || continue
		grep -vF "$key " "$list" > "$dir/flat-less.known"
		rc=0
		targets_run "$bin" "$flat" "$dir/flat-less.known" || rc=$?
		gate_expect_line "$rc" "^- TARGET NOT LISTED: .* needs the line \`$key CAUSE\`" \
			"a missed target whose line is not listed (${key##* })"
	done <<< "$keys"

	# The mean over the families has no line: on s2-desktop-idle and
	# i5-10600k the shallowest state misses it, and listing every miss
	# of its family does not let it pass.
	gate_run "$bin" wrong-shallow s2-desktop-idle i5-10600k --known-misses /dev/null \
		--draft-misses "$dir/mean.tsv" || true
	gate_list_from_draft "$dir/mean.tsv" > "$list"
	rc=0
	targets_run "$bin" i5-10600k "$list" || rc=$?
	if [ "$rc" != 0 ] && [ "$(grep -c '^- TARGET' "$gate_log")" = 1 ] &&
	   grep -q '^- TARGET MISSED: the mean over the 1 families' "$gate_log"; then
		result 0 "gate fails: the mean energy target, which no line documents: $(grep '^- TARGET' "$gate_log" | cut -c1-150)"
	else
		result 1 "targets gate: the missed mean energy target must fail alone, got exit $rc (log: $gate_log)"
	fi
}
