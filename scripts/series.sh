#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Export the teo work as a git format-patch series, and check such a series.
set -eu
. "$(dirname "$0")/lib.sh"

SERIES_DIR=$TEO_REPO/series

usage() {
	cat <<EOF
usage: $teo_prog export [--version N] [--out DIR]
       $teo_prog check [DIR]
       $teo_prog --help

export  Build one commit per series/NN-*.commit on a git copy of the base
        tree, then write 'git format-patch --cover-letter --base' output to
        DIR (default: \$TEO_CACHE/series/out/vN).  Author and Signed-off-by
        come from your git config (user.name, user.email); To: and Cc: from
        the base tree's scripts/get_maintainer.pl; the cover letter carries
        series/cover-letter.txt and the latest replay and VM results.
        DIR must not exist or be empty.

check   Check the series in DIR, or a fresh export (with a throwaway
        identity) when DIR is not given:
          - 'git am' applies it to a fresh copy of the base tree;
          - every patch builds (W=1, no warnings): drivers/cpuidle/ with a
            minimal config that has CPU_IDLE, teo and its KUnit test;
          - checkpatch.pl --strict: no errors, warnings or checks;
          - kernel-doc -Wall is clean on every C file the series touches;
          - the kselftest directory builds with the kselftest Makefile;
          - Documentation/admin-guide/pm/teo.rst is valid reStructuredText,
            and 'make htmldocs SPHINXDIRS=admin-guide' (when Sphinx is
            installed) builds it with the DOC section of teo.c and gives
            no warning in a file of the series;
          - the KUnit suites pass in the tree the patches produced.

Each commit file holds 'Subject:', 'Files:' (overlay paths) and 'Edits:'
(series/edits/*.patch) lines, a blank line and the commit message body.
Every overlay path and every edit must be in exactly one commit.

Environment: KERNEL_SRC, TEO_CACHE (see scripts/prepare-tree.sh)
EOF
}

# Print field $2 ("Subject", "Files", "Edits") of commit file $1.
commit_field() {
	sed -n "1,/^\$/s/^$2:[[:space:]]*//p" "$1"
}

# Print the commit message (subject, blank line, body) of commit file $1.
commit_message() {
	commit_field "$1" Subject
	printf '\n'
	sed '1,/^$/d' "$1"
}

commit_files() {
	ls "$SERIES_DIR"/[0-9]*.commit 2>/dev/null ||
		die "no series/NN-*.commit files"
}

# Check that the series definition uses every overlay path and edit once.
check_definition() {
	local c path edit n subject
	for c in $(commit_files); do
		subject=$(commit_field "$c" Subject)
		[ -n "$subject" ] || die "${c#"$TEO_REPO"/}: no Subject: line"
		[ "${#subject}" -le 75 ] ||
			die "${c#"$TEO_REPO"/}: subject longer than 75 characters"
		for path in $(commit_field "$c" Files); do
			[ -e "$TEO_REPO/$path" ] ||
				die "${c#"$TEO_REPO"/}: $path does not exist"
		done
		for edit in $(commit_field "$c" Edits); do
			[ -f "$TEO_EDITS_DIR/$edit" ] ||
				die "${c#"$TEO_REPO"/}: series/edits/$edit does not exist"
		done
	done
	while IFS= read -r path; do
		n=$(for c in $(commit_files); do commit_field "$c" Files; done |
			tr ' ' '\n' | grep -cxF "$path" || true)
		[ "$n" = 1 ] || die "overlay path $path is in $n commits, must be in 1"
	done <<EOF
$TEO_OVERLAY_PATHS
EOF
	for edit in "$TEO_EDITS_DIR"/*.patch; do
		edit=${edit##*/}
		n=$(for c in $(commit_files); do commit_field "$c" Edits; done |
			tr ' ' '\n' | grep -cxF "$edit" || true)
		[ "$n" = 1 ] || die "edit $edit is in $n commits, must be in 1"
	done
}

