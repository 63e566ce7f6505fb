#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# teo is listed in available_governors; switching to it and back through
# current_governor works; writing a bogus governor name fails and leaves
# the current governor as it was.
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

ktap_set_plan 4

# Write $1 to current_governor; succeed if the write worked and reads back.
switch_to() {
	echo "$1" > "$CPUIDLE/current_governor" 2>/dev/null &&
		[ "$(cat "$CPUIDLE/current_governor")" = "$1" ]
}

case " $available " in
*" teo "*) ktap_test_pass "teo is in available_governors" ;;
*) ktap_test_fail "teo is not in available_governors ($available)" ;;
esac

if switch_to teo && switch_to "$orig" && switch_to teo; then
	ktap_test_pass "switch to teo, back to $orig and to teo again"
else
	ktap_test_fail "switch to teo and back to $orig"
fi

ok=1
for gov in $available; do
	if ! switch_to "$gov" || ! switch_to teo; then
		ok=0
		ktap_print_msg "switch $gov <-> teo failed"
	fi
done
ktap_test_result "switch between teo and every available governor" [ "$ok" = 1 ]

switch_to teo
before=$(cat "$CPUIDLE/current_governor")
if echo "no-such-governor" > "$CPUIDLE/current_governor" 2>/dev/null; then
	ktap_test_fail "writing a bogus governor name succeeded"
else
	after=$(cat "$CPUIDLE/current_governor")
	ktap_test_result "bogus governor name rejected, governor still $before" \
		[ "$after" = "$before" ]
fi

ktap_finished
