#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Tests of the tooling itself: bad input fails early with one clear line,
# the build lock says who holds it, signals clean up, the benchmark's
# statistics are right.  Builds and boots nothing; runs in seconds.
set -eu
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$(dirname "$0")/lib.sh"

usage() {
	cat <<EOF
usage: $teo_prog [--help]

Run the tooling's own tests.  Each bad-input case runs a command with a
fresh, empty TEO_CACHE and TEO_LOCK in a temporary folder and checks its
exit status (2 for a usage error, 1 for a bad environment), that it
printed exactly one line naming the problem, and that it created neither
the cache nor the lock (nothing was built or locked).  Further cases
check the lock's waiting message and holder record, another user's lock
file, the cleanup on SIGTERM, the states-list checker and the benchmark
report's noise verdicts.  Cases that need root (to act as another user)
are skipped with the reason when not run as root.

Prints one "ok"/"not ok" line per case and "N passed, N failed".
EOF
}

case ${1:-} in
"") ;;
--help|-h) usage; exit 0 ;;
*) usage_error "unknown argument '$1'" ;;
esac

need_cmd setsid flock jq
tmp=$(mktemp -d)
chmod 755 "$tmp"
remove_at_exit "$tmp"
scripts=$TEO_REPO/scripts
passed=0
failed=0
skipped=0

pass() {
	passed=$((passed + 1))
	echo "ok $((passed + failed + skipped)) - $1"
}

flunk() {
	failed=$((failed + 1))
	echo "not ok $((passed + failed + skipped)) - $1"
	shift
	printf '#   %s\n' "$@"
}

skip() {
	skipped=$((skipped + 1))
	echo "ok $((passed + failed + skipped)) - $1 # SKIP $2"
}

# bad_input NAME STATUS PATTERN [ENV=VAL...] -- CMD...: CMD must exit with
# STATUS, print exactly one line on stderr matching the extended regex
# PATTERN (nothing on stdout), and create neither TEO_CACHE nor TEO_LOCK.
bad_input() {
	local name=$1 want=$2 pattern=$3 status=0 lines
	local -a envs=()
	shift 3
	while [ "$1" != -- ]; do envs+=("$1"); shift; done
	shift
	rm -rf "$tmp/cache" "$tmp/lock" "$tmp/out" "$tmp/err"
	env TEO_CACHE="$tmp/cache" TEO_LOCK="$tmp/lock" KERNEL_SRC="$tmp/no-such-tree" \
		"${envs[@]}" "$@" > "$tmp/out" 2> "$tmp/err" < /dev/null || status=$?
	lines=$(wc -l < "$tmp/err")
	if [ "$status" != "$want" ]; then
		flunk "$name" "exit $status, want $want" "$(head -n 3 "$tmp/err")"
	elif [ "$lines" != 1 ] || [ -s "$tmp/out" ]; then
		flunk "$name" "want one line on stderr and none on stdout, got $lines:" \
			"$(head -n 5 "$tmp/err")"
	elif ! grep -qE -- "$pattern" "$tmp/err"; then
		flunk "$name" "the message does not match /$pattern/:" "$(cat "$tmp/err")"
	elif [ -e "$tmp/cache" ] || [ -e "$tmp/lock" ]; then
		flunk "$name" "it created the cache or the lock before failing"
	else
		pass "$name: $(cat "$tmp/err")"
	fi
}

# --- scripts/teo vm / vm.sh ---------------------------------------------------
vm=("$scripts/teo" vm)
bad_input "vm: decreasing residency" 2 "residency 100 us of state 1 is below the previous state's 360 us" \
	-- "${vm[@]}" --states 1/360,120/100 --build-only
bad_input "vm: 11 states" 2 "more than 10 states" \
	-- "${vm[@]}" --states poll,1/1,1/2,1/3,1/4,1/5,1/6,1/7,1/8,1/9,1/10
bad_input "vm: exit latency above 100 ms" 2 "exit latency 150000 us of state 1 is above 100000 us" \
	-- "${vm[@]}" --states 1/1,150000/200000
bad_input "vm: malformed states" 2 "want \[poll,\]LAT/RES" \
	-- "${vm[@]}" --states 1/1,poll
