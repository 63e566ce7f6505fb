#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# A/B workload benchmark of cpuidle governors on this machine (bare metal,
# or inside the test VM of scripts/vm.sh).
set -eu
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$(dirname "$0")/lib.sh"

CPU_SYS=/sys/devices/system/cpu
CPUIDLE_SYS=$CPU_SYS/cpuidle
POWERCAP_SYS=/sys/class/powercap
ALL_WORKLOADS="fio timer-io hackbench cyclictest idle"
DEFAULT_WORKLOADS="fio timer-io hackbench cyclictest"
hackbench_default_args="-g 4 -l 500"

usage() {
	cat <<EOF2
usage: $teo_prog [options]
       $teo_prog --report DIR
       $teo_prog --check-args [options]

Run workloads N times under each named cpuidle governor, switching through
$CPUIDLE_SYS/current_governor, and record per run the workload's
metrics and the per-state deltas of usage, time, above and below summed
over all CPUs (and the package energy where the machine has RAPL).  Runs
alternate between the governors (teo, menu, teo, menu ...).  Then print a
summary per workload and governor: the runs sorted, their median, the
latency percentiles, the idle-miss ratio (above + below) / usage, the
share of idle time per state, and whether the difference between the
governors exceeds the run-to-run spread; plot the idle time per state
(residency.svg/.png).

Workloads:
  fio         fio randread 4k, psync, direct, iodepth=1 on --fio-dev for
              --fio-runtime s: intercept-heavy (the device's interrupts are
              not timers the governor can see); metric: IOPS, with the
              completion latency p50/p99 (fio --output-format=json, jq)
  timer-io    the same fio job on a null_blk device (configfs) whose
              completions come from an hrtimer after --timer-delay-us
              (irqmode=2): timer-driven IO; metric: IOPS, and the deepest
              state's share of idle time
  hackbench   hackbench $hackbench_default_args; metric: seconds
  cyclictest  cyclictest --laptop (the PM QoS limit stays off), one thread
              per CPU, interval 1000 us, --cyclictest-runtime s, with
              --json and a 1 us histogram; metric: average wakeup latency
              (us), with p99, p99.9 and the maximum
  idle        nothing runs for --idle-runtime s (not in the default set):
              metric: the share of idle time in the shallowest halting
              state (the "idle trap": WFI on Arm tables, C1 on Intel ones)

Options:
  -g, --governors LIST     comma-separated governors (default teo,menu)
  -n, --runs N             runs per governor and workload (default 3)
  -w, --workloads LIST     comma-separated, from: ${ALL_WORKLOADS// /,}
                           (default: ${DEFAULT_WORKLOADS// /,})
  --fio-dev DEV            block device for fio: read only, never written
                           (default /dev/vda inside the VM; required on bare
                           metal)
  --fio-runtime S          seconds per fio run (default 20)
  --timer-delay-us US      null_blk completion delay (default 50000)
  --timer-runtime S        seconds per timer-io run (default 5)
  --hackbench-args ARGS    (default "$hackbench_default_args")
  --cyclictest-runtime S   seconds per cyclictest run (default 10)
  --idle-runtime S         seconds per idle run (default 60)
  --ceiling-states LIST    in the test VM only: after each round of fio
                           runs, reload cpuidle-emu with this state list
                           (e.g. 1/1: one state with no exit-latency cost)
                           and run fio once more as the "ceiling"; the
                           summary gives each governor's IOPS against it
  -o, --out DIR            results folder (default \$TEO_CACHE/bench/DATE)
  --no-plot                skip the plot (make it later with --report)
  --no-report              skip the summary and the plot
  --report DIR             only summarize and plot the runs in DIR
  --check-args             only check the options (used by vm-bench.sh on
                           the host before it builds anything)
  --help                   show this text

Needs root and a cpuidle driver.  On bare metal it holds the machine-wide
build lock while it measures, so that no kernel build shares the machine;
it changes only the current governor (restored at exit, also on Ctrl-C),
and for timer-io creates a null_blk device (removed at exit).  Package
energy comes from RAPL (/sys/class/powercap) or, failing that, turbostat;
the summary says when neither is there.
Files in the results folder: setup.txt, runs.tsv (one line per run),
summary.txt, residency.dat, residency.svg and residency.png.
EOF2
}

# --- idle statistics ------------------------------------------------------

# Print "state usage time_us above below" per state, summed over CPUs.
idle_snapshot() {
	grep -H . "$CPU_SYS"/cpu[0-9]*/cpuidle/state[0-9]*/usage \
		"$CPU_SYS"/cpu[0-9]*/cpuidle/state[0-9]*/time \
		"$CPU_SYS"/cpu[0-9]*/cpuidle/state[0-9]*/above \
		"$CPU_SYS"/cpu[0-9]*/cpuidle/state[0-9]*/below 2>/dev/null |
	awk -F: '{
		n = split($1, p, "/")
		st = substr(p[n - 1], 6) + 0
		v[st, p[n]] += $2
		if (st + 1 > ns) ns = st + 1
	}
	END {
		for (s = 0; s < ns; s++)
			print s, v[s, "usage"] + 0, v[s, "time"] + 0,
			      v[s, "above"] + 0, v[s, "below"] + 0
	}'
}

state_names() {
	cat "$CPU_SYS"/cpu0/cpuidle/state[0-9]*/name 2>/dev/null | tr '\n' ' '
}

# --- package energy ---------------------------------------------------------

# RAPL package domains under powercap ("package-N" zones), if any.
rapl_zones() {
	local z
	for z in "$POWERCAP_SYS"/intel-rapl:[0-9]*; do
		[ -r "$z/energy_uj" ] || continue
		case $(cat "$z/name" 2>/dev/null) in package-*) printf '%s\n' "$z" ;; esac
	done
}

# Decide how energy is measured: "rapl", "turbostat" or "none" (with the
# reason in energy_why).
energy_setup() {
	energy_how=none
	if [ -n "${TEO_IN_VM:-}" ]; then
		energy_why="not measured: inside the test VM (the emulated states save nothing)"
	elif [ -n "$(rapl_zones)" ]; then
		energy_how=rapl
		energy_why="package energy from RAPL ($(rapl_zones | xargs -n1 basename | paste -sd' '))"
	elif command -v turbostat >/dev/null 2>&1 &&
	     turbostat --quiet --Summary --Joules --show Pkg_J --num_iterations 1 \
		--interval 0.2 2>/dev/null | grep -q Pkg_J; then
		energy_how=turbostat
		energy_why="package energy from turbostat (Pkg_J)"
	else
		energy_why="not measured: no RAPL package domain in $POWERCAP_SYS and turbostat (linux-cpupower) found no package energy counter on this machine"
	fi
}

# Sum of the package energy counters in uJ.
rapl_read() {
	local z total=0
	for z in $(rapl_zones); do
		total=$((total + $(cat "$z/energy_uj")))
	done
	echo "$total"
}

# Energy in J between two rapl_read values, allowing one wrap per zone.
rapl_joules() {
	local before=$1 after=$2 range=0 z
	for z in $(rapl_zones); do
		range=$((range + $(cat "$z/max_energy_range_uj" 2>/dev/null || echo 0)))
	done
	[ "$after" -ge "$before" ] || after=$((after + range))
	awk -v d=$((after - before)) 'BEGIN { printf "%.1f\n", d / 1e6 }'
}

energy_start() {
	case $energy_how in
	rapl) energy_before=$(rapl_read) ;;
	turbostat)
		spawn turbostat --quiet --Summary --Joules --show Pkg_J --interval 1 \
			--out "$out/turbostat.tmp"
		energy_pid=$teo_last
		;;
	esac
}

