# SPDX-License-Identifier: GPL-2.0
# The lab's machine-readable output (tools/idle-replay/README, "Machine-
# readable output"): each file must parse, and must say what the display
# of the same run says.  Both sides are reduced to "KEY VALUE" lines: the
# display's values as printed, the file's in full; every key shown must be
# written, with a value that rounds to the one shown.  Sourced by
# tests/gates.sh; each test runs one scenario family on one table.
# shellcheck shell=bash
# shellcheck disable=SC2154 # data_args, GATES, LAB: set by tests/tooling.sh

# Compare display keys $1 with file keys $2 as above; print the number of
# values compared, or the first disagreement (exit 1).
outputs_agree() {
	awk '
	function num(v) { return v ~ /^[-+]?[0-9]+(\.[0-9]+)?$/ }
	NR == FNR { if (!($1 in shown)) order[++n] = $1; shown[$1] = $2; next }
	{ got[$1] = $2 }
	END {
		if (!n) { print "the display shows nothing"; exit 1 }
		for (i = 1; i <= n; i++) {
			k = order[i]; v = shown[k]
			if (!(k in got)) { print k ": shown " v ", not written"; exit 1 }
			if (!num(v) || !num(got[k])) {
				if (v != got[k]) { print k ": shown " v ", written " got[k]; exit 1 }
				continue
			}
			d = index(v, ".") ? length(v) - index(v, ".") : 0
			if ((got[k] - v) ^ 2 > (0.5 * 10 ^ -d + 1e-9) ^ 2) {
				print k ": shown " v ", written " got[k]; exit 1
			}
		}
		print n
	}' "$1" "$2"
}

# Every row of TSV file $1 has the header's number of fields, none empty.
tsv_parses() {
	awk -F'\t' 'NR == 1 { nf = NF } NF != nf { exit 1 }
		{ for (i = 1; i <= NF; i++) if ($i == "") exit 1 } END { exit NR < 2 }' "$1"
}

# One test's verdict: $1 what, $2 display keys, $3 file keys, $4 a parse
# failure already found (non-empty).
outputs_result() {
	local what=$1 bad=$4 n
	if [ -z "$bad" ] && n=$(outputs_agree "$2" "$3"); then
		result 0 "$what: parses and agrees with the display ($n values)"
	else
		result 1 "$what: ${bad:-$n} (keys: $2, $3)"
	fi
}

# list --tsv names the governors, tables and scenarios that list shows.
outputs_list() {
	local bin=$1 dir=$2 bad=''
	"$bin" list "${data_args[@]}" > "$dir/list.txt"
	"$bin" list --tsv "${data_args[@]}" > "$dir/list.tsv"
	awk -F'\t' '($1 == "governor" && NF == 4) || ($1 == "platform" && NF == 3) ||
		($1 == "scenario" && NF == 4) { next } { exit 1 }' "$dir/list.tsv" ||
		bad="a row of list.tsv is not governor/platform/scenario with its fields"
	awk '/^[a-z]+:$/ { part = $1; next }
		part == "governors:" { print "governor." $1, $2 }
		part == "platforms:" { print "platform." $1, "-" }
		part == "scenarios:" { print "scenario." $2, $1 "/" $7 }' \
		"$dir/list.txt" > "$dir/list.shown"
	awk -F'\t' '$1 == "governor" { print "governor." $2, $3 }
		$1 == "platform" { print "platform." $2, "-" }
		$1 == "scenario" { print "scenario." $2, $3 "/" $4 }' \
		"$dir/list.tsv" > "$dir/list.written"
	# Nothing more either: the same items both ways.
	[ "$(wc -l < "$dir/list.tsv")" = "$(wc -l < "$dir/list.shown")" ] ||
		bad=${bad:-"list --tsv has $(wc -l < "$dir/list.tsv") rows, list shows $(wc -l < "$dir/list.shown") items"}
	outputs_result "list --tsv" "$dir/list.shown" "$dir/list.written" "$bad"
}