bad_input "vm: --mem 0" 2 "--mem: 0 is below 256" -- "${vm[@]}" --mem 0
bad_input "vm: --timeout 0" 2 "--timeout: 0 is below 1" -- "${vm[@]}" --timeout 0
bad_input "vm: --smp 64" 2 "--smp: 64 is above 8 .*CONFIG_NR_CPUS=8" -- "${vm[@]}" --smp 64
bad_input "vm: --out with a space" 2 "--out '$tmp/a b' has white space" \
	-- "${vm[@]}" --out "$tmp/a b"
bad_input "vm: --hz 500" 2 "--hz: '500' is not one of" -- "${vm[@]}" --hz 500
bad_input "vm: --accel xen" 2 "--accel: 'xen'" -- "${vm[@]}" --accel xen
bad_input "vm: unknown governor" 2 "unknown governor 'foo'" -- "${vm[@]}" --governor foo
bad_input "vm: unknown profile" 2 "unknown profile 'nosuch'" -- "${vm[@]}" --profile nosuch
bad_input "vm: unknown option" 2 "unknown option '--bogus'" -- "${vm[@]}" --bogus
bad_input "vm: option without value" 2 "--timeout needs a value" -- "${vm[@]}" --timeout
bad_input "vm: KERNEL_SRC is a file" 1 "KERNEL_SRC=/etc/hostname is a file, not a kernel source folder" \
	KERNEL_SRC=/etc/hostname -- "${vm[@]}" --build-only
bad_input "vm: KERNEL_SRC does not exist" 1 "KERNEL_SRC=$tmp/no-such-tree does not exist" \
	-- "${vm[@]}" --build-only
bad_input "tree: TEO_CACHE on a read-only file system" 1 "TEO_CACHE=/proc/teo-cache is not writable" \
	KERNEL_SRC= TEO_CACHE=/proc/teo-cache -- "$scripts/teo" tree
bad_input "tree: TEO_CACHE below a file" 1 "TEO_CACHE=/etc/hostname/cache cannot be created: /etc/hostname is not a folder" \
	KERNEL_SRC= TEO_CACHE=/etc/hostname/cache -- "$scripts/teo" tree

# "--states poll" is one polling state, which the module accepts.
if "$scripts/vm.sh" --states poll --check-args 2> "$tmp/err" &&
   "$scripts/vm.sh" --states poll,1/1 --hz 1000 --debug --check-args 2>> "$tmp/err"; then
	pass "vm: --states poll is accepted"
else
	flunk "vm: --states poll is accepted" "$(cat "$tmp/err")"
fi

# --- scripts/teo run / bench ---------------------------------------------------
bad_input "run: unknown workload" 2 "unknown workload 'nosuch'" \
	-- "$scripts/teo" run --workloads nosuch
bad_input "run: bad bench option after --" 2 "unknown argument '--bogus'" \
	-- "$scripts/teo" run -- --bogus
bad_input "run: bad bench value after --" 2 "--runs: '0' is not a positive whole number" \
	-- "$scripts/teo" run -- --runs 0
bad_input "run: bad case" 2 "--cases: unknown case 'nosuch'" -- "$scripts/teo" run --cases nosuch
bad_input "run: bad governor" 2 "unknown governor 'performance'" \
	-- "$scripts/teo" run --governors teo,performance
bad_input "run: bad states" 2 "more than 10 states" \
	-- "$scripts/teo" run --states 1/1,1/1,1/1,1/1,1/1,1/1,1/1,1/1,1/1,1/1,1/1
bad_input "run: bad ceiling" 2 "--ceiling-states '1/2/3'" -- "$scripts/teo" run --ceiling-states 1/2/3
bad_input "run: --hz 1001" 2 "--hz: '1001'" -- "$scripts/teo" run --hz 1001
bad_input "bench: --report of a missing folder" 2 "--report: '$tmp/none' is not a folder" \
	-- "$scripts/teo" bench --report "$tmp/none"
bad_input "bench: unknown workload" 2 "unknown workload 'x'" -- "$scripts/teo" bench -w fio,x
bad_input "faulttest: one CPU" 2 "--smp: 1 CPU cannot be hotplugged" \
	-- "$scripts/teo" faulttest --smp 1