# Print the energy of the run in J, or nothing.
energy_stop() {
	case $energy_how in
	rapl) rapl_joules "$energy_before" "$(rapl_read)" ;;
	turbostat)
		kill -INT "$energy_pid" 2>/dev/null || true
		wait "$energy_pid" 2>/dev/null || true
		forget_child "$energy_pid"
		awk '$1 ~ /^[0-9.]+$/ { j += $1 } END { printf "%.1f\n", j }' \
			"$out/turbostat.tmp"
		rm -f "$out/turbostat.tmp"
		;;
	esac
}

# --- workloads -------------------------------------------------------------

# fio randread on $1 for $2 s; print "IOPS p50=US,p99=US" (completion
# latency percentiles from fio's JSON output).
fio_run() {
	local dev=$1 runtime=$2 json
	json=$(fio --output-format=json --readonly --time_based --name=teobench \
		--filename="$dev" --runtime="$runtime" --rw=randread --bs=4k \
		--ioengine=psync --iodepth=1 --direct=1 2>/dev/null) ||
		die "fio on $dev failed"
	printf '%s\n' "$json" | jq -er '.jobs[0] |
		if .error != 0 then error("fio error \(.error)") else . end |
		.read | "\(.iops * 10 | round / 10) p50=\(.clat_ns.percentile["50.000000"] / 100 | round / 10),p99=\(.clat_ns.percentile["99.000000"] / 100 | round / 10)"' ||
		die "fio on $dev: no result or an error in its JSON output"
}