# Set up (once) a git repository holding the base tree as one commit and
# print its path.  A clean git checkout is cloned so that base-commit names
# a real upstream commit; anything else is snapshotted.
base_repo() {
	local base=$1 repo=$2 tmp

	if [ -d "$repo/.git" ] && git -C "$repo" rev-parse -q --verify teo-base >/dev/null; then
		return
	fi
	# A few minutes of disk and CPU: keep benchmarks and builds away.
	build_lock
	rm -rf "$repo"
	mkdir -p "$(dirname "$repo")"
	tmp=$(mktemp -d "$repo.new.XXXXXX")
	if [ -d "$base/.git" ] && [ -z "$(git -C "$base" status --porcelain 2>/dev/null)" ]; then
		note "cloning $base (shared objects, your repository is not touched)"
		git clone -q --shared "$base" "$tmp/repo"
	else
		note "recording $base as a git commit (once; takes a few minutes)"
		mkdir -p "$tmp/repo"
		(cd "$base" && tar --exclude=.git --exclude=.teo-unpacked -cf - .) |
			(cd "$tmp/repo" && tar -xf -)
		git -C "$tmp/repo" init -q
		# -f: Debian's tree ignores everything at its top level.
		git -C "$tmp/repo" add -A -f
		GIT_AUTHOR_DATE="2000-01-01 00:00:00 +0000" GIT_COMMITTER_DATE="2000-01-01 00:00:00 +0000" \
			git -C "$tmp/repo" -c user.name=base -c user.email=base@invalid \
			commit -q -m "Linux $(kernel_version "$base") ($base)"
	fi
	git -C "$tmp/repo" branch -q -f teo-base HEAD
	mv "$tmp/repo" "$repo"
	rmdir "$tmp"
	build_unlock
}

# Apply the series definition as commits on branch teo-series of $1.
build_branch() {
	local repo=$1 name=$2 email=$3 c path edit msg

	git -C "$repo" checkout -q -f -B teo-series teo-base
	git -C "$repo" clean -q -f -d -x
	msg=$(mktemp)
	for c in $(commit_files); do
		for path in $(commit_field "$c" Files); do
			rm -rf "${repo:?}/$path"
			mkdir -p "$(dirname "$repo/$path")"
			cp -R "$TEO_REPO/$path" "$repo/$path"
			git -C "$repo" add -A -f -- "$path"
		done
		for edit in $(commit_field "$c" Edits); do
			git -C "$repo" apply --check "$TEO_EDITS_DIR/$edit" 2>/dev/null || {
				rm -f "$msg"
				die "series/edits/$edit does not apply to $(sed -n 's|^+++ b/||p' "$TEO_EDITS_DIR/$edit" | tr '\n' ' ')of the base"
			}
			git -C "$repo" apply --index "$TEO_EDITS_DIR/$edit"
		done
		commit_message "$c" > "$msg"
		git -C "$repo" -c user.name="$name" -c user.email="$email" \
			commit -q -s -F "$msg"
	done
	rm -f "$msg"
}

# Print "--to=..." and "--cc=..." arguments from get_maintainer.pl:
# maintainers go to To:, lists and reviewers to Cc:.
recipients() {
	local repo=$1 diff line addr out
	diff=$(mktemp)
	git -C "$repo" diff teo-base teo-series > "$diff"
	if ! out=$(cd "$repo" && perl scripts/get_maintainer.pl --no-git \
			--no-git-fallback "$diff" 2>&1); then
		rm -f "$diff"
		die "scripts/get_maintainer.pl failed: $out"
	fi
	rm -f "$diff"
	printf '%s\n' "$out" | while IFS= read -r line; do
		addr=${line%% (*}
		case $line in
		*"(maintainer:"*) printf -- '--to=%s\n' "$addr" ;;
		?*) printf -- '--cc=%s\n' "$addr" ;;
		esac
	done
}

