#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# A/B workload benchmark of cpuidle governors on this machine (bare metal,
# or inside the test VM of scripts/vm.sh).
set -eu
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$(dirname "$0")/lib.sh"

CPU_SYS=/sys/devices/system/cpu
CPUIDLE_SYS=$CPU_SYS/cpuidle
ALL_WORKLOADS="fio timer-io hackbench cyclictest"

usage() {
	cat <<EOF
usage: $teo_prog [options]
       $teo_prog --report DIR

Run workloads N times under each named cpuidle governor, switching through
$CPUIDLE_SYS/current_governor, and record per run the workload's
metric and the per-state deltas of usage, time, above and below summed over
all CPUs.  Runs alternate between the governors (teo, menu, teo, menu ...).
Then print a summary per workload and governor: the runs sorted, their
median, the idle-miss ratio (above + below) / usage and the share of idle
time per state, and plot that share per governor (residency.svg/.png).

Workloads:
  fio         fio randread 4k, psync, direct, iodepth=1 on --fio-dev for
              --fio-runtime s: intercept-heavy (the device's interrupts are
              not timers the governor can see); metric: IOPS
  timer-io    the same fio job on a null_blk device (configfs) whose
              completions come from an hrtimer after --timer-delay-us
              (irqmode=2): timer-driven IO; metric: IOPS
  hackbench   hackbench $hackbench_default_args; metric: seconds
  cyclictest  cyclictest --laptop (the PM QoS limit stays off), one thread
              per CPU, interval 1000 us, --cyclictest-runtime s; metric:
              average wakeup latency (us; the maximum is kept too)

Options:
  -g, --governors LIST     comma-separated governors (default teo,menu)
  -n, --runs N             runs per governor and workload (default 3)
  -w, --workloads LIST     comma-separated, from: ${ALL_WORKLOADS// /,}
                           (default: all)
  --fio-dev DEV            block device for fio: read only, never written
                           (default /dev/vda inside the VM; required on bare
                           metal)
  --fio-runtime S          seconds per fio run (default 20)
  --timer-delay-us US      null_blk completion delay (default 50000)
  --timer-runtime S        seconds per timer-io run (default 5)
  --hackbench-args ARGS    (default "$hackbench_default_args")
  --cyclictest-runtime S   seconds per cyclictest run (default 10)
  -o, --out DIR            results folder (default \$TEO_CACHE/bench/DATE)
  --no-plot                skip the plot (make it later with --report)
  --no-report              skip the summary and the plot
  --report DIR             only summarize and plot the runs in DIR
  --help                   show this text

Needs root and a cpuidle driver.  Holds the machine-wide build lock while
it measures, so no kernel build shares the machine with it.
Files in the results folder: runs.tsv (one line per run), summary.txt,
residency.dat, residency.svg and residency.png.
EOF
}

hackbench_default_args="-g 4 -l 500"

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

# --- workloads -------------------------------------------------------------

fio_iops() {
	local dev=$1 runtime=$2 out
	out=$(fio --minimal --readonly --time_based --name=teobench \
		--filename="$dev" --runtime="$runtime" --rw=randread --bs=4k \
		--ioengine=psync --iodepth=1 --direct=1) ||
		die "fio on $dev failed"
	# Terse format: field 8 is the read IOPS.
	printf '%s\n' "$out" | tail -n 1 | cut -d';' -f8
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

# Print "average maximum" wakeup latency over all threads, in us.
cyclictest_latency() {
	local out
	out=$(cyclictest --laptop -q -m -S -p 80 -i 1000 \
		-D "${cyclictest_runtime}s" 2>&1) || die "cyclictest failed: $out"
	printf '%s\n' "$out" | awk '
		/Avg:/ {
			for (i = 1; i < NF; i++) {
				if ($i == "Avg:") { sum += $(i + 1); n++ }
				if ($i == "Max:" && $(i + 1) > max) max = $(i + 1)
			}
		}
		END { if (n) printf "%.1f %d\n", sum / n, max; else exit 1 }' ||
		die "no latency in the cyclictest output"
}

# Run workload $1 once; print "metric extra".
run_workload() {
	case $1 in
	fio) echo "$(fio_iops "$fio_dev" "$fio_runtime") -" ;;
	timer-io) echo "$(fio_iops "$nullb_dev" "$timer_runtime") -" ;;
	hackbench) echo "$(hackbench_time) -" ;;
	cyclictest) cyclictest_latency ;;
	esac
}

metric_unit() {
	case $1 in
	fio|timer-io) echo "IOPS (higher is better)" ;;
	hackbench) echo "s (lower is better)" ;;
	cyclictest) echo "avg us (lower is better)" ;;
	esac
}

set_governor() {
	if ! echo "$1" > "$CPUIDLE_SYS/current_governor" 2>/dev/null ||
	   [ "$(cat "$CPUIDLE_SYS/current_governor")" != "$1" ]; then
		die "could not switch to governor $1"
	fi
}