nullb_dir=
nullb_dev=

# Create a timer-completion null_blk device through configfs.
nullb_setup() {
	local cfg=/sys/kernel/config/nullb
	if [ ! -d "$cfg" ]; then
		modprobe null_blk nr_devices=0 2>/dev/null || true
		if [ ! -d /sys/kernel/config/nullb ] && [ -d /sys/kernel/config ]; then
			mount -t configfs configfs /sys/kernel/config 2>/dev/null || true
		fi
	fi
	[ -d "$cfg" ] || return 1
	nullb_dir=$cfg/teobench$$
	mkdir "$nullb_dir" || return 1
	echo 2 > "$nullb_dir/irqmode"
	echo $((timer_delay_us * 1000)) > "$nullb_dir/completion_nsec"
	echo 1024 > "$nullb_dir/size"
	echo 1 > "$nullb_dir/power"
	# Newer kernels name the disk after the configfs item, older ones
	# nullb<index>.
	for _ in 1 2 3 4 5 6 7 8 9 10; do
		for nullb_dev in "/dev/${nullb_dir##*/}" "/dev/nullb$(cat "$nullb_dir/index")"; do
			[ -b "$nullb_dev" ] && return 0
		done
		sleep 0.2
	done
	return 1
}

nullb_teardown() {
	[ -n "$nullb_dir" ] && [ -d "$nullb_dir" ] || return 0
	echo 0 > "$nullb_dir/power" 2>/dev/null || true
	rmdir "$nullb_dir" 2>/dev/null || true
	nullb_dir=
}

hackbench_time() {
	local out
	# shellcheck disable=SC2086 # the arguments split on purpose
	out=$(hackbench $hackbench_args) || die "hackbench $hackbench_args failed"
	printf '%s\n' "$out" | sed -n 's/^Time: *//p' | tail -n 1
}

# cyclictest with a 1 us histogram up to 10 ms; print "AVG p99=US,p99.9=US,
# max=US" over all threads (a percentile in the overflow prints as >10000).
cyclictest_run() {
	local json=$out/cyclictest.json log
	log=$(cyclictest --laptop -q -m -S -p 80 -i 1000 -h 10000 \
		-D "${cyclictest_runtime}s" --json="$json" 2>&1 >/dev/null) ||
		die "cyclictest failed: $log"
	jq -er '[.thread[]] as $t |
		($t | map(.cycles) | add) as $n |
		($t | map(.avg * .cycles) | add / $n) as $avg |
		($t | map(.max) | max) as $max |
		($t | map(.histogram | to_entries[] | {us: (.key | tonumber), c: .value}) |
			group_by(.us) | map({us: .[0].us, c: (map(.c) | add)}) | sort_by(.us)) as $h |
		def pct(p): (p * $n / 100) as $want |
			reduce $h[] as $b ({sum: 0, at: null};
				if .at == null then .sum += $b.c | (if .sum >= $want then .at = $b.us else . end) else . end) |
			if .at == null then ">10000" else .at end;
		"\($avg * 10 | round / 10) p99=\(pct(99)),p99.9=\(pct(99.9)),max=\($max)"' \
		"$json" || die "no latency in cyclictest's JSON output ($json)"
	rm -f "$json"
}

# Run workload $1 once; print "metric extra".
run_workload() {
	case $1 in
	fio) fio_run "$fio_dev" "$fio_runtime" ;;
	timer-io) fio_run "$nullb_dev" "$timer_runtime" ;;
	hackbench) echo "$(hackbench_time) -" ;;
	cyclictest) cyclictest_run ;;
	idle) sleep "$idle_runtime"; echo "idle -" ;;
	esac
}

metric_unit() {
	case $1 in
	fio|timer-io) echo "IOPS (higher is better)" ;;
	hackbench) echo "s (lower is better)" ;;
	cyclictest) echo "avg us (lower is better)" ;;
	idle) echo "% of idle time in $shallow_name (lower is better)" ;;
	esac
}

# The idle workload's metric from the run's state deltas ($1, tab
# separated): the shallowest halting state's share of idle time, and its
# entries per second.
idle_metric() {
	printf '%s\n' "$1" | awk -v s="$shallow_index" -v t="$idle_runtime" '{
		n = split($0, f, "\t")
		for (i = 0; i < (n - 1) / 4; i++) total += f[3 + 4 * i]
		printf "%.2f entries/s=%.1f\n", total ? 100 * f[3 + 4 * s] / total : 0,
			f[2 + 4 * s] / t
	}'
}