# Turn a Markdown excerpt on stdin into mail text: no heading marks or
# bold, no trailing blank lines, bullets wrapped at 72 columns with their
# continuation indented.
plain_text() {
	sed -e 's/^## //' -e 's/\*\*//g' |
		awk '/^$/ { blank++; next }
		{ for (; blank > 0; blank--) print "" }
		!/^- / { print; next }
		{
			out = $1; len = length(out)
			for (i = 2; i <= NF; i++) {
				if (len + 1 + length($i) > 72) {
					print out; out = "  " $i
				} else {
					out = out " " $i
				}
				len = length(out)
			}
			print out
		}'
}

# Print the measured results the cover letter carries: the replay lab's
# differential check and its seed-thread comparison, and the VM benchmark.
measured_results() {
	local replay=$TEO_CACHE/replay vm=$TEO_CACHE/vm-bench/latest

	printf '\n'
	if [ -s "$replay/check/differential.log" ]; then
		printf 'Replay, old and new teo.c side by side:\n'
		grep -E '^differential|^regression gate' "$replay/check/differential.log" |
			sed 's/^/  /'
	else
		printf '(No replay check found: run scripts/teo replay check.)\n'
	fi
	printf '\n'
	if [ -s "$replay/report/report.md" ]; then
		sed -n "/^## The seed threads' direction/,/^## /p" \
			"$replay/report/report.md" | sed '$d' | plain_text
	else
		printf '(No replay report found: run scripts/teo replay report.)\n'
	fi
	printf '\n'
	if [ -s "$vm/bench/summary.txt" ]; then
		printf 'Workloads in the VM, %s:\n' "$(cat "$vm/title")"
		cat "$vm/bench/summary.txt"
	else
		printf '(No VM benchmark found: run scripts/teo run.)\n'
	fi
}

# Fill the subject and blurb of the cover letter $1.
fill_cover_letter() {
	local cover=$1 subject blurb
	subject=$(sed -n 's/^Subject:[[:space:]]*//p' "$SERIES_DIR/cover-letter.txt")
	blurb=$(mktemp)
	{
		sed '1,/^$/d' "$SERIES_DIR/cover-letter.txt"
		measured_results
	} > "$blurb"
	python3 - "$cover" "$subject" "$blurb" <<'PY'
import sys
path, subject, blurb = sys.argv[1], sys.argv[2], open(sys.argv[3]).read()
text = open(path).read()
if "*** SUBJECT HERE ***" not in text or "*** BLURB HERE ***" not in text:
    sys.exit("cover letter template not found in " + path)
text = text.replace("*** SUBJECT HERE ***", subject, 1)
text = text.replace("*** BLURB HERE ***", blurb.rstrip("\n"), 1)
open(path, "w").write(text)
PY
	rm -f "$blurb"
}

# Export the series into $out with identity $name <$email>.
export_series() {
	local out=$1 version=$2 name=$3 email=$4 slot base repo tmp rcpt_list
	local -a rcpt vopt=()

	check_definition
	if [ -e "$out" ] && [ -n "$(ls -A "$out" 2>/dev/null)" ]; then
		die "output folder $out is not empty; remove it or choose another with --out"
	fi
	slot=$("$TEO_REPO/scripts/prepare-tree.sh")
	base=$(cat "$slot/base")
	repo=$TEO_CACHE/series/$(basename "$slot")/repo
	base_repo "$base" "$repo"
	build_branch "$repo" "$name" "$email"
	rcpt_list=$(recipients "$repo")
	mapfile -t rcpt <<< "$rcpt_list"
	[ "$version" = 1 ] || vopt=(-v "$version")

	mkdir -p "$(dirname "$out")"
	tmp=$(mktemp -d "$out.tmp.XXXXXX")
	git -C "$repo" -c user.name="$name" -c user.email="$email" \
		format-patch -q --cover-letter --thread --base=teo-base \
		"${vopt[@]}" "${rcpt[@]}" -o "$tmp" teo-base..teo-series
	fill_cover_letter "$(ls "$tmp"/*0000-cover-letter.patch)"
	rmdir "$out" 2>/dev/null || true
	mv "$tmp" "$out"
	note "wrote $(find "$out" -name '*.patch' | wc -l) patches to $out"
	git -C "$repo" diff --stat teo-base teo-series >&2
}

