#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Switching governors through current_governor works between every pair of
# available governors, in both directions; writing a bogus governor name
# fails and leaves the current governor as it was.  Nothing here is
# specific to teo: it is switched to like any other governor, and a kernel
# without it only lacks those pairs.
set -u

DIR=$(dirname "$0")
# shellcheck source=/dev/null # the base tree's, next to this folder
. "$DIR/../kselftest/ktap_helpers.sh"

CPUIDLE=/sys/devices/system/cpu/cpuidle

ktap_print_header

if [ "$(id -u)" -ne 0 ]; then
	ktap_skip_all "must be run as root"
	exit "$KSFT_SKIP"
fi
driver=$(cat "$CPUIDLE/current_driver" 2>/dev/null || echo missing)
if [ "$driver" = none ] || [ "$driver" = missing ]; then
	ktap_skip_all "no cpuidle driver (current_driver is $driver)"
	exit "$KSFT_SKIP"
fi

orig=$(cat "$CPUIDLE/current_governor")
available=$(cat "$CPUIDLE/available_governors")
trap 'echo "$orig" > "$CPUIDLE/current_governor" 2>/dev/null' EXIT
ktap_print_msg "driver $driver, governor $orig, available: $available"
case " $available " in
*" teo "*) ;;
*) ktap_print_msg "teo is not available (CONFIG_CPU_IDLE_GOV_TEO is off)" ;;
esac

ktap_set_plan 2

# Write $1 to current_governor; succeed if the write worked and reads back.
switch_to() {
	echo "$1" > "$CPUIDLE/current_governor" 2>/dev/null &&
		[ "$(cat "$CPUIDLE/current_governor")" = "$1" ]
}

# shellcheck disable=SC2086 # one word per governor
set -- $available
if [ $# -lt 2 ]; then
	ktap_test_skip "only one governor ($available): nothing to switch between"
else
	ok=1
	pairs=0
	for from in "$@"; do
		for to in "$@"; do
			[ "$from" != "$to" ] || continue
			pairs=$((pairs + 1))
			if ! switch_to "$from" || ! switch_to "$to"; then
				ok=0
				ktap_print_msg "switch $from -> $to failed"
			fi
		done
	done
	ktap_test_result "switch between every pair of the $# governors ($pairs switches)" \
		[ "$ok" = 1 ]
fi

before=$(cat "$CPUIDLE/current_governor")
if echo "no-such-governor" > "$CPUIDLE/current_governor" 2>/dev/null; then
	ktap_test_fail "writing a bogus governor name succeeded"
else
	after=$(cat "$CPUIDLE/current_governor")
	ktap_test_result "bogus governor name rejected, governor still $before" \
		[ "$after" = "$before" ]
fi

ktap_finished