# run --json: the table and --per-state of the same run.
outputs_run() {
	local bin=$1 dir=$2 bad=''
	"$bin" run "${data_args[@]}" --scenario s3-pingpong-6cpu-w10 --platform rk3399 \
		--per-state --json "$dir/run.json" > "$dir/run.txt"
	python3 - "$dir/run.json" > "$dir/run.written" <<'PY' || bad="run.json does not parse as the lab's JSON"
import json, sys
d = json.load(open(sys.argv[1]))
for key in ("scenario", "platform", "hz", "cpus", "duration_s", "closed"):
    print("run." + key, d[key])
for g in d["governors"]:
    for key, v in g.items():
        if key != "states":
            print(g["label"] + "." + key, "-" if v is None else v)
    for s in g["states"]:
        for key in ("usage", "time_us", "above", "below"):
            print("%s.%d.%s" % (g["label"], s["index"], key), s[key])
PY
	awk -F' *[|] *' '/^[|] s3-/ {
			split($9, lat, " / ")
			print $3 ".energy_pct", $4; print $3 ".work_pct", $5
			print $3 ".miss_pct", $6; print $3 ".above_pct", $7
			print $3 ".below_pct", $8; print $3 ".lat_mean_us", lat[1]
			print $3 ".lat_p99_us", lat[2]
		}
		/^s3-/ { split($0, w, " "); print "run.scenario", w[1]; print "run.platform", w[3] }
		/ decisions, / {
			n = split($0, part, "; ")
			for (i = 1; i <= n; i++) {
				split(part[i], w, "[: ]+")
				print w[1] ".decisions", w[2]
			}
		}
		/^per state/ { on = 1; next }
		on && $0 ~ /^  [^ ]/ && $0 !~ /governor/ {
			split($0, w, " +")
			print w[2] "." w[3] ".usage", w[5]; print w[2] "." w[3] ".time_us", w[6]
			print w[2] "." w[3] ".above", w[7]; print w[2] "." w[3] ".below", w[8]
		}' "$dir/run.txt" > "$dir/run.shown"
	outputs_result "run --json" "$dir/run.shown" "$dir/run.written" "$bad"
}

# targets --tsv: each target's values and verdict as the table shows them.
outputs_targets() {
	local bin=$1 dir=$2 bad=''
	"$bin" targets "${data_args[@]}" --scenario S4 --platform rk3399 \
		--tsv "$dir/targets.tsv" > "$dir/targets.txt" || true
	tsv_parses "$dir/targets.tsv" || bad="targets.tsv: rows without the header's fields"
	awk -F' *[|] *' '/^[|] (S[0-9]|P|X)[*]? [|]/ {
			fam = $2; sub(/[*]$/, "", fam)
			split($(NF - 3), e, " "); split($(NF - 2), m, " "); split($(NF - 1), w, " ")
			print fam ".energy.ours", e[1]; print fam ".energy.bound", e[3]
			print fam ".energy.verdict", e[4]
			print fam ".miss.ours", m[1]; print fam ".miss.bound", m[3]
			print fam ".miss.verdict", m[4]
			gsub(/[()]/, "", w[3])
			print fam ".worst-table.pct", w[1]; print fam ".worst-table.table", w[3]
			print fam ".worst-table.verdict", w[4]
		}
		/^Mean over the/ {
			v = $0; sub(/.*median energy: /, "", v); sub(/ .*/, "", v)
			match($0, /[*][*][A-Z]+[*][*]/)
			print "all.mean-energy.ours", v
			print "all.mean-energy.verdict", substr($0, RSTART + 2, RLENGTH - 4)
		}' "$dir/targets.txt" > "$dir/targets.shown"
	awk -F'\t' 'NR > 1 {
			k = $1 "." $3; v = toupper($8)
			if ($3 == "worst-table") {
				print k ".pct", sprintf("%+.6f", 100 * ($4 / $6 - 1)); print k ".table", $9
			} else if ($3 == "mean-energy") {
				print k ".ours", $4
			} else {
				print k ".ours", $4; print k ".bound", $7
			}
			print k ".verdict", v
		}' "$dir/targets.tsv" > "$dir/targets.written"
	outputs_result "targets --tsv" "$dir/targets.shown" "$dir/targets.written" "$bad"
}