cmd_export() {
	local version=1 out='' name email
	while [ $# -gt 0 ]; do
		case $1 in
		--version) version=${2:?--version needs a number}; shift ;;
		--out) out=${2:?--out needs a folder}; shift ;;
		--help|-h) usage; exit 0 ;;
		*) usage >&2; die "unknown argument '$1'" ;;
		esac
		shift
	done
	case $version in
	''|*[!0-9]*|0) die "--version must be a positive number" ;;
	esac
	name=$(git -C "$TEO_REPO" config user.name || true)
	email=$(git -C "$TEO_REPO" config user.email || true)
	if [ -z "$name" ] || [ -z "$email" ]; then
		die "no git identity: set user.name and user.email with git config (they sign the patches)"
	fi
	[ -n "$out" ] || out=$TEO_CACHE/series/out/v$version
	export_series "$out" "$version" "$name" "$email"
}

# ------------------------------------------------------------------ check

# Minimal configuration for building drivers/cpuidle at every patch.
STEP_CONFIG="CONFIG_64BIT=y
CONFIG_SMP=y
CONFIG_NO_HZ_IDLE=y
CONFIG_CPU_IDLE=y
CONFIG_CPU_IDLE_GOV_MENU=y
CONFIG_CPU_IDLE_GOV_TEO=y
CONFIG_KUNIT=y
CONFIG_CPU_IDLE_GOV_TEO_KUNIT_TEST=y"

check_failed=0
check_fail() {
	note "FAIL: $*"
	check_failed=1
}

# Configure the per-patch build folder $2 for the revision checked out in
# tree $1: allnoconfig with the options above forced on, as far as that
# revision's Kconfig knows them.  Print the objects that must then build.
configure_step_build() {
	local tree=$1 build=$2 opt name
	mkdir -p "$build"
	printf '%s\n' "$STEP_CONFIG" > "$build/step.config"
	(cd "$tree" && with_build_lock make -s O="$build" ARCH=x86_64 \
		KCONFIG_ALLCONFIG="$build/step.config" allnoconfig) >/dev/null
	for opt in $STEP_CONFIG; do
		name=${opt%%=*}
		grep -rqs "^config ${name#CONFIG_}\$" --include='Kconfig*' "$tree" ||
			continue
		grep -qxF "$opt" "$build/.config" ||
			check_fail "the per-patch config lost $opt"
	done
}

# The objects a revision of tree $1 must build: teo, and its KUnit test
# once the series has added it.
step_objects() {
	local tree=$1
	printf '%s\n' drivers/cpuidle/governors/teo.o
	[ ! -f "$tree/drivers/cpuidle/governors/tests/teo_kunit.c" ] ||
		printf '%s\n' drivers/cpuidle/governors/tests/teo_kunit.o
}

# Build drivers/cpuidle/ with W=1 at every commit of the am'd tree.
check_every_patch_builds() {
	local tree=$1 build=$2 rev subject out obj
	for rev in $(git -C "$tree" rev-list --reverse teo-base..HEAD); do
		subject=$(git -C "$tree" log -1 --format=%s "$rev")
		git -C "$tree" checkout -q "$rev"
		configure_step_build "$tree" "$build"
		# Build them anew: a stale object would hide a broken step.
		for obj in $(step_objects "$tree"); do
			rm -f "${build:?}/$obj"
		done
		if ! out=$(cd "$tree" && with_build_lock make -s O="$build" ARCH=x86_64 \
				CC="ccache gcc" W=1 -j"$(nproc)" drivers/cpuidle/ 2>&1); then
			printf '%s\n' "$out" >&2
			check_fail "build at '$subject'"
		elif printf '%s\n' "$out" | grep -E 'warning|error' >&2; then
			check_fail "W=1 warnings at '$subject'"
		else
			for obj in $(step_objects "$tree"); do
				[ -f "$build/$obj" ] ||
					check_fail "$obj was not built at '$subject'"
			done
			note "builds: $subject"
		fi
	done
	git -C "$tree" checkout -q teo-checked
}

