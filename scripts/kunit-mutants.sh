#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# The KUnit mutation check: each mutant of the governor must fail the KUnit
# cases it names.
set -eu
. "$(dirname "$0")/lib.sh"

usage() {
	cat <<EOF
usage: $teo_prog [--help] [MUTANT...]

For every tools/teo-mutants/*.patch (or the ones named), apply it to a copy
of this repository, run the KUnit suites with that copy's governor
(scripts/teo kunit: an incremental build of the copy's KUnit tree, about
a minute each when warm) and print one line per mutant:

  NAME  killed|SURVIVED|claims-no-case|NO-BUILD  failed: CASE,...  (N s)

A mutant is killed when the kernel builds and every case its 'KUnit:'
header names fails.  'KUnit: none' names no case: its line only reports
which cases failed.  The suites of the unchanged governor must pass first.
Fails if a mutant survives, does not apply or breaks the build.  At the end
the private tree gets this repository's files back.

Environment: KERNEL_SRC, TEO_CACHE (see scripts/prepare-tree.sh)
EOF
}

mutant_dir=$TEO_REPO/tools/teo-mutants
mutants=()
while [ $# -gt 0 ]; do
	case $1 in
	--help|-h) usage; exit 0 ;;
	-*) usage_error "unknown option '$1'" ;;
	*)
		[ -f "$mutant_dir/$1.patch" ] || usage_error "no mutant $mutant_dir/$1.patch"
		mutants+=("$mutant_dir/$1.patch") ;;
	esac
	shift
done
[ ${#mutants[@]} -gt 0 ] || mutants=("$mutant_dir"/*.patch)
[ -f "${mutants[0]}" ] || die "no mutants in $mutant_dir"
need_cmd patch python3 tar
export TEO_CACHE

work=$(mktemp -d "${TMPDIR:-/tmp}/teo-mutants.XXXXXX")
copy=$work/repo
mkdir -p "$copy"
# shellcheck disable=SC2064 # expand now
trap "rm -rf '$work'" EXIT
tar -C "$TEO_REPO" --exclude=./.git --exclude=./.cache -cf - . | tar -C "$copy" -xf -
gov=drivers/cpuidle/governors
export TEO_KUNIT_JSON=$work/results.json

# Run the suites with the copy's files; 0 if kunit.py left results.
run_copy() {
	rm -f "$TEO_KUNIT_JSON"
	"$copy/scripts/teo" kunit > "$work/run.log" 2>&1 || true
	[ -s "$TEO_KUNIT_JSON" ]
}

# The cases of the last run that did not pass, comma-separated.
failed_cases() {
	python3 - "$TEO_KUNIT_JSON" <<'EOF'
import json
import sys


def failed(group):
    for case in group.get("test_cases", []):
        if case.get("status") != "PASS":
            yield case["name"]
    for sub in group.get("sub_groups", []):
        yield from failed(sub)


print(",".join(sorted(set(failed(json.load(open(sys.argv[1])))))))
EOF
}

t0=$SECONDS
note "the unchanged governor first"
run_copy || { tail -n 20 "$work/run.log" >&2; die "the suites do not build or run"; }
[ -z "$(failed_cases)" ] || die "the unchanged governor fails: $(failed_cases)"

bad=0
for m in "${mutants[@]}"; do
	name=$(basename "$m" .patch)
	t1=$SECONDS
	cp "$TEO_REPO/$gov/teo.c" "$TEO_REPO/$gov/teo.h" "$TEO_REPO/$gov/teo_trace.h" "$copy/$gov/"
	want=$(sed -n '1,/^$/s/^KUnit:[[:space:]]*//p' "$m" | tr ',' ' ')
	if [ -z "$want" ]; then
		note "mutant $name: no 'KUnit:' header"
		bad=1
		continue
	fi
	if ! patch -s -f -p1 --no-backup-if-mismatch -d "$copy" -i "$m" >/dev/null; then
		note "mutant $name: does not apply to $gov"
		bad=1
		continue
	fi
	if ! run_copy; then
		printf '%-24s %-14s (%d s; %s)\n' "$name" NO-BUILD \
			$((SECONDS - t1)) "$(grep -m1 -E 'error:' "$work/run.log" || true)"
		bad=1
		continue
	fi
	failed=$(failed_cases)
	verdict=killed
	for c in $want; do
		if [ "$c" = none ]; then
			verdict=claims-no-case
		elif [[ ",$failed," != *",$c,"* ]]; then
			verdict=SURVIVED
			bad=1
		fi
	done
	printf '%-24s %-14s failed: %s (%d s)\n' "$name" "$verdict" \
		"${failed:-none}" $((SECONDS - t1))
done

# Give the shared tree this repository's files back.
"$TEO_REPO/scripts/prepare-tree.sh" >/dev/null
note "mutation check: ${#mutants[@]} mutants in $((SECONDS - t0)) s"
[ "$bad" = 0 ] || die "a mutant survived, does not apply or does not build"