# overhead --tsv: the table of the same measurement.
outputs_overhead() {
	local bin=$1 dir=$2 bad=''
	"$bin" overhead "${data_args[@]}" --gov teo --gov "$3" --rounds 1 \
		--tsv "$dir/overhead.tsv" > "$dir/overhead.txt"
	tsv_parses "$dir/overhead.tsv" || bad="overhead.tsv: rows without the header's fields"
	awk -F' *[|] *' '/^[|] [a-z]/ && $2 != "governor" {
			sub(/^x/, "", $5)
			print $2 ".calls", $3; print $2 ".ns_per_call", $4
			print $2 ".vs_mainline_teo", $5; print $2 ".playback_faithful", tolower($6)
			print $2 ".sleep_length_calls_per_select", $7
			print $2 ".ns_with_sleep_length", $8
		}
		/^loop and playback cost alone/ { split($0, w, " "); print "loop_ns_per_call", w[7] }' \
		"$dir/overhead.txt" > "$dir/overhead.shown"
	awk -F'\t' 'NR == 1 { for (i = 2; i <= NF; i++) col[i] = $i; next }
		{ for (i = 2; i < NF; i++) print $1 "." col[i], $i; print "loop_ns_per_call", $NF }' \
		"$dir/overhead.tsv" > "$dir/overhead.written"
	outputs_result "overhead --tsv" "$dir/overhead.shown" "$dir/overhead.written" "$bad"
}

# report: families.tsv against the report's tables of the same run: the
# per-family table of each concern (cells "A / B" for two measures).
outputs_report() {
	local bin=$1 dir=$2 bad=''
	rm -rf "$dir/report"
	"$bin" report "${data_args[@]}" --scenario S3 --platform dt-mt8195-big --gates "$GATES" \
		--out "$dir/report" > /dev/null
	tsv_parses "$dir/report/families.tsv" || bad="families.tsv: rows without the header's fields"
	awk -F' *[|] *' '
		/^### Throughput/ { a = "work_pct_best_baseline"; b = "work_pct_oracle"; next }
		/^### Added wakeup latency/ { a = "lat_mean_us"; b = "lat_p99_us"; next }
		/^### Energy per unit/ { a = "energy_pct"; b = ""; next }
		/^### Miss ratio/ { a = "miss_pct"; b = ""; next }
		/^##/ { a = "" }
		a && /^[|] family/ { for (i = 3; i < NF; i++) gov[i] = $i; next }
		a && /^[|] (S[0-9]|P|X)[*]? [|]/ {
			fam = $2; sub(/[*]$/, "", fam)
			for (i = 3; i < NF; i++) {
				split($i, v, " / ")
				print fam "." gov[i] "." a, v[1]
				if (b) print fam "." gov[i] "." b, v[2]
			}
		}' "$dir/report/report.md" > "$dir/families.shown"
	awk -F'\t' 'NR == 1 { for (i = 1; i <= NF; i++) col[i] = $i; next }
		{ for (i = 5; i <= NF; i++) print $1 "." $3 "." col[i], $i }' \
		"$dir/report/families.tsv" > "$dir/families.written"
	outputs_result "report: families.tsv" "$dir/families.shown" "$dir/families.written" "$bad"

	# lockins.tsv: the same runs as the report's list, each governor's
	# work in % of the most the oracle or a reference did.
	bad=''
	tsv_parses "$dir/report/lockins.tsv" || bad="lockins.tsv: no rows, or rows without the header's fields"
	awk -F' *[|] *' '/^Shared lock-ins: / { split($0, w, " "); print "lockins", w[3] }
		/^[|] scenario [|] table/ { for (i = 4; i < NF; i++) gov[i] = $i; on = 1; next }
		on && /^[|] s/ { for (i = 4; i < NF; i++) print $2 "." $3 "." gov[i], $i }' \
		"$dir/report/report.md" > "$dir/lockins.shown"
	awk -F'\t' 'NR > 1 { k = $1 "." $2; if (!(k in best)) runs++
			items[k "." $3] = $5
			if (($4 == "oracle" || $4 == "reference") && $5 > best[k]) best[k] = $5 }
		END { print "lockins", runs
			for (k in items) { split(k, w, "."); r = w[1] "." w[2]
				print k, sprintf("%.6f", 100 * items[k] / best[r]) } }' \
		"$dir/report/lockins.tsv" > "$dir/lockins.written"
	outputs_result "report: lockins.tsv" "$dir/lockins.shown" "$dir/lockins.written" "$bad"
}