check_checkpatch() {
	local tree=$1 dir=$2 p out
	for p in "$dir"/*.patch; do
		case $p in *0000-cover-letter.patch) continue ;; esac
		# FILE_PATH_CHANGES asks whether MAINTAINERS needs an update when
		# a patch adds a file; check_maintained answers it for the series.
		out=$(cd "$tree" && perl scripts/checkpatch.pl --strict --terse \
			--ignore FILE_PATH_CHANGES "$p" 2>&1) || true
		if printf '%s\n' "$out" | grep -qE '(ERROR|WARNING|CHECK):'; then
			printf '%s\n' "$out" >&2
			check_fail "checkpatch: ${p##*/}"
		else
			note "checkpatch --strict clean: ${p##*/}"
		fi
	done
}

# Every file the series adds must have a maintainer entry.
check_maintained() {
	local tree=$1 f out
	for f in $(git -C "$tree" diff --name-only --diff-filter=A teo-base HEAD); do
		out=$(cd "$tree" && perl scripts/get_maintainer.pl --no-git \
			--no-git-fallback -f "$f" 2>/dev/null)
		printf '%s\n' "$out" | grep -q 'CPU IDLE TIME MANAGEMENT FRAMEWORK' ||
			check_fail "$f is not covered by the CPU IDLE entry of MAINTAINERS"
	done
}

check_kernel_doc() {
	local tree=$1 f out
	for f in $(git -C "$tree" diff --name-only teo-base HEAD -- '*.c' '*.h'); do
		out=$(cd "$tree" && scripts/kernel-doc -none -Wall "$f" 2>&1)
		[ -z "$out" ] || { printf '%s\n' "$out" >&2; check_fail "kernel-doc: $f"; }
	done
}

check_selftests_build() {
	local tree=$1 out=$2
	mkdir -p "$out"
	if (cd "$tree" && make -s -C tools/testing/selftests TARGETS=cpuidle-teo \
			O="$out" >/dev/null 2>"$out.log"); then
		note "the cpuidle-teo kselftests build"
	else
		cat "$out.log" >&2
		check_fail "kselftest build of cpuidle-teo"
	fi
}

check_docs() {
	local tree=$1
	if python3 "$TEO_REPO/scripts/check-rst.py" "$tree" \
			Documentation/admin-guide/pm/teo.rst; then
		note "teo.rst is valid reStructuredText"
	else
		check_fail "teo.rst"
	fi
}

# The kernel's own Sphinx build of the admin guide, which holds every page
# the series touches.  Pages outside it make the other admin-guide pages
# warn about missing labels, so only warnings that name a file of the
# series count.
check_htmldocs() {
	local tree=$1 out=$2 html first warnings f
	local -a files
	if ! command -v sphinx-build >/dev/null 2>&1; then
		note "SKIP make htmldocs: sphinx-build is missing (apt-get install python3-sphinx)"
		return 0
	fi
	rm -rf "$out"
	mkdir -p "$out"
	if ! (cd "$tree" && make -s O="$out" SPHINXDIRS=admin-guide htmldocs) \
			> "$out.log" 2>&1; then
		tail -n 30 "$out.log" >&2
		check_fail "make htmldocs SPHINXDIRS=admin-guide (log: $out.log)"
		return 0
	fi
	mapfile -t files < <(git -C "$tree" diff --name-only teo-base HEAD -- \
		Documentation drivers/cpuidle/governors/teo.c)
	warnings=
	for f in "${files[@]}"; do
		warnings+=$(grep -F "/$f:" "$out.log" | grep -E 'WARNING|ERROR' || true)
	done
	if [ -n "$warnings" ]; then
		printf '%s\n' "$warnings" >&2
		check_fail "make htmldocs warns about the series' files"
	fi
	# The page must carry the DOC: section pulled from teo.c.
	html=$out/Documentation/output/admin-guide/pm/teo.html
	first=$(sed -n '/DOC: teo-description/,/\*\//p' \
		"$tree/drivers/cpuidle/governors/teo.c" | sed -n '/DOC:/!s/^ \* //p' |
		head -n 1 | cut -d' ' -f1-5)
	if [ -n "$first" ] && grep -qF "$first" "$html" 2>/dev/null; then
		note "make htmldocs: teo.html built with the DOC section of teo.c, no warnings in the series' files"
	else
		check_fail "make htmldocs: $html lacks the DOC section of teo.c"
	fi
}