set_governor() {
	if ! echo "$1" > "$CPUIDLE_SYS/current_governor" 2>/dev/null ||
	   [ "$(cat "$CPUIDLE_SYS/current_governor")" != "$1" ]; then
		die "could not switch to governor $1"
	fi
}

# Reload the emulated idle driver with module arguments $1 (VM only).
emu_reload() {
	local args=$1
	busybox rmmod cpuidle_emu || die "cannot unload cpuidle_emu"
	# shellcheck disable=SC2086 # the module arguments are separate words
	busybox insmod "$TEO_EMU_KO" $args || die "cannot load cpuidle-emu with $args"
	emu_current=$args
}

# --- report ----------------------------------------------------------------

# Summary from runs.tsv in $1 (also writes residency.dat).
summarize() {
	local dir=$1
	awk -F'\t' -v datfile="$dir/residency.dat" '
	NR == 1 {
		for (i = 7; i <= NF; i++) {
			if ($i ~ /_usage$/) {
				name = $i; sub(/_usage$/, "", name)
				names[ns++] = name
			}
		}
		next
	}
	{
		key = $1 SUBSEP $2
		if (!(key in seen)) { seen[key] = 1; order[nk++] = key }
		if (!($1 in wseen)) { wseen[$1] = 1; worder[nw++] = $1 }
		if ($2 != "ceiling") unit[$1] = $5
		vals[key] = vals[key] " " $4
		if ($6 != "-" && $6 != "") {
			nx = split($6, kv, ",")
			for (i = 1; i <= nx; i++) {
				split(kv[i], p, "=")
				if (!((wl_k = $1 SUBSEP p[1]) in kseen)) {
					kseen[wl_k] = 1; korder[$1] = korder[$1] " " p[1]
				}
				extra[key, p[1]] = extra[key, p[1]] " " p[2]
			}
		}
		for (s = 0; s < ns; s++) {
			c = 7 + 4 * s
			usage[key, s] += $c; tm[key, s] += $(c + 1)
			above[key, s] += $(c + 2); below[key, s] += $(c + 3)
		}
	}
	function sorted(str,    a, n, i, j, t, out) {
		n = split(str, a, " ")
		for (i = 1; i <= n; i++)
			for (j = i + 1; j <= n; j++)
				if (a[j] + 0 < a[i] + 0) { t = a[i]; a[i] = a[j]; a[j] = t }
		out = ""
		for (i = 1; i <= n; i++) out = out (i > 1 ? " " : "") a[i]
		return out
	}
	function median(str,    a, n) {
		n = split(sorted(str), a, " ")
		if (!n) return ""
		if (a[n] ~ /^>/ || a[(n + 1) / 2] ~ /^>/) return a[int((n + 1) / 2)]
		return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
	}
	# Ways to order n1 values of A among n2 of B with U = u.
	function ways(n1, n2, u,    k) {
		if (u < 0) return 0
		if (n1 == 0 || n2 == 0) return u == 0
		k = n1 "," n2 "," u
		if (!(k in memo))
			memo[k] = ways(n1 - 1, n2, u - n2) + ways(n1, n2 - 1, u)
		return memo[k]
	}
	# Mann-Whitney U of A over B and its exact two-sided p (ties count
	# one half; with ties the p is approximate).
	function mwu(astr, bstr,    a, b, n1, n2, i, j, u, lo, hi, tot, x, w) {
		n1 = split(astr, a, " "); n2 = split(bstr, b, " ")
		u = 0
		for (i = 1; i <= n1; i++)
			for (j = 1; j <= n2; j++)
				u += (a[i] + 0 > b[j] + 0) ? 1 : (a[i] + 0 == b[j] + 0) ? 0.5 : 0
		tot = 0; lo = 0; hi = 0
		for (x = 0; x <= n1 * n2; x++) {
			w = ways(n1, n2, x); tot += w
			if (x <= u) lo += w
			if (x >= u) hi += w
		}
		mwu_u = u; mwu_n1 = n1; mwu_n2 = n2
		mwu_p = 2 * (lo < hi ? lo : hi) / tot
		if (mwu_p > 1) mwu_p = 1
		return u
	}
	function verdict(wl, g0, g, higher,    ka, kb, m0, m1, d, u, word) {
		ka = wl SUBSEP g0; kb = wl SUBSEP g
		m0 = median(vals[ka]); m1 = median(vals[kb])
		u = mwu(vals[kb], vals[ka])
		d = m0 ? 100 * (m1 - m0) / m0 : 0
		if (mwu_n1 < 2 || mwu_n2 < 2)
			word = "one run each: no spread to compare against"
		else if (u == 0 || u == mwu_n1 * mwu_n2)
			word = sprintf("the runs do not overlap: %s is %s beyond the run-to-run spread", g,
				((u > 0) == higher) ? "better," : "worse,")
		else
			word = "the runs overlap: within the run-to-run noise"
		printf "  %s vs %s: median %+.1f %%; %s (Mann-Whitney U=%g of %d, exact two-sided p=%.2f, %d+%d runs)\n",
			g, g0, d, word, u, mwu_n1 * mwu_n2, mwu_p, mwu_n1, mwu_n2
	}
	END {
		printf "case"  > datfile
		for (s = 0; s < ns; s++) printf " %s", names[s] > datfile
		printf "\n" > datfile
		for (w = 0; w < nw; w++) {
			wl = worder[w]
			higher = unit[wl] ~ /higher is better/
			printf "\n%s: %s\n", wl, unit[wl]
			printf "  %-8s %-32s %9s %9s %7s %7s %6s %6s  %s\n", "governor",
				"runs (sorted)", "median", "entries", "above%",
				"below%", "miss", "deep%", "idle time per state (%)"
			g0 = ""; ng = 0
			for (k = 0; k < nk; k++) {
				split(order[k], kk, SUBSEP)
				if (kk[1] != wl) continue
				key = order[k]; g = kk[2]
				if (g != "ceiling") { if (g0 == "") g0 = g; else govs[ng++] = g }
				u = 0; a = 0; b = 0; t = 0
				for (s = 0; s < ns; s++) {
					u += usage[key, s]; a += above[key, s]
					b += below[key, s]; t += tm[key, s]
				}
				res = ""
				if (g != "ceiling") printf "%s/%s", wl, g > datfile
				for (s = 0; s < ns; s++) {
					share = t ? 100 * tm[key, s] / t : 0
					res = res sprintf(" %s %.1f", names[s], share)
					if (g != "ceiling") printf " %.2f", share > datfile
				}
				if (g != "ceiling") printf "\n" > datfile
				deep = t ? 100 * tm[key, ns - 1] / t : 0
				if (g == "ceiling")
					printf "  %-8s %-32s %9s  (the one-state table: no idle statistics)\n",
						g, sorted(vals[key]), median(vals[key])
				else
					printf "  %-8s %-32s %9s %9d %6.2f%% %6.2f%% %6.3f %5.1f%% %s\n",
						g, sorted(vals[key]), median(vals[key]), u,
						u ? 100 * a / u : 0, u ? 100 * b / u : 0,
						u ? (a + b) / u : 0, deep, res
				nx = split(korder[wl], kn, " ")
				line = ""
				for (i = 1; i <= nx; i++)
					if ((key SUBSEP kn[i]) in extra)
						line = line sprintf(" %s %s", kn[i], median(extra[key, kn[i]]))
				if (line != "")
					printf "  %-8s median of runs:%s\n", "", line
			}
			for (i = 0; i < ng; i++) verdict(wl, g0, govs[i], higher)
			if ((wl SUBSEP "ceiling") in seen) {
				c = median(vals[wl SUBSEP "ceiling"])
				line = ""
				if (g0 != "") line = sprintf(" %s %.2fx", g0, c ? median(vals[wl SUBSEP g0]) / c : 0)
				for (i = 0; i < ng; i++)
					line = line sprintf(", %s %.2fx", govs[i], c ? median(vals[wl SUBSEP govs[i]]) / c : 0)
				printf "  against the ceiling (median %s):%s\n", c, line
			}
			if (wl == "timer-io" || wl == "idle") {
				line = ""
				for (k = 0; k < nk; k++) {
					split(order[k], kk, SUBSEP)
					if (kk[1] != wl || kk[2] == "ceiling") continue
					t = 0
					for (s = 0; s < ns; s++) t += tm[order[k], s]
					line = line sprintf(" %s %.1f %%", kk[2], t ? 100 * tm[order[k], ns - 1] / t : 0)
				}
				printf "  deepest state (%s) share of idle time:%s\n", names[ns - 1], line
			}
			delete govs
		}
		printf "\nmedian = of the runs; entries, above%%, below%%, miss and the idle time\n"
		printf "per state are over all runs: above = too deep, below = too shallow, as\n"
		printf "the kernel counts them; miss = (above + below) / entries; deep%% = the\n"
		printf "deepest state'"'"'s share of idle time.  \"The runs do not overlap\" means\n"
		printf "every run of one governor beat every run of the other: with 3+3 runs\n"
		printf "that is the strongest result possible (p=0.10); use more runs (-n 5:\n"
		printf "p=0.008) before calling a small difference real.\n"
	}' "$dir/runs.tsv"
}