# diff --out of a chain: one row per pair, each the row of that pair's
# own differential, and the display's lines say what the rows say.
outputs_diff() {
	local bin=$1 dir=$2 other=$3 bad=''
	local one=(--scenario s3-pingpong-6cpu-w10 --platform rk3399 --decisions 20000)
	"$bin" diff "${data_args[@]}" "${one[@]}" --diff "teo,$other,teo" \
		--out "$dir/chain.tsv" > "$dir/chain.txt"
	"$bin" diff "${data_args[@]}" "${one[@]}" --diff "teo,$other" \
		--out "$dir/pair1.tsv" > /dev/null
	"$bin" diff "${data_args[@]}" "${one[@]}" --diff "$other,teo" \
		--out "$dir/pair2.tsv" > /dev/null
	tsv_parses "$dir/chain.tsv" || bad="chain.tsv: rows without the header's fields"
	[ "$(tail -n +2 "$dir/chain.tsv")" = "$(tail -n +2 "$dir/pair1.tsv"; tail -n +2 "$dir/pair2.tsv")" ] ||
		bad=${bad:-"the chain's rows are not the differentials of its pairs"}
	awk '/^differential [^ ]+ vs [^ ]+: / { k = $2 "-" $4; sub(/:$/, "", k)
			print k ".runs", $5; print k ".decisions", $10; print k ".divergent", $13 }
		/^differential [^ ]+ vs [^ ]+ on random tables: / { k = $2 "-" $4
			print k ".random_cases", $8; print k ".random_decisions", $10
			print k ".random_divergent", $13 }' "$dir/chain.txt" > "$dir/chain.shown"
	awk -F'\t' -v chain="teo,$other,teo" 'BEGIN { split(chain, g, ",") }
		NR == 1 { for (i = 1; i <= NF; i++) col[i] = $i; next }
		{ for (i = 1; i <= NF; i++) print g[NR - 1] "-" g[NR] "." col[i], $i }' \
		"$dir/chain.tsv" > "$dir/chain.written"
	outputs_result "diff --out of a chain" "$dir/chain.shown" "$dir/chain.written" "$bad"
}

# $1: the check's build folder, $2: its output folder.
output_tests() {
	local bin=$1/idle-replay dir=$2/outputs main
	mkdir -p "$dir"
	# Ours and a baseline teo, the mainline tree's if there is one.
	main=$("$bin" list --tsv | awk -F'\t' '$1 == "governor" && $2 ~ /^teo-/ &&
		($3 == "mainline" || $3 == "base") { t[$3] = $2 }
		END { print ("mainline" in t) ? t["mainline"] : t["base"] }')
	outputs_list "$bin" "$dir"
	outputs_run "$bin" "$dir"
	outputs_targets "$bin" "$dir"
	outputs_overhead "$bin" "$dir" "$main"
	outputs_diff "$bin" "$dir" "$main"
	outputs_report "$bin" "$dir"
}
