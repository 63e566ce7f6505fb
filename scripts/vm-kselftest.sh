#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Run the cpuidle-teo kselftests in the test VM on an emulated idle platform.
set -eu
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$(dirname "$0")/lib.sh"

usage() {
	cat <<EOF
usage: $teo_prog [--profile NAME | --states LIST] [--restricted MODE] [--help]

Build tools/testing/selftests/cpuidle-teo with the kselftest framework of
the private tree (make -C tools/testing/selftests TARGETS=cpuidle-teo),
install it in the cache, boot the VM of scripts/vm.sh on an emulated idle
platform and run the suite there with run_kselftest.sh.

Fails when a test fails, when the suite or any test in it was skipped (in
the VM every precondition holds, so a skip means a broken set-up), when no
test ran, or when the guest's kernel log holds the first line of a kernel
report (BUG, WARNING, Oops, panic, RCU stall, lockup, hung task, UBSAN).

With --restricted the suite runs where it must not change anything, and
the run passes only if every test skipped (each says why) and none
passed or failed:
  ro-sysfs   sysfs remounted read-only first
  non-root   as the user nobody

Options:
  --profile NAME     emulated platform (default i5-10600K)
  --states LIST      custom idle states, see scripts/vm.sh --help
  --restricted MODE  ro-sysfs or non-root, see above
  --help             show this text

Environment: KERNEL_SRC, TEO_CACHE (see scripts/prepare-tree.sh)
EOF
}

vm_args=()
restricted=
while [ $# -gt 0 ]; do
	case $1 in
	--profile|--states)
		[ $# -ge 2 ] || usage_error "$1 needs a value"
		vm_args+=("$1" "$2")
		shift
		;;
	--restricted)
		[ $# -ge 2 ] || usage_error "$1 needs a value"
		case $2 in
		ro-sysfs|non-root) restricted=$2 ;;
		*) usage_error "--restricted: unknown mode '$2' (ro-sysfs or non-root)" ;;
		esac
		shift
		;;
	--help|-h) usage; exit 0 ;;
	*) usage_error "unknown argument '$1'" ;;
	esac
	shift
done

"$TEO_REPO/scripts/vm.sh" --check-args "${vm_args[@]}"
# rsync: the kselftest framework's install target copies with it.
need_cmd make gcc qemu-system-x86_64 rsync
start=$SECONDS
# The VM first: it checks the arguments before anything is built.
"$TEO_REPO/scripts/vm.sh" --build-only "${vm_args[@]}"
slot=$("$TEO_REPO/scripts/prepare-tree.sh")
src=$slot/src
install=$slot/kselftest-install

# Under the build lock: the private tree is shared by every work tree
# with the same base, and a run from another one may have put its own copy
# of the tests there since prepare-tree.sh synced ours.  Build ours or
# stop, never another's.
build_lock
diff -r -q "$TEO_REPO/tools/testing/selftests/cpuidle-teo" \
	"$src/tools/testing/selftests/cpuidle-teo" >&2 ||
	die "$src/tools/testing/selftests/cpuidle-teo is not this repository's (a run from another work tree synced its own since): run again"
note "building the kselftests into $install"
rm -rf "$install.new"
make -s -C "$src/tools/testing/selftests" TARGETS=cpuidle-teo \
	O="$slot/build-kselftest" KSFT_INSTALL_PATH="$install.new" install >&2 ||
	die "the cpuidle-teo kselftests do not build"
rm -rf "$install"
mv "$install.new" "$install"
build_unlock
[ -x "$install/run_kselftest.sh" ] || die "no run_kselftest.sh in $install"
built=$SECONDS