plot() {
	local dir=$1 ncol
	command -v gnuplot >/dev/null 2>&1 || { note "no gnuplot: no plot"; return 0; }
	ncol=$(head -n 1 "$dir/residency.dat" | awk '{ print NF }')
	cat > "$dir/residency.gp" <<EOF2
set style data histograms
set style histogram rowstacked
set style fill solid 0.8 border -1
set boxwidth 0.7
set yrange [0:100]
set ylabel "share of idle time (%)"
set title "Idle time per state, per workload and governor"
set xtics rotate by -30 noenhanced
set key outside right noenhanced
set grid ytics
plot for [i=2:$ncol] "$dir/residency.dat" using i:xtic(1) title columnheader(i)
EOF2
	gnuplot -e "set terminal svg size 960,540; set output '$dir/residency.svg'" \
		"$dir/residency.gp" 2>/dev/null || note "gnuplot (svg) failed"
	gnuplot -e "set terminal png size 960,540; set output '$dir/residency.png'" \
		"$dir/residency.gp" 2>/dev/null || note "gnuplot (png) failed"
}

report() {
	local dir=$1
	[ -d "$dir" ] || usage_error "--report: '$dir' is not a folder"
	[ -f "$dir/runs.tsv" ] || die "no runs.tsv in $dir"
	summarize "$dir" > "$dir/summary.txt"
	[ ! -f "$dir/setup.txt" ] || grep '^energy:' "$dir/setup.txt" || true
	cat "$dir/summary.txt"
	[ "$do_plot" = 0 ] || plot "$dir"
	[ ! -f "$dir/residency.svg" ] || note "plot: $dir/residency.svg"
}