bad_input "kselftest: unknown option" 2 "unknown argument '--x'" -- "$scripts/teo" kselftest --x
bad_input "kunit: unknown option" 2 "unknown argument '--x'" -- "$scripts/teo" kunit --x
bad_input "style: unknown option" 2 "unknown argument '--x'" -- "$scripts/teo" style --x
bad_input "tree: unknown option" 2 "unknown argument '--x'" -- "$scripts/teo" tree --x
bad_input "teo: unknown command" 2 "unknown command 'nosuch'" -- "$scripts/teo" nosuch
mkdir -p "$tmp/empty"
bad_input "series check: not a folder" 2 "check: '$tmp/none' is not a folder" \
	-- "$scripts/teo" series check "$tmp/none"
bad_input "series check: no patches" 2 "holds no \\*\\.patch files" \
	-- "$scripts/teo" series check "$tmp/empty"
bad_input "series check: unknown option" 2 "check: unknown option '--bogus'" \
	-- "$scripts/teo" series check --bogus
bad_input "series check: extra argument" 2 "at most one folder, got 2" \
	-- "$scripts/teo" series check "$tmp/empty" x
bad_input "series export: --version without value" 2 "--version needs a value" \
	-- "$scripts/teo" series export --version
bad_input "series export: --out without value" 2 "--out needs a value" \
	-- "$scripts/teo" series export --out
bad_input "series export: bad --version" 2 "--version: 'x' is not a positive" \
	-- "$scripts/teo" series export --version x
bad_input "series: unknown command" 2 "unknown command 'nosuch'" -- "$scripts/teo" series nosuch
bad_input "teo check: extra argument" 2 "check takes no arguments, got 'x'" -- "$scripts/teo" check x

# --record and the replay of recordings (bench.sh --report): bad input is
# named before anything is printed, built or measured.
rec=$tmp/rec
mkdir -p "$rec/record"
printf 'workload\tgovernor\trun\tmetric\tunit\textra\tC1_usage\tC1_time_us\tC1_above\tC1_below\n' > "$rec/runs.tsv"
printf 'fio\tteo\t1\t700\tIOPS (higher is better)\t-\t10\t100\t0\t0\n' >> "$rec/runs.tsv"
printf 'name recorded\nstate C1 1 1\n' > "$rec/platform.plat"
: > "$rec/record/fio-teo-1.txt"
bad_input "bench: --report of an empty recording" 1 "fio-teo-1.txt: empty recording" \
	-- "$scripts/bench.sh" --report "$rec" --no-plot
printf 'cpus=2\n   fio-1 [000] 1.000000: sched_switch: fio:1 [120] S ==> swapper/0:0 [120]\n' \
	> "$rec/record/fio-teo-1.txt"
bad_input "bench: --report of a recording without idle events" 1 \
	"fio-teo-1.txt: not a trace-cmd report of a run: no cpu_idle event" \
	-- "$scripts/bench.sh" --report "$rec" --no-plot
printf '  <idle>-0 [000] 1.000000: cpu_idle: state=0 cpu_id=0\n' > "$rec/record/fio-teo-1.txt"
rm "$rec/platform.plat"
bad_input "bench: --report of recordings without a table" 1 \
	"no lab table for the recordings: $rec/platform.plat is missing" \
	-- "$scripts/bench.sh" --report "$rec" --no-plot
bad_input "bench: --lab-platform file missing" 2 "--lab-platform: no such file: '$tmp/none.plat'" \
	-- "$scripts/bench.sh" --report "$rec" --lab-platform "$tmp/none.plat"
bad_input "bench: bad --lab-govs" 2 "--lab-govs: 'teo' is not KERNEL_GOVERNOR=LAB_LABEL" \
	-- "$scripts/bench.sh" --report "$rec" --lab-govs teo
bad_input "bench: --lab-platform without --report" 2 "go with --report DIR" \
	-- "$scripts/bench.sh" --lab-platform x.plat