run=$slot/vm-kselftest
rm -rf "$run"
mkdir -p "$run"
status=0
# The runner copies the tests' output byte by byte (kselftest/prefix.pl):
# written to the 9p run folder that is a stream of virtio interrupts while
# the tests measure idle behaviour.  Keep it in the guest's tmpfs until
# the end.  Append (>>): the runner writes to the same file through
# ">> /dev/stdout", an open file of its own, and a plain ">" would let the
# two write over each other.
# shellcheck disable=SC2016 # expanded in the guest
"$TEO_REPO/scripts/vm.sh" "${vm_args[@]}" --out "$run" -- bash -c '
	cmd=("$1")
	case $2 in
	ro-sysfs) mount -o remount,ro /sys || exit 124 ;;
	non-root)
		# A copy of the suite that belongs to nobody (the framework
		# installs its scripts 0744), and an output file it may open
		# again as /dev/stdout, as the runner does.
		cp -r "${1%/*}" /tmp/ksft && : > /tmp/kselftest.out &&
			chown -R nobody /tmp/ksft /tmp/kselftest.out || exit 124
		cmd=(setpriv --reuid=nobody --regid=nogroup --clear-groups
			/tmp/ksft/run_kselftest.sh)
		;;
	esac
	"${cmd[@]}" >> /tmp/kselftest.out 2>&1; s=$?
	cat /tmp/kselftest.out; exit $s' \
	run "$install/run_kselftest.sh" "$restricted" || status=$?
[ "$status" -ne 125 ] || die "the VM failed; see $run/console.log"
[ "$status" -ne 124 ] || die "could not set up the --restricted $restricted run in the guest"
note "run_kselftest.sh exited $status; output in $run/stdout"

# Top-level results of run_kselftest.sh: "ok N selftests: cpuidle-teo: T".
tap=$run/stdout
pass=$(grep -cE '^ok [0-9]+ selftests: ' "$tap" || true)
skip=$(grep -cE '^ok [0-9]+ selftests: .*# SKIP' "$tap" || true)
fail=$(grep -cE '^not ok [0-9]+ selftests: ' "$tap" || true)
pass=$((pass - skip))
failed=0
if [ "$fail" -gt 0 ]; then
	note "failed: $(grep -E '^not ok [0-9]+ selftests: ' "$tap" | sed 's/.*selftests: //' | tr '\n' ' ')"
	failed=1
fi
if [ -n "$restricted" ]; then
	note "skipped ($restricted: every test must skip), with the reasons given:"
	grep -E '^# 1\.\.0 # SKIP|^ok [0-9]+ selftests: .*# SKIP' "$tap" >&2 || true
	if [ "$pass" -gt 0 ]; then
		note "passed although they must skip ($restricted): $(grep -E '^ok [0-9]+ selftests: ' "$tap" | grep -v '# SKIP' | sed 's/.*selftests: //' | tr '\n' ' ')"
		failed=1
	fi
elif [ "$skip" -gt 0 ]; then
	note "skipped (a skip is a failure here), with the reasons given:"
	grep -E '^# 1\.\.0 # SKIP|^ok [0-9]+ selftests: .*# SKIP' "$tap" >&2 || true
	failed=1
fi
if [ $((pass + fail + skip)) -eq 0 ]; then
	note "no test ran"
	failed=1
fi
# The first lines of kernel reports, as the kernel prints them (the same
# kinds as kmsg_is_report() of the suite), after dmesg's time stamp.
report='(BUG: |WARNING: |Oops: |Internal error: |Kernel panic - not syncing'
report+='|(rcu: )?INFO: rcu_[a-z_]+ (self-)?detected (expedited )?stalls? on '
report+='|watchdog: BUG: soft lockup|watchdog: (CPU[0-9]+: )?Watchdog detected hard LOCKUP'
report+='|INFO: task .+ blocked.* for more than [0-9]+ seconds|UBSAN: )'
if grep -nE "^(<[0-9]+>)?(\[ *[0-9]+\.[0-9]+\] )?$report" "$run/dmesg" 2>/dev/null; then
	note "the guest's kernel log ($run/dmesg) has the reports above"
	failed=1
fi
note "build $((built - start)) s, VM run $((SECONDS - built)) s"
echo "kselftests: $pass passed, $fail failed, $skip skipped"
[ "$failed" = 0 ] || die "the cpuidle-teo kselftests did not pass"