# --- main ------------------------------------------------------------------

governors=teo,menu
runs=3
workloads=${DEFAULT_WORKLOADS// /,}
fio_dev=
fio_runtime=20
timer_delay_us=50000
timer_runtime=5
hackbench_args=$hackbench_default_args
cyclictest_runtime=10
idle_runtime=60
ceiling_states=
out=
do_plot=1
do_report=1
report_dir=
check_only=0
orig_args=("$@")
while [ $# -gt 0 ]; do
	case $1 in
	-g|--governors|-n|--runs|-w|--workloads|--fio-dev|--fio-runtime|\
	--timer-delay-us|--timer-runtime|--hackbench-args|--cyclictest-runtime|\
	--idle-runtime|--ceiling-states|-o|--out|--report)
		[ $# -ge 2 ] || usage_error "$1 needs a value"
		case $1 in
		-g|--governors) governors=$2 ;;
		-n|--runs) runs=$2 ;;
		-w|--workloads) workloads=$2 ;;
		--fio-dev) fio_dev=$2 ;;
		--fio-runtime) fio_runtime=$2 ;;
		--timer-delay-us) timer_delay_us=$2 ;;
		--timer-runtime) timer_runtime=$2 ;;
		--hackbench-args) hackbench_args=$2 ;;
		--cyclictest-runtime) cyclictest_runtime=$2 ;;
		--idle-runtime) idle_runtime=$2 ;;
		--ceiling-states) ceiling_states=$2 ;;
		-o|--out) out=$2 ;;
		--report) report_dir=$2 ;;
		esac
		shift
		;;
	--no-plot) do_plot=0 ;;
	--no-report) do_report=0 ;;
	--check-args) check_only=1 ;;
	--help|-h) usage; exit 0 ;;
	*) usage_error "unknown argument '$1'" ;;
	esac
	shift
done

if [ -n "$report_dir" ]; then
	need_cmd awk
	report "$report_dir"
	exit 0
fi

# --- arguments, checked before anything changes ---------------------------
for opt in "--runs $runs" "--fio-runtime $fio_runtime" \
	"--timer-delay-us $timer_delay_us" "--timer-runtime $timer_runtime" \
	"--cyclictest-runtime $cyclictest_runtime" "--idle-runtime $idle_runtime"; do
	n=${opt#* }
	case $n in
	''|*[!0-9]*|0|00*) usage_error "${opt%% *}: '$n' is not a positive whole number" ;;
	esac
	[ "${#n}" -le 6 ] || usage_error "${opt%% *}: '$n' is too large"