# --- report ----------------------------------------------------------------

# Summary table from runs.tsv in $1 (also writes residency.dat).
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
		unit[$1] = $5
		vals[key] = vals[key] " " $4
		cnt[key]++
		if ($6 != "-") extra[key] = extra[key] " " $6
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
		med = n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
		return out
	}
	END {
		printf "case"  > datfile
		for (s = 0; s < ns; s++) printf " %s", names[s] > datfile
		printf "\n" > datfile
		for (w = 0; w < nw; w++) {
			wl = worder[w]
			printf "\n%s: %s\n", wl, unit[wl]
			printf "  %-8s %-36s %9s %9s %7s %7s %6s  %s\n", "governor",
				"runs (sorted)", "median", "entries", "above%",
				"below%", "miss", "idle time per state (%)"
			for (k = 0; k < nk; k++) {
				split(order[k], kk, SUBSEP)
				if (kk[1] != wl) continue
				key = order[k]
				runs = sorted(vals[key])
				u = 0; a = 0; b = 0; t = 0
				for (s = 0; s < ns; s++) {
					u += usage[key, s]; a += above[key, s]
					b += below[key, s]; t += tm[key, s]
				}
				res = ""
				printf "%s/%s", wl, kk[2] > datfile
				for (s = 0; s < ns; s++) {
					share = t ? 100 * tm[key, s] / t : 0
					res = res sprintf(" %s %.1f", names[s], share)
					printf " %.2f", share > datfile
				}
				printf "\n" > datfile
				printf "  %-8s %-36s %9s %9d %6.2f%% %6.2f%% %6.3f %s\n",
					kk[2], runs, med, u, u ? 100 * a / u : 0,
					u ? 100 * b / u : 0, u ? (a + b) / u : 0, res
				if (extra[key] != "")
					printf "  %-8s max latency per run (us): %s\n", "",
						sorted(extra[key])
			}
		}
		printf "\nmiss = idle-miss ratio (above + below) / entries, over all runs;\n"
		printf "above = too deep, below = too shallow, as the kernel counts them.\n"
	}' "$dir/runs.tsv"
}

plot() {
	local dir=$1 ncol
	command -v gnuplot >/dev/null 2>&1 || { note "no gnuplot: no plot"; return 0; }
	ncol=$(head -n 1 "$dir/residency.dat" | awk '{ print NF }')
	cat > "$dir/residency.gp" <<EOF
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
EOF
	gnuplot -e "set terminal svg size 960,540; set output '$dir/residency.svg'" \
		"$dir/residency.gp" 2>/dev/null || note "gnuplot (svg) failed"
	gnuplot -e "set terminal png size 960,540; set output '$dir/residency.png'" \
		"$dir/residency.gp" 2>/dev/null || note "gnuplot (png) failed"
}

report() {
	local dir=$1
	[ -f "$dir/runs.tsv" ] || die "no runs.tsv in $dir"
	summarize "$dir" > "$dir/summary.txt"
	cat "$dir/summary.txt"
	[ "$do_plot" = 0 ] || plot "$dir"
	[ ! -f "$dir/residency.svg" ] || note "plot: $dir/residency.svg"
}

# --- main ------------------------------------------------------------------

governors=teo,menu
runs=3
workloads=${ALL_WORKLOADS// /,}
fio_dev=
fio_runtime=20
timer_delay_us=50000
timer_runtime=5
hackbench_args=$hackbench_default_args
cyclictest_runtime=10
out=
do_plot=1
do_report=1
report_dir=
orig_args=("$@")
while [ $# -gt 0 ]; do
	case $1 in
	-g|--governors|-n|--runs|-w|--workloads|--fio-dev|--fio-runtime|\
	--timer-delay-us|--timer-runtime|--hackbench-args|--cyclictest-runtime|\
	-o|--out|--report)
		[ $# -ge 2 ] || die "$1 needs a value"
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
		-o|--out) out=$2 ;;
		--report) report_dir=$2 ;;
		esac
		shift
		;;
	--no-plot) do_plot=0 ;;
	--no-report) do_report=0 ;;
	--help|-h) usage; exit 0 ;;
	*) usage >&2; die "unknown argument '$1'" ;;
	esac
	shift
done

if [ -n "$report_dir" ]; then
	report "$report_dir"
	exit 0
fi

for n in "$runs" "$fio_runtime" "$timer_delay_us" "$timer_runtime" "$cyclictest_runtime"; do
	case $n in ''|*[!0-9]*|0) die "'$n' is not a positive number" ;; esac
done
for w in ${workloads//,/ }; do
	case " $ALL_WORKLOADS " in
	*" $w "*) ;;
	*) die "unknown workload '$w'; known: $ALL_WORKLOADS" ;;
	esac
done