bad_input "bench: --record with TEO_TRACE_CMD missing" 1 \
	"--record: TEO_TRACE_CMD=$tmp/no-trace-cmd is not an executable command" \
	TEO_TRACE_CMD="$tmp/no-trace-cmd" -- "$scripts/bench.sh" --record -w hackbench
if ! command -v trace-cmd >/dev/null 2>&1; then
	bad_input "bench: --record without trace-cmd" 1 "'trace-cmd' not found: it comes from the Debian package trace-cmd" \
		-- "$scripts/bench.sh" --record -w hackbench
elif [ "$(id -u)" != 0 ]; then
	skip "bench: --record without trace-cmd" "needs root to hide trace-cmd in a mount namespace"
else
	# An overlay over trace-cmd's folder whose upper layer holds a whiteout
	# for it: trace-cmd is gone in that mount namespace only.
	bin_dir=$(dirname "$(readlink -f "$(command -v trace-cmd)")")
	mkdir -p "$tmp/ovl/upper" "$tmp/ovl/work"
	mknod "$tmp/ovl/upper/trace-cmd" c 0 0
	# shellcheck disable=SC2016 # expanded by the inner shell
	bad_input "bench: --record without trace-cmd" 1 "'trace-cmd' not found: it comes from the Debian package trace-cmd" \
		-- unshare --mount -- sh -c 'mount -t overlay overlay -o "lowerdir=$1,upperdir=$2/upper,workdir=$2/work" "$1" && shift 2 && exec "$@"' \
		sh "$bin_dir" "$tmp/ovl" "$scripts/bench.sh" --record -w hackbench
fi
bad_input "run: --record, a profile the lab has no table for" 2 \
	"--record: the replay lab has no table for profile 'i5-10600K' \(no $tmp/empty/i5-10600k.plat\)" \
	TEO_LAB_PLATFORMS="$tmp/empty" -- "$scripts/teo" run --record --cases main