done
[ -n "$workloads" ] || usage_error "--workloads: empty list"
for w in ${workloads//,/ }; do
	case " $ALL_WORKLOADS " in
	*" $w "*) ;;
	*) usage_error "unknown workload '$w'; known: $ALL_WORKLOADS" ;;
	esac
done
[ -n "$governors" ] || usage_error "--governors: empty list"
for g in ${governors//,/ }; do
	case $g in
	ceiling) usage_error "'ceiling' is the name of the --ceiling-states runs, not a governor" ;;
	*[!a-z0-9_-]*) usage_error "--governors: '$g' is not a governor name" ;;
	esac
done
[ -z "$ceiling_states" ] || check_states_list "$ceiling_states" --ceiling-states
case $hackbench_args in
*[!-a-zA-Z0-9\ =._]*) usage_error "--hackbench-args: '$hackbench_args' has characters hackbench options never have" ;;
esac
if [ -n "$fio_dev" ]; then
	case $fio_dev in /dev/*) ;; *) usage_error "--fio-dev: '$fio_dev' is not under /dev" ;; esac
fi
[ -z "$out" ] || need_writable_dir "$out" "--out $out"
[ "$check_only" = 0 ] || exit 0

# --- the machine -------------------------------------------------------------
[ "$(id -u)" -eq 0 ] || die "must be run as root (it switches governors through sysfs)"
[ -r "$CPUIDLE_SYS/available_governors" ] ||
	die "this kernel has no cpuidle (no $CPUIDLE_SYS/available_governors)"
available=$(cat "$CPUIDLE_SYS/available_governors")
for g in ${governors//,/ }; do
	case " $available " in
	*" $g "*) ;;
	*) die "unknown governor '$g'; this kernel has: $available" ;;
	esac
done
driver=$(cat "$CPUIDLE_SYS/current_driver" 2>/dev/null || echo none)
[ "$driver" != none ] ||
	die "no cpuidle driver on this machine (current_driver is none): nothing to compare; use scripts/vm-bench.sh"
if [ -n "$ceiling_states" ]; then
	if [ -z "${TEO_EMU_KO:-}" ] || [ "$driver" != cpuidle_emu ]; then
		die "--ceiling-states needs the emulated idle driver of the test VM (scripts/vm.sh sets TEO_EMU_KO)"
	fi
	need_cmd busybox
fi
case ",$workloads," in
*,fio,*|*,timer-io,*) need_cmd fio jq ;;
esac
case ",$workloads," in
*,fio,*)
	if [ -z "$fio_dev" ]; then
		[ -n "${TEO_IN_VM:-}" ] ||
			die "--fio-dev is required on bare metal (a block device fio may read)"
		fio_dev=/dev/vda
	fi
	[ -b "$fio_dev" ] || die "$fio_dev is not a block device"
	;;
esac
case ",$workloads," in *,hackbench,*) need_cmd hackbench ;; esac
case ",$workloads," in *,cyclictest,*) need_cmd cyclictest jq ;; esac

# Measure under the build lock (no kernel build may run meanwhile).  In
# the test VM the host's vm.sh holds it for the whole guest run.
if [ -z "${TEO_BENCH_LOCKED:-}" ] && [ -z "${TEO_IN_VM:-}" ]; then
	export TEO_BENCH_LOCKED=1
	status=0
	with_build_lock "$0" "${orig_args[@]}" || status=$?
	exit "$status"
fi

[ -n "$out" ] || out=$TEO_CACHE/bench/$(date +%Y%m%d-%H%M%S)
mkdir -p "$out"
out=$(cd "$out" && pwd)
orig_gov=$(cat "$CPUIDLE_SYS/current_governor")
emu_current=${TEO_EMU_ARGS:-}
# Leave the machine as it was, however the run ends.
restore_machine() {
	nullb_teardown
	if [ -n "$ceiling_states" ] && [ "$emu_current" != "$TEO_EMU_ARGS" ]; then
		emu_reload "$TEO_EMU_ARGS"
	fi
	echo "$orig_gov" > "$CPUIDLE_SYS/current_governor" 2>/dev/null || true
}
at_exit restore_machine
energy_setup

read -r -a names <<< "$(state_names)"
# The shallowest halting state: the idle trap's state.
shallow_index=0
[ "${names[0]}" != POLL ] || [ "${#names[@]}" -lt 2 ] || shallow_index=1
shallow_name=${names[$shallow_index]}
{
	printf 'workload\tgovernor\trun\tmetric\tunit\textra'
	for s in "${names[@]}"; do
		printf '\t%s_usage\t%s_time_us\t%s_above\t%s_below' "$s" "$s" "$s" "$s"
	done
	printf '\n'
} > "$out/runs.tsv"
{
	echo "date: $(date -u '+%Y-%m-%d %H:%M:%S UTC')"
	echo "kernel: $(uname -r), $(nproc) CPUs, driver $driver${TEO_EMU_ARGS:+ ($TEO_EMU_ARGS)}"
	echo "states: ${names[*]}"
	grep -H . "$CPU_SYS"/cpu0/cpuidle/state[0-9]*/latency \
		"$CPU_SYS"/cpu0/cpuidle/state[0-9]*/residency 2>/dev/null | sed 's|.*/cpuidle/||'
	echo "governors: $governors; runs: $runs; workloads: $workloads"
	echo "fio: ${fio_dev:-none}, ${fio_runtime}s; timer-io: ${timer_delay_us} us, ${timer_runtime}s"
	echo "hackbench: $hackbench_args; cyclictest: ${cyclictest_runtime}s; idle: ${idle_runtime}s"
	echo "ceiling: ${ceiling_states:-none}"
	echo "energy: $energy_why"
} > "$out/setup.txt"
note "results in $out; states: ${names[*]}"
note "energy: $energy_why"
echo "per run: metric; per state usage/time/above/below deltas over all CPUs"