check_kunit_in_tree() {
	local tree=$1 build=$2 log=$2.out summary
	if (cd "$tree" && with_build_lock python3 tools/testing/kunit/kunit.py run \
			--arch=x86_64 --build_dir="$build" --jobs="$(nproc)" \
			--kunitconfig="$tree/drivers/cpuidle/governors/.kunitconfig" \
			--make_options="CC=ccache gcc") > "$log" 2>&1; then
		summary=$(grep -E 'Testing complete\. Ran' "$log" | tail -n 1)
		note "KUnit in the patched tree: $summary"
		case $summary in
		*"Ran 0 tests"*|"") check_fail "KUnit ran no tests in the patched tree" ;;
		esac
	else
		tail -n 30 "$log" >&2
		check_fail "KUnit in the patched tree (log: $log)"
	fi
}

cmd_check() {
	local dir=${1:-} slot base repo work tree
	case $dir in --help|-h) usage; exit 0 ;; esac
	need_cmd git perl python3 make
	slot=$("$TEO_REPO/scripts/prepare-tree.sh")
	base=$(cat "$slot/base")
	work=$TEO_CACHE/series/$(basename "$slot")
	repo=$work/repo
	if [ -z "$dir" ]; then
		dir=$work/check-export
		rm -rf "$dir"
		export_series "$dir" 1 "teo series check" "check@invalid"
	fi
	local -a patches=()
	local p
	for p in "$dir"/*.patch; do
		case $p in
		*0000-cover-letter.patch) ;;
		*) [ -f "$p" ] && patches+=("$p") ;;
		esac
	done
	[ ${#patches[@]} -gt 0 ] || die "$dir holds no patches"
	base_repo "$base" "$repo"

	# A fresh checkout of the base at a fixed path, so that builds in it
	# stay incremental from one check to the next.
	tree=$work/src
	git -C "$repo" worktree remove --force "$tree" 2>/dev/null || rm -rf "$tree"
	git -C "$repo" worktree prune
	git -C "$repo" worktree add -q -f -B teo-checked "$tree" teo-base
	if ! git -C "$tree" -c user.name=check -c user.email=check@invalid \
			am -q "${patches[@]}"; then
		git -C "$tree" am --abort 2>/dev/null || true
		die "the series does not apply to the base with git am"
	fi
	note "git am: ${#patches[@]} patches apply to $(kernel_version "$base")"

	check_checkpatch "$tree" "$dir"
	check_maintained "$tree"
	check_kernel_doc "$tree"
	check_docs "$tree"
	check_htmldocs "$tree" "$work/htmldocs"
	check_selftests_build "$tree" "$work/selftests"
	check_every_patch_builds "$tree" "$work/build-step"
	check_kunit_in_tree "$tree" "$work/build-kunit"
	[ $check_failed = 0 ] || die "series checks failed"
	note "series checks passed"
}

[ $# -gt 0 ] || { usage >&2; die "no command given"; }
cmd=$1
shift
case $cmd in
export) cmd_export "$@" ;;
check) cmd_check "$@" ;;
--help|-h|help) usage ;;
*) usage >&2; die "unknown command '$cmd'" ;;
esac