# Every cpuidle-emu profile has a lab table with the same states (the
# replay of a recorded VM run uses it); where the module adds the POLL
# state of intel_idle and the lab's table has none (alder-lake, skylake),
# vm-bench.sh --record adds it to a copy.
emu_tables() {
	awk '
		/^static const struct emu_state emu_[a-z0-9_]+\[\] = \{/ {
			arr = $5; sub(/\[\]$/, "", arr); on = 1; list[arr] = ""
		}
		on {
			line = $0
			while (match(line, /\{ "[^"]*", [0-9]+U?, [0-9]+U? \}/)) {
				e = substr(line, RSTART, RLENGTH); line = substr(line, RSTART + RLENGTH)
				gsub(/[{}",U]/, "", e); split(e, f, " ")
				list[arr] = list[arr] " " f[2] "/" f[3]
			}
			if ($0 ~ /\};/) on = 0
		}
		/^\t\{ "[^"]+", (true|false), emu_[a-z0-9_]+ \},/ {
			p = $2; gsub(/[",]/, "", p); poll = $3 == "true,"
			a = $4; sub(/ *\},?$/, "", a)
			printf "%s%s%s\n", tolower(p), poll ? " 0/0" : "", list[a]
		}' "$TEO_REPO/tools/cpuidle-emu/cpuidle-emu.c"
}
bad_tables=
n_tables=0
while read -r name want; do
	n_tables=$((n_tables + 1))
	got=$(awk '$1 == "state" { printf "%s%s/%s", n++ ? " " : "", $3, $4 }' \
		"$TEO_REPO/tools/idle-replay/platforms/$name.plat" 2>/dev/null)
	[ "$got" = "$want" ] || [ "0/0 $got" = "$want" ] ||
		bad_tables="$bad_tables $name (lab: '$got', module: '$want')"
done < <(emu_tables | sed 's/ \+/ /g')
if [ "$n_tables" -ge 11 ] && [ -z "$bad_tables" ]; then
	pass "record: each of the $n_tables cpuidle-emu profiles has the same table in tools/idle-replay/platforms"
else
	flunk "record: cpuidle-emu profiles and lab tables" "$n_tables profiles;$bad_tables"
fi

# --help must print help and do nothing else (no dependency check).
help_ok() {
	local name=$1 pattern=$2 status=0
	shift 2
	env TEO_CACHE="$tmp/cache" TEO_LOCK="$tmp/lock" PATH=/usr/bin:/bin \
		"$@" > "$tmp/out" 2> "$tmp/err" < /dev/null || status=$?
	if [ "$status" = 0 ] && grep -q -- "$pattern" "$tmp/out" && [ ! -s "$tmp/err" ] &&
	   [ ! -e "$tmp/cache" ] && [ ! -e "$tmp/lock" ]; then
		pass "$name"
	else
		flunk "$name" "exit $status" "$(head -n 3 "$tmp/err")"
	fi
}
help_ok "teo run --help: help, no dependency check" "usage: vm-bench.sh" "$scripts/teo" run --help
help_ok "teo check --help: help" "usage: teo check" "$scripts/teo" check --help
help_ok "teo faulttest --help" "usage: vm-faulttest.sh" "$scripts/teo" faulttest --help
help_ok "teo vm --help" "--hz N" "$scripts/teo" vm --help
help_ok "teo bench --help" "--ceiling-states" "$scripts/teo" bench --help

# --- the build lock -----------------------------------------------------------
lock=$tmp/lock-test
# A holder records itself; a waiter names it, then gets the lock.
# shellcheck disable=SC2016 # expanded by the child shells
TEO_LOCK=$lock setsid bash -c '. "$1"; build_lock; sleep 60 & wait' holder-prog \
	"$scripts/lib.sh" 2> "$tmp/err.holder" &
holder=$!
for _ in $(seq 50); do [ -s "$lock" ] && break; sleep 0.1; done
TEO_LOCK=$lock bash -c '. "$1"; with_build_lock true' waiter "$scripts/lib.sh" 2> "$tmp/err" &
waiter=$!
for _ in $(seq 50); do grep -q waiting "$tmp/err" && break; sleep 0.1; done
kill -TERM -- "-$holder"
status=0
wait "$waiter" || status=$?
wait "$holder" 2>/dev/null || true
if [ "$status" = 0 ] &&
   grep -qE "waiting for the build lock $lock, held by pid $holder user [^ ]+ since .*: holder-prog" "$tmp/err" &&
   grep -q "got the build lock" "$tmp/err"; then
	pass "lock: the waiter says for whom it waits: $(head -n 1 "$tmp/err")"
else
	flunk "lock: the waiter says for whom it waits" "exit $status" "$(cat "$tmp/err")"
fi
if [ ! -s "$lock" ]; then
	pass "lock: the record is cleared on release"
else
	flunk "lock: the record is cleared on release" "$(cat "$lock")"
fi

# SIGTERM stops the process group, removes temporary files, frees the lock.
rm -f "$lock"
TEO_LOCK=$lock bash -c '. "$1"; t=$(mktemp -d "$2/sig.XXXXXX"); remove_at_exit "$t"
	build_lock; spawn_group sleep 300; echo "$teo_last" > "$2/child"; wait' \
	sig-test "$scripts/lib.sh" "$tmp" 2> "$tmp/err" &
victim=$!
for _ in $(seq 50); do [ -s "$tmp/child" ] && break; sleep 0.1; done
child=$(cat "$tmp/child" 2>/dev/null || echo none)
kill -TERM "$victim"
status=0
wait "$victim" || status=$?
if [ "$status" = 143 ] && ! kill -0 "$child" 2>/dev/null &&
   [ -z "$(find "$tmp" -maxdepth 1 -name 'sig.*')" ] && flock -n "$lock" true &&
   grep -q "interrupted by SIGTERM" "$tmp/err"; then
	pass "signal: SIGTERM stops the children, removes temporary files, frees the lock"
else
	flunk "signal: SIGTERM cleanup" "exit $status, child $child $(kill -0 "$child" 2>/dev/null && echo alive)" \
		"$(cat "$tmp/err")"
	kill "$child" 2>/dev/null || true
fi

# kunit.py of Linux 6.15 and later asks QEMU for KVM first; its wrapper
# passes every other argument through and leaves TCG.
if qdir=$(TEO_CACHE=$tmp/kq bash -c '. "$1"; kunit_qemu_dir' kq "$scripts/lib.sh" 2> "$tmp/err"); then
	sed 's|^exec .*|printf "[%s]" "$@"|' "$qdir/qemu-system-x86_64" > "$tmp/kq-echo"
	got=$(sh "$tmp/kq-echo" -nodefaults -append 'a b' -accel kvm -accel hvf -accel tcg -bios qboot.rom)
	want='[-nodefaults][-append][a b][-accel][tcg][-bios][qboot.rom]'
	if [ "$got" = "$want" ] && grep -q '^exec /.*/qemu-system-x86_64 "\$@"$' "$qdir/qemu-system-x86_64"; then
		pass "kunit: QEMU for kunit.py drops -accel kvm and hvf, keeps the rest"
	else
		flunk "kunit: QEMU for kunit.py drops -accel kvm and hvf" "got:  $got" "want: $want"
	fi
else
	flunk "kunit: QEMU wrapper for kunit.py" "$(cat "$tmp/err")"
fi

# A subshell that takes the lock (series.sh configures a build so) runs
# its own cleanup only: not the parent's hooks, not the parent's
# teo_cleanup (taking that over once recursed until bash crashed).
rm -f "$lock" "$tmp/hook"
status=0
TEO_LOCK=$lock bash -c '. "$1"; trap "echo script-trap >> $2/hook" EXIT
	at_exit "echo parent-hook >> $2/hook"
	(cd / && with_build_lock true) || exit $?
	(cd / && with_build_lock true) || exit $?
	echo done >> "$2/hook"' sub-test "$scripts/lib.sh" "$tmp" 2> "$tmp/err" || status=$?
if [ "$status" = 0 ] &&
   [ "$(tr '\n' ' ' < "$tmp/hook")" = "done parent-hook script-trap " ] &&
   flock -n "$lock" true; then
	pass "cleanup: a subshell holding the lock runs none of the parent's exit hooks"
else
	flunk "cleanup: a subshell holding the lock runs none of the parent's exit hooks" \
		"exit $status; hooks ran: $(tr '\n' ' ' < "$tmp/hook" 2>/dev/null)" "$(cat "$tmp/err")"
fi

# Another user's lock file: root takes it read-only; a user who cannot
# read it gets one clear line.
nobody=65534
if [ "$(id -u)" != 0 ]; then
	skip "lock: another user's lock file" "needs root to act as two users"
elif ! setpriv --reuid=$nobody --regid=$nobody --clear-groups test -r "$scripts/lib.sh"; then
	skip "lock: another user's lock file" "the repository is not readable by uid $nobody"
else
	rm -f "$lock"
	: > "$lock"
	chown "$nobody:$nobody" "$lock"
	chmod 644 "$lock"
	if TEO_LOCK=$lock bash -c '. "$1"; with_build_lock true' t "$scripts/lib.sh" 2> "$tmp/err"; then
		pass "lock: a lock file of another user works (read-only)"
	else
		flunk "lock: a lock file of another user works" "$(cat "$tmp/err")"
	fi
	chown 0:0 "$lock"
	chmod 600 "$lock"
	rm -f "$tmp/err"
	status=0
	# shellcheck disable=SC2016 # expanded by the child shell
	setpriv --reuid=$nobody --regid=$nobody --clear-groups env TEO_LOCK="$lock" \
		bash -c '. "$1"; with_build_lock true' t "$scripts/lib.sh" 2> "$tmp/err.nobody" || status=$?
	if [ "$status" = 1 ] && [ "$(wc -l < "$tmp/err.nobody")" = 1 ] &&
	   grep -q "the build lock $lock belongs to user root and .* cannot read it" "$tmp/err.nobody"; then
		pass "lock: an unreadable lock of another user: $(cat "$tmp/err.nobody")"
	else
		flunk "lock: an unreadable lock of another user" "exit $status" "$(cat "$tmp/err.nobody")"
	fi
	mkdir -p "$tmp/ro"
	chmod 555 "$tmp/ro"
	status=0
	setpriv --reuid=$nobody --regid=$nobody --clear-groups env TEO_CACHE="$tmp/ro/cache" \
		KERNEL_SRC= "$scripts/prepare-tree.sh" 2> "$tmp/err.nobody" || status=$?
	if [ "$status" = 1 ] && [ "$(wc -l < "$tmp/err.nobody")" = 1 ] &&
	   grep -q "TEO_CACHE=$tmp/ro/cache is not writable" "$tmp/err.nobody"; then
		pass "cache: an unwritable TEO_CACHE: $(cat "$tmp/err.nobody")"
	else
		flunk "cache: an unwritable TEO_CACHE" "exit $status" "$(cat "$tmp/err.nobody")"
	fi
fi

# --- lib.sh: the states-list checker agrees with the module's rules -----------
states_ok() {
	local list=$1 want=$2 status=0
	(check_states_list "$list") 2>/dev/null || status=$?
	if [ "$status" = "$want" ]; then
		pass "states '$list': exit $want"
	else
		flunk "states '$list'" "exit $status, want $want"
	fi
}
states_ok poll 0
states_ok 1/1 0
states_ok poll,0/0,1/1,2/4,170/650,210/1000 0
states_ok 20000/4294967295,1/4294967295 0
states_ok 10200/9826 0
states_ok poll,1/1,1/1,1/1,1/1,1/1,1/1,1/1,1/1,1/1 0
states_ok poll,1/1,1/1,1/1,1/1,1/1,1/1,1/1,1/1,1/1,1/1 2
states_ok 1/4294967296 2
states_ok 100001/200000 2
states_ok 1/1, 2
states_ok ,1/1 2
states_ok poll,poll 2

# --- bench.sh report: medians, percentiles, ceiling ratio, noise verdicts ------
rep=$tmp/report
mkdir -p "$rep"
{
	printf 'workload\tgovernor\trun\tmetric\tunit\textra\tC1_usage\tC1_time_us\tC1_above\tC1_below\tC2_usage\tC2_time_us\tC2_above\tC2_below\n'
	for r in 1 2 3; do
		printf 'fio\tteo\t%d\t%d\tIOPS (higher is better)\tp50=%d,p99=%d\t10\t100\t1\t0\t10\t900\t0\t1\n' \
			"$r" $((720 + r)) $((1300 + r)) $((2000 + r))
		printf 'fio\tmenu\t%d\t%d\tIOPS (higher is better)\tp50=1400,p99=2400\t10\t500\t1\t0\t10\t500\t0\t1\n' \
			"$r" $((640 + r))
		printf 'fio\tceiling\t%d\t900\tIOPS (higher is better)\t-\t0\t0\t0\t0\t0\t0\t0\t0\n' "$r"
		printf 'hackbench\tteo\t%d\t1.%d\ts (lower is better)\t-\t1\t1\t0\t0\t1\t1\t0\t0\n' "$r" $((r * 3))
		printf 'hackbench\tmenu\t%d\t1.%d\ts (lower is better)\t-\t1\t1\t0\t0\t1\t1\t0\t0\n' "$r" $((r * 2 + 1))
	done
} > "$rep/runs.tsv"
if "$scripts/bench.sh" --report "$rep" --no-plot > "$tmp/out" 2> "$tmp/err" &&
   grep -q "menu vs teo: median -11.1 %; the runs do not overlap: menu is worse, beyond the run-to-run spread (Mann-Whitney U=0 of 9, exact two-sided p=0.10, 3+3 runs)" "$tmp/out" &&
   grep -q "menu vs teo: median -6.3 %; the runs overlap: within the run-to-run noise (Mann-Whitney U=3.5 of 9" "$tmp/out" &&
   grep -q "against the ceiling (median 900): teo 0.80x, menu 0.71x" "$tmp/out" &&
   grep -q "median of runs: p50 1302 p99 2002" "$tmp/out" &&
   grep -qE "^  teo +721 722 723 +722 +60 .* 90\.0%" "$tmp/out"; then
	pass "bench report: medians, p50/p99, ceiling ratios and noise verdicts"
else
	flunk "bench report" "$(cat "$tmp/err" "$tmp/out")"
fi

echo "test-tools: $passed passed, $failed failed, $skipped skipped"
[ "$failed" = 0 ]