# One run of workload $1 under governor $2 (run $3); appends to runs.tsv.
measure() {
	local w=$1 g=$2 r=$3 before after line metric extra joules result
	if [ "$g" = ceiling ]; then
		emu_reload "states=$ceiling_states"
	else
		set_governor "$g"
	fi
	sleep 1
	before=$(idle_snapshot)
	energy_start
	result=$(run_workload "$w") || exit 1
	read -r metric extra <<< "$result"
	[ -n "$metric" ] || die "$w under $g gave no result"
	joules=$(energy_stop)
	after=$(idle_snapshot)
	[ "$g" != ceiling ] || emu_reload "$TEO_EMU_ARGS"
	if [ "$g" = ceiling ]; then
		line=$(for _ in "${names[@]}"; do printf '\t0\t0\t0\t0'; done)
	else
		line=$(paste -d' ' <(printf '%s\n' "$before") <(printf '%s\n' "$after") |
			awk '{ printf "\t%d\t%d\t%d\t%d", $7 - $2, $8 - $3, $9 - $4, $10 - $5 }')
	fi
	[ "$w" != idle ] || read -r metric extra <<< "$(idle_metric "$line")"
	if [ -n "$joules" ]; then
		if [ "$extra" = - ]; then extra=J=$joules; else extra=$extra,J=$joules; fi
	fi
	printf '%s\t%s\t%s\t%s\t%s\t%s%s\n' "$w" "$g" "$r" "$metric" \
		"$(metric_unit "$w")" "$extra" "$line" >> "$out/runs.tsv"
	# The run's own line: metric, then per state usage/time/above/below.
	printf '%s\n' "$line" | awk -v w="$w" -v g="$g" -v r="$r" -v m="$metric" \
		-v x="$extra" -v u="$(metric_unit "$w" | cut -d' ' -f1)" \
		-v names="${names[*]}" '{
		ns = split(names, nm, " ")
		split($0, f, "\t")
		printf "%-10s %-7s run %d: %s %s%s;", w, g, r, m, u,
			x == "-" ? "" : " (" x ")"
		tu = 0; ta = 0
		for (s = 0; s < ns; s++) {
			c = 2 + 4 * s
			printf " %s %d/%dms/%d/%d", nm[s + 1], f[c],
				f[c + 1] / 1000, f[c + 2], f[c + 3]
			tu += f[c]; ta += f[c + 2] + f[c + 3]
		}
		printf "; miss %.3f\n", tu ? ta / tu : 0
	}'
}

for w in ${workloads//,/ }; do
	if [ "$w" = timer-io ] && ! nullb_setup; then
		nullb_teardown
		note "timer-io: no null_blk with configfs here (CONFIG_BLK_DEV_NULL_BLK, CONFIG_CONFIGFS_FS); skipped"
		continue
	fi
	for r in $(seq 1 "$runs"); do
		for g in ${governors//,/ }; do
			measure "$w" "$g" "$r"
		done
		if [ "$w" = fio ] && [ -n "$ceiling_states" ]; then
			measure "$w" ceiling "$r"
		fi
	done
	[ "$w" != timer-io ] || nullb_teardown
done

[ "$do_report" = 0 ] || report "$out"