# Refuse before touching anything.
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
case ",$workloads," in
*,fio,*)
	need_cmd fio
	if [ -z "$fio_dev" ]; then
		[ -n "${TEO_IN_VM:-}" ] ||
			die "--fio-dev is required on bare metal (a block device fio may read)"
		fio_dev=/dev/vda
	fi
	[ -b "$fio_dev" ] || die "$fio_dev is not a block device"
	;;
esac
case ",$workloads," in *,timer-io,*) need_cmd fio ;; esac
case ",$workloads," in *,hackbench,*) need_cmd hackbench ;; esac
case ",$workloads," in *,cyclictest,*) need_cmd cyclictest ;; esac

# Measure under the build lock (no kernel build may run meanwhile).  In
# the test VM the host's vm.sh holds it for the whole guest run.
if [ -z "${TEO_BENCH_LOCKED:-}" ] && [ -z "${TEO_IN_VM:-}" ]; then
	export TEO_BENCH_LOCKED=1
	note "taking the build lock $TEO_LOCK"
	status=0
	with_build_lock "$0" "${orig_args[@]}" || status=$?
	exit "$status"
fi

[ -n "$out" ] || out=$TEO_CACHE/bench/$(date +%Y%m%d-%H%M%S)
mkdir -p "$out"
out=$(cd "$out" && pwd)
orig_gov=$(cat "$CPUIDLE_SYS/current_governor")
trap 'nullb_teardown; echo "$orig_gov" > "$CPUIDLE_SYS/current_governor" 2>/dev/null || true' EXIT

read -r -a names <<< "$(state_names)"
{
	printf 'workload\tgovernor\trun\tmetric\tunit\textra'
	for s in "${names[@]}"; do
		printf '\t%s_usage\t%s_time_us\t%s_above\t%s_below' "$s" "$s" "$s" "$s"
	done
	printf '\n'
} > "$out/runs.tsv"
{
	echo "date: $(date -u '+%Y-%m-%d %H:%M:%S UTC')"
	echo "kernel: $(uname -r), $(nproc) CPUs, driver $driver"
	echo "states: ${names[*]}"
	grep -H . "$CPU_SYS"/cpu0/cpuidle/state[0-9]*/latency \
		"$CPU_SYS"/cpu0/cpuidle/state[0-9]*/residency 2>/dev/null | sed 's|.*/cpuidle/||'
	echo "governors: $governors; runs: $runs; workloads: $workloads"
	echo "fio: ${fio_dev:-none}, ${fio_runtime}s; timer-io: ${timer_delay_us} us, ${timer_runtime}s"
	echo "hackbench: $hackbench_args; cyclictest: ${cyclictest_runtime}s"
} > "$out/setup.txt"
note "results in $out; states: ${names[*]}"
echo "per run: metric; per state usage/time/above/below deltas over all CPUs"

for w in ${workloads//,/ }; do
	if [ "$w" = timer-io ] && ! nullb_setup; then
		nullb_teardown
		note "timer-io: no null_blk with configfs here (CONFIG_BLK_DEV_NULL_BLK, CONFIG_CONFIGFS_FS); skipped"
		continue
	fi
	for r in $(seq 1 "$runs"); do
		for g in ${governors//,/ }; do
			set_governor "$g"
			sleep 1
			before=$(idle_snapshot)
			read -r metric extra <<< "$(run_workload "$w")"
			after=$(idle_snapshot)
			line=$(paste -d' ' <(printf '%s\n' "$before") <(printf '%s\n' "$after") |
				awk '{ printf "\t%d\t%d\t%d\t%d", $7 - $2, $8 - $3, $9 - $4, $10 - $5 }')
			printf '%s\t%s\t%s\t%s\t%s\t%s%s\n' "$w" "$g" "$r" "$metric" \
				"$(metric_unit "$w")" "$extra" "$line" >> "$out/runs.tsv"
			# The run's own line: metric, then per state usage/time/above/below.
			printf '%s\n' "$line" | awk -v w="$w" -v g="$g" -v r="$r" \
				-v m="$metric" -v u="$(metric_unit "$w" | cut -d' ' -f1)" \
				-v names="${names[*]}" '{
				ns = split(names, nm, " ")
				split($0, f, "\t")
				printf "%-10s %-6s run %d: %s %s;", w, g, r, m, u
				tu = 0; ta = 0
				for (s = 0; s < ns; s++) {
					c = 2 + 4 * s
					printf " %s %d/%dms/%d/%d", nm[s + 1], f[c],
						f[c + 1] / 1000, f[c + 2], f[c + 3]
					tu += f[c]; ta += f[c + 2] + f[c + 3]
				}
				printf "; miss %.3f\n", tu ? ta / tu : 0
			}'
		done
	done
	[ "$w" != timer-io ] || nullb_teardown
done

[ "$do_report" = 0 ] || report "$out"
