#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Export the teo work as a patch series on a base tree, and check such a
# series.  Every claim the series makes about the base is computed here.
set -eu
. "$(dirname "$0")/lib.sh"

# TEO_SERIES_DIR: another series definition (a test fixture); its edits/
# must match the repository's, which scripts/prepare-tree.sh applies.
SERIES_DIR=${TEO_SERIES_DIR:-$TEO_REPO/series}
SERIES_DIR=$(cd "$SERIES_DIR" 2>/dev/null && pwd) ||
	die "series folder ${TEO_SERIES_DIR:-$TEO_REPO/series} does not exist"
# Diff: fields name paths relative to the folder holding series/.
SERIES_TOP=$(dirname "$SERIES_DIR")
EDITS_DIR=$SERIES_DIR/edits
BASE_EDITS_DIR=$SERIES_DIR/edits/base
GOV=drivers/cpuidle/governors
# A commit message or cover letter saying one of these about the governor
# must be true on the base: the differential finds no divergent decision.
NFC_CLAIMS='no functional change|not change what teo decides|same state and tick decision'
# Name of the branch left for 'b4 prep' in the series repository.
B4_BRANCH=b4/teo

usage() {
	cat <<EOF
usage: $teo_prog export [--version N] [--out DIR]
       $teo_prog check [DIR]
       $teo_prog files N DIR
       $teo_prog selftest
       $teo_prog --help

export  Commit the series on a git copy of the base tree and write 'git
        format-patch' output with a cover letter to DIR (default:
        \$TEO_CACHE/series/out/vN), and leave branch $B4_BRANCH in the series
        repository for 'b4 prep' (cover letter in its first, empty commit;
        To/Cc as trailers).  DIR must not exist or be empty.  Author and
        Signed-off-by come from your git config; To: and Cc: from the base
        tree's scripts/get_maintainer.pl (maintainers To, reviewers and
        lists Cc, every address it prints).
        For every commit that changes teo.c or teo.h, the replay lab
        compares the governor before it (the base's own teo.c for the
        first) with the one after it (scripts/replay.sh diff).  A message
        that claims no functional change while decisions diverge is
        refused, and so is one whose Differential: count for this base is
        not the lab's or is missing from its message; nothing is appended
        to a message (the counts go to a differentials.tsv that the
        export names at its end).
        The cover letter
        names the base (version and Debian package, or its git commit) and
        quotes lab results measured on this base and the newest VM
        benchmark on this base if one exists and is newer than the
        governor.  Anything it cannot establish stops the export with one
        line.

check   Check the series in DIR, or a fresh export when DIR is not given:
          - the Diff chain rebuilds the overlay byte for byte;
          - 'git am' applies it to a fresh copy of the base tree;
          - every patch builds (W=1, no warnings) with teo and its KUnit
            tests built in;
          - checkpatch.pl --strict: no errors, warnings or checks (the only
            one answered instead of fixed: a new file covered by MAINTAINERS);
          - every new file is in the CPU IDLE entry of MAINTAINERS, and the
            cover letter carries every address get_maintainer.pl prints;
          - kernel-doc -Wall, teo.rst as reStructuredText and in
            'make htmldocs', the kselftest build;
          - CONFIG_KUNIT=n: teo.o has the same code and section sizes as
            teo.c with its test hooks stripped;
          - the KUnit suites pass (kunit.py); one of their cases shows
            that they never write the statistics of the CPU they run on;
          - after a fresh export: branch $B4_BRANCH is a 'b4 prep' branch
            whose patches equal the exported ones.

files   Write the overlay files the first N commits lay in, as they are
        after commit N, to DIR: e.g. the teo.c a new commit's Diff starts
        from.

selftest  Check the definition parser, the base ranges and the Diff chain
        on a throwaway copy of the series (seconds, no kernel build).

The series: one series/NN-name.commit per commit, in the order of NN
(gaps are fine).  Header lines, a blank line, then the message body:
  Subject:     the subject line
  Files:       overlay paths (files or folders) the commit lays in
  Edits:       series/edits/*.patch to upstream files
  Base-edits:  RANGE:name.patch ... from series/edits/base/, applied only on
               bases in RANGE, to overlay files of this commit (e.g. the
               namespace macro of an older tree)
  Differential: RANGE:N ... for a commit that changes teo.c or teo.h: on a
               base in RANGE the lab's differential of the governor before
               and after it (scripts/replay.sh diff --counts) finds N
               divergent cases, and the message says N in its own words;
               both are checked.  A base no entry covers gets a note with
               the count to write.
  Diff:        series/NN-name.diff, a unified diff of overlay files made by
               this commit: the overlay holds only the final files, and
               each commit's files are the final ones with the Diffs of all
               later commits reverse-applied
series/cc: "Name <address>  # why" lines, people put on Cc for the whole
series next to what get_maintainer.pl names (a commit's own Cc: lines
go at the end of its message, as trailers).  The cover letter's text
before the shortlog has at most 60 lines of prose and 120 in all.
In the body (and in series/cover-letter.txt), text between a line
"[base RANGE]" and a line "[end]" is used only on bases in RANGE; a file
with such blocks must have one for the base.  RANGE: comma-separated
conditions on the base's VERSION.PATCHLEVEL, e.g. "6.12", ">=7.1",
">=6.13,<7.0".

Environment: KERNEL_SRC, TEO_CACHE (see scripts/prepare-tree.sh),
TEO_SERIES_DIR (another series folder)
EOF
}

# ------------------------------------------------------------ definition

commit_files() {
	ls "$SERIES_DIR"/[0-9]*.commit 2>/dev/null ||
		die "no NN-*.commit files in $SERIES_DIR"
}

# A path for messages: relative to the series' top folder.
rel() {
	printf '%s\n' "${1#"$SERIES_TOP"/}"
}

# Print header field $2 of commit file $1.
commit_field() {
	sed -n "1,/^\$/s/^$2:[[:space:]]*//p" "$1"
}

# Print "cc ADDRESS" for each address of series/cc: people who test teo,
# on Cc for the whole series in addition to what get_maintainer.pl names.
series_cc() {
	[ ! -f "$SERIES_DIR/cc" ] || sed -n 's/^\([^#[:space:]][^#]*[^#[:space:]]\)[[:space:]]*\(#.*\)\?$/cc \1/p' "$SERIES_DIR/cc"
}

# Print the Diff file of commit $1 as an absolute path, or nothing.
commit_diff() {
	local d
	d=$(commit_field "$1" Diff)
	[ -z "$d" ] || printf '%s/%s\n' "$SERIES_TOP" "$d"
}

# Print the files a unified diff $1 touches (its +++ and --- paths).
diff_paths() {
	sed -n -e 's|^+++ b/\([^[:space:]]*\).*|\1|p' \
		-e 's|^--- a/\([^[:space:]]*\).*|\1|p' "$1" | sort -u
}

# Print "X*256+Y" for a version "X.Y[.Z][-rcN]"; fail on anything else.
version_key() {
	local v=$1 major minor
	major=${v%%.*}
	minor=${v#*.}
	minor=${minor%%[!0-9]*}
	case "$major.$minor" in
	*[!0-9.]*|.*|*.) return 1 ;;
	esac
	printf '%d\n' $((major * 256 + minor))
}

# Check a RANGE: conditions like "6.12", ">=7.1", "<6.13" joined by commas.
valid_range() {
	local cond
	[ -n "$1" ] || return 1
	for cond in ${1//,/ }; do
		[[ $cond =~ ^(\>=|\<=|\>|\<|=)?[0-9]+\.[0-9]+$ ]] || return 1
	done
}

# Succeed if version $2 lies in RANGE $1.
range_matches() {
	local have want cond op
	have=$(version_key "$2") || return 1
	for cond in ${1//,/ }; do
		case $cond in
		'>='*) op=ge; cond=${cond#>=} ;;
		'<='*) op=le; cond=${cond#<=} ;;
		'>'*) op=gt; cond=${cond#>} ;;
		'<'*) op=lt; cond=${cond#<} ;;
		'='*) op=eq; cond=${cond#=} ;;
		*) op=eq ;;
		esac
		want=$(version_key "$cond") || return 1
		case $op in
		ge) [ "$have" -ge "$want" ] ;;
		le) [ "$have" -le "$want" ] ;;
		gt) [ "$have" -gt "$want" ] ;;
		lt) [ "$have" -lt "$want" ] ;;
		eq) [ "$have" -eq "$want" ] ;;
		esac || return 1
	done
}

# Print the body of file $1 (everything after its first blank line) for
# base version $2, keeping only the [base RANGE] blocks that match it.
# With $2 empty only the syntax is checked.  Fails with the reason on
# stderr; a file with blocks must have one for the base.
# shellcheck disable=SC2094 # note writes to stderr, not to the file read
resolve_blocks() {
	local file=$1 ver=$2 line n=0 inblock=0 keep=1 blocks=0 matched=0 range
	local body=0

	while IFS= read -r line || [ -n "$line" ]; do
		n=$((n + 1))
		if [ $body = 0 ]; then
			[ -n "$line" ] || body=1
			continue
		fi
		case $line in
		'[base '*']')
			if [ $inblock = 1 ]; then
				note "$(rel "$file"):$n: [base] inside a [base] block"
				return 1
			fi
			range=${line#\[base }
			range=${range%]}
			range=${range// /}
			if ! valid_range "$range"; then
				note "$(rel "$file"):$n: bad range '$range'"
				return 1
			fi
			inblock=1
			blocks=$((blocks + 1))
			keep=0
			if [ -z "$ver" ] || range_matches "$range" "$ver"; then
				keep=1
				matched=$((matched + 1))
			fi
			continue
			;;
		'[end]')
			if [ $inblock = 0 ]; then
				note "$(rel "$file"):$n: [end] without [base]"
				return 1
			fi
			inblock=0
			keep=1
			continue
			;;
		esac
		[ $keep = 0 ] || printf '%s\n' "$line"
	done < "$file"
	if [ $inblock = 1 ]; then
		note "$(rel "$file"): [base] block without [end]"
		return 1
	fi
	if [ $blocks -gt 0 ] && [ $matched = 0 ]; then
		note "$(rel "$file") has no [base ...] text for Linux $ver"
		return 1
	fi
}

# resolve_blocks with the blank-line runs of dropped blocks squeezed.
resolve_text() {
	local out
	out=$(resolve_blocks "$1" "$2") || return 1
	printf '%s\n' "$out" | cat -s
}

# Is path $1 one of the overlay paths or inside one?  Print that path.
overlay_path_of() {
	local p
	while IFS= read -r p; do
		case $1 in
		"$p"|"$p"/*) printf '%s\n' "$p"; return 0 ;;
		esac
	done <<EOF
$TEO_OVERLAY_PATHS
EOF
	return 1
}

# Check the series definition; die with the first problem found.
check_definition() {
	local c path edit n subject entry range name d earlier='' f
	for c in $(commit_files); do
		subject=$(commit_field "$c" Subject)
		[ -n "$subject" ] || die "$(rel "$c"): no Subject: line"
		[ "${#subject}" -le 75 ] ||
			die "$(rel "$c"): subject longer than 75 characters"
		for path in $(commit_field "$c" Files); do
			overlay_path_of "$path" >/dev/null ||
				die "$(rel "$c"): $path is not an overlay path (lib.sh TEO_OVERLAY_PATHS)"
			[ -e "$TEO_REPO/$path" ] ||
				die "$(rel "$c"): $path does not exist"
		done
		for edit in $(commit_field "$c" Edits); do
			[ -f "$EDITS_DIR/$edit" ] ||
				die "$(rel "$c"): $(rel "$EDITS_DIR/$edit") does not exist"
		done
		for entry in $(commit_field "$c" Base-edits); do
			range=${entry%%:*}
			name=${entry#*:}
			if [ "$range" = "$entry" ] || ! valid_range "$range"; then
				die "$(rel "$c"): Base-edits entry '$entry' is not RANGE:name.patch"
			fi
			[ -f "$BASE_EDITS_DIR/$name" ] ||
				die "$(rel "$c"): $(rel "$BASE_EDITS_DIR/$name") does not exist"
		done
		for entry in $(commit_field "$c" Differential); do
			range=${entry%%:*}
			if [ "$range" = "$entry" ] || ! valid_range "$range" ||
			   ! [[ ${entry#*:} =~ ^(0|[1-9][0-9]*)$ ]]; then
				die "$(rel "$c"): Differential entry '$entry' is not RANGE:N"
			fi
		done
		d=$(commit_diff "$c")
		if [ -n "$d" ]; then
			[ -f "$d" ] || die "$(rel "$c"): $(rel "$d") does not exist"
			[ -n "$(diff_paths "$d")" ] || die "$(rel "$d") is not a unified diff"
			for f in $(diff_paths "$d"); do
				path=$(overlay_path_of "$f") ||
					die "$(rel "$d") changes $f, which is not an overlay file (upstream files change through series/edits/)"
				case " $earlier " in
				*" $path "*) ;;
				*) die "$(rel "$d") changes $f before a commit adds it (Files: of an earlier commit)" ;;
				esac
			done
		fi
		resolve_text "$c" '' >/dev/null || die "$(rel "$c"): bad [base] blocks"
		earlier="$earlier $(commit_field "$c" Files | tr '\n' ' ')"
	done
	resolve_text "$SERIES_DIR/cover-letter.txt" '' >/dev/null ||
		die "$(rel "$SERIES_DIR/cover-letter.txt"): bad [base] blocks"
	if [ -f "$SERIES_DIR/cc" ]; then
		n=$(grep -vcE '^[[:space:]]*(#|$)|^[^<>#]+ <[^<>@[:space:]]+@[^<>[:space:]]+>[[:space:]]*(#.*)?$' \
			"$SERIES_DIR/cc" || true)
		[ "$n" = 0 ] || die "$(rel "$SERIES_DIR/cc"): $n line(s) are not 'Name <address>  # why'"
	fi
	while IFS= read -r path; do
		n=$(for c in $(commit_files); do commit_field "$c" Files; done |
			tr ' ' '\n' | grep -cxF "$path" || true)
		[ "$n" = 1 ] || die "overlay path $path is in $n commits, must be in 1"
	done <<EOF
$TEO_OVERLAY_PATHS
EOF
	for edit in "$EDITS_DIR"/*.patch; do
		edit=${edit##*/}
		n=$(for c in $(commit_files); do commit_field "$c" Edits; done |
			tr ' ' '\n' | grep -cxF "$edit" || true)
		[ "$n" = 1 ] || die "edit $edit is in $n commits, must be in 1"
	done
	for edit in "$BASE_EDITS_DIR"/*.patch; do
		[ -e "$edit" ] || continue
		edit=${edit##*/}
		n=$(for c in $(commit_files); do commit_field "$c" Base-edits; done |
			tr ' ' '\n' | sed 's/^[^:]*://' | grep -cxF "$edit" || true)
		[ "$n" = 1 ] || die "base edit $edit is in $n commits, must be in 1"
	done
}

# ------------------------------------------------------- the Diff chain

# Apply diff $1 to the files under folder $2 (reverse with $3 = -R); on a
# failure die naming the diff and the file.
apply_overlay_diff() {
	local d=$1 dir=$2 out file how=applies
	local -a dirn=()
	[ -z "${3:-}" ] || { dirn=(-R); how=reverse-applies; }
	if ! out=$(patch -f "${dirn[@]}" -p1 --fuzz=0 --dry-run -d "$dir" -i "$d" 2>&1); then
		file=$(printf '%s\n' "$out" | awk '
			/^checking file / { f = $3 }
			/FAILED|No file to patch|malformed|Only garbage/ { print f; exit }')
		die "$(rel "$d") no longer $how to ${file:-$(diff_paths "$d" | tr '\n' ' ')}: $(printf '%s\n' "$out" | grep -m1 -E 'FAILED|No file|malformed|garbage')"
	fi
	patch -f "${dirn[@]}" -p1 --fuzz=0 -s --no-backup-if-mismatch -d "$dir" -i "$d" >/dev/null
}

# Copy the overlay files of the repository to folder $1.
copy_overlay() {
	local dir=$1 path
	mkdir -p "$dir"
	while IFS= read -r path; do
		[ -e "$TEO_REPO/$path" ] || continue
		mkdir -p "$dir/$(dirname "$path")"
		# A folder left by an earlier run would receive a nested copy.
		rm -rf "${dir:?}/$path"
		cp -R "$TEO_REPO/$path" "$dir/$path"
	done <<EOF
$TEO_OVERLAY_PATHS
EOF
}

# Write into $1/K the overlay files as they are after commit K, for every
# K from the number of commits down to 0: the final files, then each
# commit's Diff reverse-applied, latest first.
build_snapshots() {
	local dir=$1 k d
	local -a commits
	mapfile -t commits < <(commit_files)
	rm -rf "$dir"
	k=${#commits[@]}
	copy_overlay "$dir/$k"
	for ((; k > 0; k--)); do
		cp -R "$dir/$k" "$dir/$((k - 1))"
		d=$(commit_diff "${commits[k - 1]}")
		[ -z "$d" ] || apply_overlay_diff "$d" "$dir/$((k - 1))" -R
	done
}

# The chain must be exact: from the files before the first commit, every
# Diff applied in order gives the overlay byte for byte.
check_chain() {
	local dir=$1 c d k=0 n
	n=$(commit_files | wc -l)
	build_snapshots "$dir/snap"
	rm -rf "$dir/forward"
	cp -R "$dir/snap/0" "$dir/forward"
	for c in $(commit_files); do
		k=$((k + 1))
		d=$(commit_diff "$c")
		[ -z "$d" ] || apply_overlay_diff "$d" "$dir/forward"
	done
	# Afresh: a file the overlay no longer has must not linger from a
	# check before.
	rm -rf "$dir/overlay"
	copy_overlay "$dir/overlay"
	if ! diff -r "$dir/forward" "$dir/overlay" >&2; then
		die "the Diff chain of the series does not rebuild the overlay"
	fi
	[ "$k" = "$n" ]
	n=$(for c in $(commit_files); do commit_diff "$c"; done | wc -l)
	note "Diff chain: $n Diff: file(s) reverse-apply and re-apply to the overlay byte for byte"
}

cmd_files() {
	local k=${1:-} dir=${2:-} n
	[ $# -eq 2 ] || die "files needs N and DIR"
	n=$(commit_files | wc -l)
	case $k in ''|*[!0-9]*) die "files: N must be 0..$n" ;; esac
	[ "$k" -le "$n" ] || die "files: N must be 0..$n"
	[ ! -e "$dir" ] || [ -z "$(ls -A "$dir")" ] || die "$dir is not empty"
	check_definition
	local tmp c path i=0
	tmp=$(mktemp -d)
	build_snapshots "$tmp"
	mkdir -p "$dir"
	# Only what the first N commits have laid in.
	for c in $(commit_files); do
		i=$((i + 1))
		[ "$i" -le "$k" ] || break
		for path in $(commit_field "$c" Files); do
			mkdir -p "$dir/$(dirname "$path")"
			cp -R "$tmp/$k/$path" "$dir/$path"
		done
	done
	rm -rf "$tmp"
	note "overlay files after commit $k ($(find "$dir" -type f | wc -l) files) in $dir"
}

# ------------------------------------------------------- the base tree

# "7.3.0-rc7": the release string of tree $1, as uname -r shows it.
base_release() {
	local mk=$1/Makefile extra
	extra=$(sed -n 's/^EXTRAVERSION = *//p' "$mk")
	printf '%s%s\n' "$(kernel_version "$1")" "$extra"
}

# "7.3-rc7" or "6.12.117": the version as releases are named.
base_name() {
	local mk=$1/Makefile v p s extra
	v=$(sed -n 's/^VERSION = //p' "$mk")
	p=$(sed -n 's/^PATCHLEVEL = //p' "$mk")
	s=$(sed -n 's/^SUBLEVEL = //p' "$mk")
	extra=$(sed -n 's/^EXTRAVERSION = *//p' "$mk")
	if [ "${s:-0}" = 0 ]; then
		printf '%s.%s%s\n' "$v" "$p" "$extra"
	else
		printf '%s.%s.%s%s\n' "$v" "$p" "$s" "$extra"
	fi
}

# Upstream part of a Debian version, as the kernel names it:
# "7.3~rc7-1~exp1" -> "7.3-rc7", "6.12.117-1~deb12u1" -> "6.12.117".
debian_upstream() {
	local v=${1#*:}
	v=${v%-*}
	printf '%s\n' "${v//\~/-}"
}

# Print "PACKAGE VERSION" of the Debian linux-source package tree $1 was
# unpacked from, when dpkg or the apt lists scripts/fetch-source.sh used
# confirm it: the package's upstream version must be the tree's.
base_package() {
	local base=$1 pkg ver name apt_dir rec_pkg=
	pkg=$(basename "$base")
	case $pkg in linux-source-[0-9]*) ;; *) return 1 ;; esac
	name=$(base_name "$base")
	# What the unpacking recorded, if it did: "PACKAGE VERSION".
	[ ! -f "$base/.teo-unpacked" ] || read -r rec_pkg ver < "$base/.teo-unpacked" || true
	if [ "${rec_pkg:-}" = "$pkg" ] && [ -n "${ver:-}" ] &&
	   [ "$(debian_upstream "$ver")" = "$name" ]; then
		printf '%s %s
' "$pkg" "$ver"
		return 0
	fi
	ver=$(dpkg-query -W -f='${Version}' "$pkg" 2>/dev/null || true)
	if [ -n "$ver" ] && [ "$(debian_upstream "$ver")" = "$name" ]; then
		printf '%s %s\n' "$pkg" "$ver"
		return 0
	fi
	# fetch-source.sh unpacks into CACHE/base/PKG with its lists in CACHE/apt.
	apt_dir=$(dirname "$(dirname "$base")")/apt
	[ -f "$apt_dir/sources.list" ] || return 1
	ver=$(apt-cache -o "Dir::Etc::sourcelist=$apt_dir/sources.list" \
		-o Dir::Etc::sourceparts=- -o "Dir::State::Lists=$apt_dir/lists" \
		-o "Dir::Cache=$apt_dir/cache" madison "$pkg" 2>/dev/null |
		awk -F'|' '{ gsub(/ /, "", $2); print $2 }' | sort -u)
	[ -n "$ver" ] && [ "$(printf '%s\n' "$ver" | wc -l)" = 1 ] || return 1
	[ "$(debian_upstream "$ver")" = "$name" ] || return 1
	printf '%s %s\n' "$pkg" "$ver"
}

# Set BASE_NAME, BASE_RELEASE, BASE_GIT and BASE_TEXT (the cover letter's
# sentence naming the base) for tree $1, or die.
identify_base() {
	local base=$1 pkg
	BASE_NAME=$(base_name "$base")
	BASE_RELEASE=$(base_release "$base")
	BASE_GIT=0
	if [ -d "$base/.git" ] && [ -z "$(git -C "$base" status --porcelain 2>/dev/null)" ]; then
		BASE_GIT=1
		BASE_TEXT="Based on Linux $BASE_NAME, the upstream commit named by base-commit below."
	elif pkg=$(base_package "$base"); then
		BASE_TEXT="Based on Linux $BASE_NAME as Debian ships it: package ${pkg% *}, version ${pkg#* }.  That tree carries no git history, so no base-commit is given."
	else
		die "cannot name the base: $base is neither a clean git checkout nor an unpacked Debian linux-source package whose version dpkg or fetch-source.sh's apt lists confirm"
	fi
}

# Set up (once) a git repository holding the base tree as one commit.  A
# clean git checkout is cloned, so teo-base is a real upstream commit;
# anything else is recorded as one commit, which is never named upstream.
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
		# A scratch repository: packing its 80000 loose objects in an
		# automatic gc after the series' commits only costs time.
		git -C "$tmp/repo" config gc.auto 0
		# -f: Debian's tree ignores everything at its top level.
		git -C "$tmp/repo" add -A -f
		git -C "$tmp/repo" -c user.name=base -c user.email=base@invalid \
			commit -q -m "Linux $(base_name "$base") ($base)"
	fi
	git -C "$tmp/repo" branch -q -f teo-base HEAD
	mv "$tmp/repo" "$repo"
	rmdir "$tmp"
	build_unlock
}

# ------------------------------------------------------- building commits

# Print the base edits (absolute paths) of commit file $1 that apply to
# base version $2.
base_edits_of() {
	local entry
	for entry in $(commit_field "$1" Base-edits); do
		! range_matches "${entry%%:*}" "$2" ||
			printf '%s\n' "$BASE_EDITS_DIR/${entry#*:}"
	done
}

# Apply base edit $2 in repository $1 at commit $3 on Linux $4, or die.
apply_base_edit() {
	git -C "$1" apply --check "$2" 2>/dev/null ||
		die "$(rel "$2") does not apply to $(diff_paths "$2" | tr '\n' ' ')at $(rel "$3") on Linux $4"
	git -C "$1" apply "$2"
}

# Pass 1: lay each commit's files into the repository and record its tree
# (in $ew/tree/K) and its message for base $ver (in $ew/msg/K).  The
# commits are scratch ones; write_branch makes the real ones.
build_trees() {
	local repo=$1 ew=$2 ver=$3 k=0 c path edit f d written applied='' e
	git -C "$repo" checkout -q -f -B teo-scratch teo-base
	git -C "$repo" clean -q -f -d -x
	mkdir -p "$ew/tree" "$ew/msg"
	for c in $(commit_files); do
		k=$((k + 1))
		written=
		for path in $(commit_field "$c" Files); do
			rm -rf "${repo:?}/$path"
			mkdir -p "$(dirname "$repo/$path")"
			cp -R "$ew/snap/$k/$path" "$repo/$path"
			written="$written $path"
		done
		d=$(commit_diff "$c")
		if [ -n "$d" ]; then
			for f in $(diff_paths "$d"); do
				rm -f "$repo/$f"
				[ ! -e "$ew/snap/$k/$f" ] || cp "$ew/snap/$k/$f" "$repo/$f"
				written="$written $f"
			done
		fi
		for edit in $(commit_field "$c" Edits); do
			git -C "$repo" apply --check "$EDITS_DIR/$edit" 2>/dev/null ||
				die "$(rel "$EDITS_DIR/$edit") does not apply to $(diff_paths "$EDITS_DIR/$edit" | tr '\n' ' ')of Linux $ver"
			git -C "$repo" apply "$EDITS_DIR/$edit"
			written="$written $(diff_paths "$EDITS_DIR/$edit" | tr '\n' ' ')"
		done
		# Base edits of earlier commits again where this one rewrote
		# their files, then this commit's own.
		for e in $applied; do
			for f in $(diff_paths "$e"); do
				case " $written " in
				*" $f "*|*" $(overlay_path_of "$f") "*) ;;
				*) continue ;;
				esac
				apply_base_edit "$repo" "$e" "$c" "$ver"
				break
			done
		done
		for e in $(base_edits_of "$c" "$ver"); do
			apply_base_edit "$repo" "$e" "$c" "$ver"
		done
		applied="$applied $(base_edits_of "$c" "$ver" | tr '\n' ' ')"
		# shellcheck disable=SC2086 # a list of paths without spaces
		git -C "$repo" add -A -f -- $written
		[ -n "$(git -C "$repo" status --porcelain)" ] ||
			die "$(rel "$c") changes nothing on Linux $ver"
		git -C "$repo" -c user.name=scratch -c user.email=scratch@invalid \
			commit -q -m "scratch $k"
		git -C "$repo" rev-parse 'HEAD^{tree}' > "$ew/tree/$k"
		{
			commit_field "$c" Subject
			printf '\n'
			resolve_text "$c" "$ver" || die "$(rel "$c"): no message for Linux $ver"
		} | cat -s > "$ew/msg/$k"
	done
}

# Pass 2: commit the recorded trees with their final messages on branch
# teo-series, signed off by $3 <$4>.
write_branch() {
	local repo=$1 ew=$2 name=$3 email=$4 k=0 parent c
	parent=$(git -C "$repo" rev-parse teo-base)
	for c in $(commit_files); do
		k=$((k + 1))
		git -C "$repo" interpret-trailers --in-place \
			--trailer "Signed-off-by: $name <$email>" "$ew/msg/$k"
		parent=$(GIT_AUTHOR_NAME=$name GIT_AUTHOR_EMAIL=$email \
			GIT_COMMITTER_NAME=$name GIT_COMMITTER_EMAIL=$email \
			git -C "$repo" commit-tree "$(cat "$ew/tree/$k")" -p "$parent" \
			-F "$ew/msg/$k")
	done
	git -C "$repo" update-ref refs/heads/teo-series "$parent"
	git -C "$repo" checkout -q -f teo-series
	git -C "$repo" branch -q -D teo-scratch
}

# ------------------------------------------------- behaviour, measured

# Copy the governor of tree $2 in revision $1 of repository $3 (teo.c, its
# headers) into folder $4, so that the lab compiles it as that tree would.
extract_governor() {
	local rev=$1 repo=$2 dir=$3 f
	mkdir -p "$dir"
	for f in teo.c teo.h teo_trace.h gov.h; do
		git -C "$repo" cat-file -e "$rev:$GOV/$f" 2>/dev/null || continue
		git -C "$repo" show "$rev:$GOV/$f" > "$dir/$f"
	done
}

# The lab's differentials of a chain of governor sources $3... on base $1:
# each with the next, in one build of the lab (replay.sh diff --counts);
# the table of counts, one row per pair, goes to file $2.
lab_differentials() {
	local base=$1 tsv=$2
	shift 2
	KERNEL_SRC=$base "$TEO_REPO/scripts/replay.sh" diff --counts "$tsv" "$@" \
		>/dev/null 2>"$ew/lab-diff.log" ||
		{ cat "$ew/lab-diff.log" >&2; die "scripts/replay.sh diff failed; the series makes no claim it cannot check"; }
	[ "$(wc -l < "$tsv")" = $# ] ||
		die "scripts/replay.sh diff wrote $(($(wc -l < "$tsv") - 1)) rows of counts to $tsv for $(($# - 1)) pairs"
}

# Run the lab's report on base $1 with the governors "LABEL=PATH" given
# next; results in $ew/lab/results.tsv.
lab_report() {
	local base=$1 arg
	local -a govs=()
	shift
	for arg in "$@"; do
		govs+=(--gov "$arg")
	done
	rm -rf "$ew/lab"
	KERNEL_SRC=$base "$TEO_REPO/scripts/replay.sh" report --out "$ew/lab" \
		"${govs[@]}" > "$ew/lab-report.log" 2>&1 ||
		{ tail -n 20 "$ew/lab-report.log" >&2; die "scripts/replay.sh report failed; no measured numbers, no series"; }
	[ -s "$ew/lab/results.tsv" ] || die "the lab report wrote no results.tsv"
}

# Print a plain-text table of the lab's results.tsv $2.  This is the one
# place that knows the lab's result format.
#   lab_table families FILE LABEL:TITLE...
#     per scenario family, the median energy (% of the yardstick) and miss
#     (% of entries) of each governor label; with two labels, also the runs
#     where the second is more than 1 % worse or better in energy than the
#     first;
#   lab_table baselines FILE LABEL TITLE
#     LABEL against the baselines of the run (the teo and menu of the base
#     and mainline trees, labels "teo-X.Y" and "menu-X.Y"): per family, the
#     baseline with the lowest median energy, its medians and LABEL's, and
#     the runs where LABEL spends more than 5 % above the best baseline of
#     that run.
lab_table() {
	python3 - "$@" <<'PY'
import csv, re, statistics, sys
mode, path, args = sys.argv[1], sys.argv[2], sys.argv[3:]
rows = list(csv.DictReader(open(path), delimiter="\t"))
need = {"scenario", "family", "platform", "governor", "energy_pct", "miss_pct"}
if not rows or not need <= set(rows[0]):
    sys.exit("lab results: %s lacks the columns %s" % (path, ", ".join(sorted(need))))
runs, fams = {}, []
for r in rows:
    if r["family"] not in fams:
        fams.append(r["family"])
    runs.setdefault(r["governor"], {})[(r["family"], r["scenario"], r["platform"])] = (
        float(r["energy_pct"]), float(r["miss_pct"]))

def keys_of(label, fam):
    return [k for k in runs[label] if fam == "all" or k[0] == fam]

def median(label, keys, i):
    return statistics.median(runs[label][k][i] for k in keys)

def families(cols):
    for label, _ in cols:
        if label not in runs:
            sys.exit("lab results: no rows for governor " + label)
    pair = len(cols) == 2
    head = "  family "
    for _, title in cols:
        head += " %15s" % title[:15]
    print(head + ("  energy >1% worse/better" if pair else ""))
    print("         " + "".join("   energy   miss" for _ in cols))
    for fam in fams + ["all"]:
        keys = keys_of(cols[0][0], fam)
        line = "  %-7s" % fam
        for label, _ in cols:
            line += "  %7.1f %6.2f" % (median(label, keys, 0), median(label, keys, 1))
        if pair:
            a, b = cols[0][0], cols[1][0]
            worse = sum(runs[b][k][0] > runs[a][k][0] * 1.01 for k in keys)
            better = sum(runs[b][k][0] < runs[a][k][0] * 0.99 for k in keys)
            line += "    %4d/%d of %d runs" % (worse, better, len(keys))
        print(line)

def baselines(ours, title):
    bases = sorted(g for g in runs if re.fullmatch(r"(teo|menu)-[0-9]+\.[0-9]+", g))
    if ours not in runs or not bases:
        sys.exit("lab results: no rows for %s or for any baseline" % ours)
    print("  family  best baseline    its median    %6s median  >5 %% above" % title[:6])
    print("                          energy   miss   energy   miss  best, runs")
    for fam in fams + ["all"]:
        keys = keys_of(ours, fam)
        best = min(bases, key=lambda g: (median(g, keys, 0), median(g, keys, 1)))
        lost = sum(runs[ours][k][0] > 1.05 * min(runs[g][k][0] for g in bases)
                   for k in keys)
        print("  %-7s %-13s  %7.1f %6.2f  %7.1f %6.2f  %4d of %d" % (
            fam, best, median(best, keys, 0), median(best, keys, 1),
            median(ours, keys, 0), median(ours, keys, 1), lost, len(keys)))

if mode == "families":
    families([c.split(":", 1) for c in args])
elif mode == "baselines" and len(args) == 2:
    baselines(*args)
else:
    sys.exit("lab_table: unknown mode or arguments: " + " ".join(sys.argv[1:]))
PY
}

# Does the text in file $1 claim that teo's decisions do not change?
claims_no_change() {
	grep -qiE "$NFC_CLAIMS" "$1"
}

# Wrap text on stdin at 72 columns, paragraph by paragraph.
wrap72() {
	fmt -w 72 -g 70
}

# Print the Differential: count commit file $1 gives for base version $2,
# or nothing when no entry covers it.
commit_differential() {
	local entry
	for entry in $(commit_field "$1" Differential); do
		if range_matches "${entry%%:*}" "$2"; then
			printf '%s\n' "${entry#*:}"
			return
		fi
	done
}

# Check the measured count $3 of commit file $1 (message file $2) against
# its Differential: entry for this base: the same number, and the message
# says it.  Without an entry, a note names the count to write (none for a
# count of 0: "no functional change" claims are checked on their own).
check_differential() {
	local c=$1 msg=$2 got=$3 want
	want=$(commit_differential "$c" "$BASE_NAME")
	if [ -z "$want" ]; then
		[ "$got" = 0 ] ||
			note "$(rel "$c"): no Differential: entry for Linux $BASE_NAME; the lab counts $got divergent cases"
		return
	fi
	[ "$want" = "$got" ] ||
		die "$(rel "$c") says Differential: $want for Linux $BASE_NAME, but the lab counts $got divergent cases (scripts/replay.sh diff)"
	[ "$got" = 0 ] || grep -qw -- "$got" "$msg" ||
		die "$(rel "$c"): its message does not state its differential count $got for Linux $BASE_NAME"
}

# For every commit that changes teo.c or teo.h: compare the governor before
# and after it in the lab, refuse false "no functional change" claims and
# check its Differential: count (check_differential); the counts go to
# $ew/differentials.tsv, and into no message.  Also measure the whole
# series against the base for the cover letter (sets SERIES_DIVERGENT).
judge_behaviour() {
	local repo=$1 ew=$2 base=$3 k=0 c rev prev prev_label label
	local runs decisions divergent n before
	local -a changed=() labels=()
	mkdir -p "$ew/gov"
	printf 'commit\tbase\truns\tdecisions\tdivergent\n' > "$ew/differentials.tsv"
	prev=$base/$GOV/teo.c
	prev_label="base-teo"
	labels=("base-teo=$base/$GOV/teo.c" "base-menu=$base/$GOV/menu.c")
	n=$(commit_files | wc -l)
	for ((k = 1; k <= n; k++)); do
		rev=$(git -C "$repo" rev-parse "teo-scratch~$((n - k))")
		before="teo-base"
		[ "$k" = 1 ] || before=$rev~1
		git -C "$repo" diff --quiet "$before" "$rev" -- "$GOV/teo.c" "$GOV/teo.h" &&
			continue
		label=p$(printf '%02d' "$k")
		extract_governor "$rev" "$repo" "$ew/gov/$label"
		changed+=("$k:$label")
		labels+=("$label=$ew/gov/$label/teo.c")
		prev=$ew/gov/$label/teo.c
		prev_label=$label
	done
	FINAL_LABEL=$prev_label
	FINAL_TEO=$prev
	note "replay lab on Linux $BASE_NAME: ${#changed[@]} commit(s) change the governor"
	# The cover letter quotes the base's teo and menu and the final teo;
	# each commit's own effect is its message's, checked against the
	# differentials below.
	lab_report "$base" "${labels[0]}" "${labels[1]}" "$FINAL_LABEL=$FINAL_TEO"
	SERIES_DIVERGENT=0
	[ ${#changed[@]} -gt 0 ] || return 0
	# The chain runs from the base's teo through each commit's and back to
	# the base's: the last pair is the whole series.
	local item chain_tsv=$ew/lab-differentials.tsv
	local -a chain=("$base/$GOV/teo.c")
	for item in "${changed[@]}"; do
		chain+=("$ew/gov/${item#*:}/teo.c")
	done
	lab_differentials "$base" "$chain_tsv" "${chain[@]}" "$base/$GOV/teo.c"
	local row=1 rdiv
	for item in "${changed[@]}"; do
		k=${item%%:*}
		row=$((row + 1))
		IFS=$'\t' read -r _ _ runs decisions divergent _ _ rdiv < <(sed -n "${row}p" "$chain_tsv")
		divergent=$((divergent + rdiv))
		c=$(commit_files | sed -n "${k}p")
		note "$(rel "$c"): $divergent divergent cases ($runs scenario runs plus random tables, $decisions decisions)"
		printf '%s\t%s\t%s\t%s\t%s\n' "$(rel "$c")" "$BASE_NAME" "$runs" "$decisions" \
			"$divergent" >> "$ew/differentials.tsv"
		if [ "$divergent" != 0 ] && claims_no_change "$ew/msg/$k"; then
			die "$(rel "$c") claims no functional change, but on Linux $BASE_NAME its governor decides differently from the one before it in $divergent cases ($runs scenario runs plus random tables; scripts/replay.sh diff)"
		fi
		check_differential "$c" "$ew/msg/$k" "$divergent"
	done
	IFS=$'\t' read -r _ _ SERIES_RUNS SERIES_DECISIONS SERIES_DIVERGENT _ _ rdiv < <(tail -n 1 "$chain_tsv")
	SERIES_DIVERGENT=$((SERIES_DIVERGENT + rdiv))
}

# ------------------------------------------------------- cover letter

# Newest time teo.c or teo.h of the repository changed: the last commit
# that touched them, or, with uncommitted edits, the files' own times.  A
# fresh checkout's file times say nothing (they are the checkout's).
governor_changed_at() {
	local t f latest
	latest=$(git -C "$TEO_REPO" log -1 --format=%ct -- "$GOV/teo.c" "$GOV/teo.h" 2>/dev/null || echo 0)
	if git -C "$TEO_REPO" diff --quiet HEAD -- "$GOV/teo.c" "$GOV/teo.h" 2>/dev/null; then
		printf '%s\n' "${latest:-0}"
		return
	fi
	for f in "$GOV/teo.c" "$GOV/teo.h"; do
		t=$(stat -c %Y "$TEO_REPO/$f" 2>/dev/null || echo 0)
		[ "$t" -le "${latest:-0}" ] || latest=$t
	done
	printf '%s\n' "${latest:-0}"
}

# Print the VM section of the cover letter for base release $1: the newest
# scripts/teo run result newer than the governor whose guest ran this base
# (setup.txt's "kernel:" line); failing that, the newest one on another
# base, named as such; else one sentence why there is none.  The one place
# that knows the VM benchmark's result format.
vm_section() {
	local want=$1 d setup kernel date found='' other='' other_kernel='' when changed intro
	changed=$(governor_changed_at)
	for d in "$TEO_CACHE"/vm-bench/[0-9]*/; do
		setup=$d/bench/setup.txt
		if [ ! -s "$setup" ] || [ ! -s "$d/bench/summary.txt" ]; then
			continue
		fi
		date=$(sed -n 's/^date: //p' "$setup")
		when=$(date -d "$date" +%s 2>/dev/null || echo 0)
		[ "$when" -ge "$changed" ] || continue
		kernel=$(sed -n 's/^kernel: \([^,]*\),.*/\1/p' "$setup")
		if [ "$kernel" = "$want" ]; then
			found=$d
		elif [ -n "$kernel" ]; then
			other=$d
			other_kernel=$kernel
		fi
	done
	if [ -n "$found" ]; then
		intro="Workloads in a QEMU guest on Linux $BASE_NAME with an emulated cpuidle driver,"
	elif [ -n "$other" ]; then
		found=$other
		intro="No workload benchmark in the test VM has run on Linux $BASE_NAME since the last change to the governor.  The newest one ran the same governor on Linux $other_kernel, not on this base; it is quoted as that:"
	else
		printf 'No workload benchmark in the test VM has run on Linux %s since the last change to the governor (scripts/teo run with this base), so this letter quotes none.\n' \
			"$BASE_NAME" | wrap72
		return
	fi
	printf '%s %s (%s):\n\n' "$intro" \
		"$(cat "$found/title" 2>/dev/null || echo 'teo vs menu')" \
		"$(sed -n 's/^date: //p' "$found/bench/setup.txt")" | wrap72
	sed '1{/^$/d}' "$found/bench/summary.txt"
}

# Print the generated part of the cover letter.
measured_results() {
	printf '\n%s\n' "$BASE_TEXT" | wrap72
	printf '\n'
	{
		printf 'Measured on this base (generated; the tools are not part of the series).  Replay lab: the unmodified governor sources on simulated idle timelines for real idle-state tables, energy in %% of a yardstick (an oracle that knows every wakeup in advance where the scenario is open-loop, the best of the governors where their choices feed back into the timeline), miss = above + below in %% of idle entries, medians per scenario family; "base" is the teo and menu of Linux %s, "series" the teo after the last patch:\n' \
			"$BASE_NAME"
	} | wrap72
	printf '\n'
	lab_table families "$ew/lab/results.tsv" "base-teo:base teo" \
		"base-menu:base menu" "$FINAL_LABEL:series teo" ||
		die "cannot read the lab's results"
	printf '\n'
	printf 'The series teo against the best of the teo and menu of this base and of the newest mainline tree, in the same replay (labelled by version):\n\n' |
		wrap72
	lab_table baselines "$ew/lab/results.tsv" "$FINAL_LABEL" series ||
		die "cannot read the lab's results"
	printf '\n'
	if [ "$SERIES_DIVERGENT" = 0 ]; then
		printf 'The series teo and the base teo take the same state and tick decision at every step of %s scenario runs and of a set of random tables (%s decisions).\n' \
			"${SERIES_RUNS:-all}" "${SERIES_DECISIONS:-all}" | wrap72
	else
		printf 'The series teo and the base teo decide differently somewhere in %s of the cases compared (%s scenario runs on real idle-state tables plus a set of random tables; %s decisions).\n' \
			"$SERIES_DIVERGENT" "$SERIES_RUNS" "$SERIES_DECISIONS" | wrap72
	fi
	printf '\n'
	vm_section "$BASE_RELEASE"
}

# The cover letter's text before the shortlog: at most COVER_PROSE_MAX
# lines of prose (paragraphs that are not indented tables) and
# COVER_LINES_MAX lines in all, so that it is read and not skimmed.
COVER_PROSE_MAX=60
COVER_LINES_MAX=120

# Print "PROSE TOTAL", the line counts of cover letter text $1; a table is
# a paragraph whose first line is indented by two spaces.
cover_size() {
	awk 'BEGIN { para = 0 }
		/^$/ { para = 0; total++; next }
		{ total++; if (!para) table = /^  [^ ]/; para = 1; if (!table) prose++ }
		END { printf "%d %d\n", prose, total }' "$1"
}

# Fail unless cover letter text $1 keeps to the bounds above.
check_cover_size() {
	local prose total
	read -r prose total < <(cover_size "$1")
	if [ "$prose" -gt "$COVER_PROSE_MAX" ] || [ "$total" -gt "$COVER_LINES_MAX" ]; then
		die "the cover letter would have $prose lines of prose and $total in all before the shortlog (at most $COVER_PROSE_MAX and $COVER_LINES_MAX): shorten series/cover-letter.txt"
	fi
}

# Fill the subject and blurb of the cover letter $1 (git format-patch's
# template); the blurb also goes to $ew/cover.txt for the b4 branch.
fill_cover_letter() {
	local cover=$1 subject blurb=$ew/cover-blurb.txt
	subject=$(commit_field "$SERIES_DIR/cover-letter.txt" Subject)
	resolve_text "$SERIES_DIR/cover-letter.txt" "$BASE_NAME" > "$ew/cover-text.txt" ||
		die "series/cover-letter.txt: no text for Linux $BASE_NAME"
	if [ "$SERIES_DIVERGENT" != 0 ] && claims_no_change "$ew/cover-text.txt"; then
		die "series/cover-letter.txt claims teo decides as before, but on Linux $BASE_NAME the series' teo decides differently in $SERIES_DIVERGENT cases ($SERIES_RUNS scenario runs plus random tables)"
	fi
	{
		cat "$ew/cover-text.txt"
		measured_results
	} | cat -s > "$blurb"
	check_cover_size "$blurb"
	grep -qE '\*\*\*|placeholder|TODO|FIXME|EDITME' "$blurb" &&
		die "the cover letter would carry a placeholder: $(grep -m1 -E '\*\*\*|placeholder|TODO|FIXME|EDITME' "$blurb")"
	printf '%s\n' "$subject" > "$ew/cover-subject.txt"
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
}

# get_maintainer.pl on the whole series diff, every address it prints
# (reviewers included, no merging of addresses by name): print
# "to ADDRESS" for maintainers, "cc ADDRESS" for reviewers and lists.
maintainer_addresses() {
	local repo=$1 from=$2 to=$3 diff out line addr
	diff=$(mktemp)
	git -C "$repo" diff "$from" "$to" > "$diff"
	if ! out=$(cd "$repo" && perl scripts/get_maintainer.pl --no-git \
			--no-git-fallback --no-remove-duplicates "$diff" 2>&1); then
		rm -f "$diff"
		die "scripts/get_maintainer.pl failed: $out"
	fi
	rm -f "$diff"
	printf '%s\n' "$out" | while IFS= read -r line; do
		addr=${line%% (*}
		case $line in
		*"(maintainer:"*|*"(supporter:"*|*"(odd fixer:"*) printf 'to %s\n' "$addr" ;;
		?*) printf 'cc %s\n' "$addr" ;;
		esac
	done
}

# Leave branch $B4_BRANCH in the repository: what 'b4 prep --enroll' makes
# of teo-series, with our cover letter and its To/Cc trailers in the cover
# commit.  $5 is the revision.
make_b4_branch() {
	local repo=$1 ew=$2 name=$3 email=$4 version=$5 cover msg parent rev
	need_cmd b4
	git -C "$repo" config user.name "$name"
	git -C "$repo" config user.email "$email"
	# b4's default cover template names the base commit; ours is one we
	# made, unknown upstream, unless the base is a git checkout.
	if [ "$BASE_GIT" = 0 ]; then
		# shellcheck disable=SC2016 # b4's template placeholders
		printf '%s\n' '${cover}' '' '---' '${shortlog}' '' '${diffstat}' '---' \
			'change-id: ${change_id}' '' 'Best regards,' '-- ' '${signature}' \
			> "$(git -C "$repo" rev-parse --absolute-git-dir)/b4-cover-template"
		git -C "$repo" config b4.prep-cover-template \
			"$(git -C "$repo" rev-parse --absolute-git-dir)/b4-cover-template"
	else
		git -C "$repo" config --unset b4.prep-cover-template || true
	fi
	git -C "$repo" branch -q -D "$B4_BRANCH" 2>/dev/null || true
	git -C "$repo" checkout -q -f -b "$B4_BRANCH" teo-series
	(cd "$repo" && b4 prep -e teo-base) > "$ew/b4-enroll.log" 2>&1 ||
		{ cat "$ew/b4-enroll.log" >&2; die "b4 prep --enroll failed"; }
	cover=$(git -C "$repo" rev-list --reverse teo-base.."$B4_BRANCH" | head -n 1)
	git -C "$repo" show -s --format=%B "$cover" > "$ew/b4-cover-orig.txt"
	grep -q -- '--- b4-submit-tracking ---' "$ew/b4-cover-orig.txt" ||
		die "b4 prep made no cover commit with tracking data"
	msg=$ew/b4-cover.txt
	python3 - "$ew/b4-cover-orig.txt" "$ew/cover-subject.txt" "$ew/cover-blurb.txt" \
		"$ew/addresses" "$version" > "$msg" <<'PY'
import json, sys
orig, subj, blurb, addrs, version = sys.argv[1:]
marker = "--- b4-submit-tracking ---"
_, tail = open(orig).read().split(marker, 1)
comment, data = tail.split("{", 1)
tracking = json.loads("{" + data)
tracking["series"]["revision"] = int(version)
trailers = []
for line in open(addrs):
    kind, addr = line.rstrip("\n").split(" ", 1)
    trailers.append(("To: " if kind == "to" else "Cc: ") + addr)
print(open(subj).read().strip() + "\n")
print(open(blurb).read().rstrip("\n") + "\n")
print("\n".join(trailers) + "\n")
print(marker + comment + json.dumps(tracking, indent=2))
PY
	parent=$(git -C "$repo" rev-parse teo-base)
	parent=$(git -C "$repo" commit-tree "$(git -C "$repo" rev-parse "$cover^{tree}")" \
		-p "$parent" -F "$msg")
	for rev in $(git -C "$repo" rev-list --reverse "$cover".."$B4_BRANCH"); do
		git -C "$repo" show -s --format=%B "$rev" > "$ew/b4-msg"
		parent=$(GIT_AUTHOR_NAME=$(git -C "$repo" show -s --format=%an "$rev") \
			GIT_AUTHOR_EMAIL=$(git -C "$repo" show -s --format=%ae "$rev") \
			GIT_AUTHOR_DATE=$(git -C "$repo" show -s --format=%aD "$rev") \
			git -C "$repo" commit-tree "$(git -C "$repo" rev-parse "$rev^{tree}")" \
			-p "$parent" -F "$ew/b4-msg")
	done
	git -C "$repo" update-ref "refs/heads/$B4_BRANCH" "$parent"
	git -C "$repo" checkout -q -f "$B4_BRANCH"
	(cd "$repo" && b4 prep --show-info) > "$ew/b4-info.txt" 2>&1 ||
		{ cat "$ew/b4-info.txt" >&2; die "b4 prep --show-info fails on $B4_BRANCH"; }
	git -C "$repo" checkout -q -f teo-series
}

# Export the series into $out with identity $name <$email>.
export_series() {
	local out=$1 version=$2 name=$3 email=$4 slot base repo tmp work
	local -a rcpt vopt=() bopt=()

	check_definition
	if [ -e "$out" ] && [ -n "$(ls -A "$out" 2>/dev/null)" ]; then
		die "output folder $out is not empty; remove it or choose another with --out"
	fi
	slot=$("$TEO_REPO/scripts/prepare-tree.sh")
	base=$(cat "$slot/base")
	identify_base "$base"
	work=$TEO_CACHE/series/$(basename "$slot")
	repo=$work/repo
	ew=$work/export
	rm -rf "$ew"
	mkdir -p "$ew"
	base_repo "$base" "$repo"
	build_snapshots "$ew/snap"
	build_trees "$repo" "$ew" "$BASE_NAME"
	judge_behaviour "$repo" "$ew" "$base"
	write_branch "$repo" "$ew" "$name" "$email"
	{
		maintainer_addresses "$repo" teo-base teo-series
		series_cc
	} > "$ew/addresses"
	while read -r kind addr; do
		case $kind in
		to) rcpt+=("--to=$addr") ;;
		cc) rcpt+=("--cc=$addr") ;;
		esac
	done < "$ew/addresses"
	[ "$version" = 1 ] || vopt=(-v "$version")
	[ "$BASE_GIT" = 0 ] || bopt=(--base=teo-base)

	mkdir -p "$(dirname "$out")"
	tmp=$(mktemp -d "$out.tmp.XXXXXX")
	git -C "$repo" -c user.name="$name" -c user.email="$email" \
		format-patch -q --cover-letter --thread "${bopt[@]}" \
		"${vopt[@]}" "${rcpt[@]}" -o "$tmp" teo-base..teo-series
	fill_cover_letter "$(ls "$tmp"/*0000-cover-letter.patch)"
	make_b4_branch "$repo" "$ew" "$name" "$email" "$version"
	rmdir "$out" 2>/dev/null || true
	mv "$tmp" "$out"
	note "the lab's differential counts of the commits: $ew/differentials.tsv"
	note "wrote $(find "$out" -name '*.patch' | wc -l) patches for Linux $BASE_NAME to $out"
	note "branch $B4_BRANCH in $repo is ready for 'b4 prep' (cd there; b4 prep --edit-cover, b4 send)"
	git -C "$repo" diff --stat teo-base teo-series >&2
}

cmd_export() {
	local version=1 out='' name email
	while [ $# -gt 0 ]; do
		case $1 in
		--version|--out)
			[ $# -ge 2 ] || usage_error "$1 needs a value"
			case $1 in
			--version) version=$2 ;;
			--out) out=$2 ;;
			esac
			shift ;;
		--help|-h) usage; exit 0 ;;
		*) usage_error "export: unknown argument '$1'" ;;
		esac
		shift
	done
	case $version in
	''|*[!0-9]*|0*) usage_error "--version: '$version' is not a positive whole number" ;;
	esac
	if [ -n "$out" ] && [ -e "$out" ] && { [ ! -d "$out" ] || [ -n "$(ls -A "$out")" ]; }; then
		usage_error "--out: '$out' exists and is not an empty folder"
	fi
	name=$(git -C "$TEO_REPO" config user.name || true)
	email=$(git -C "$TEO_REPO" config user.email || true)
	if [ -z "$name" ] || [ -z "$email" ]; then
		die "no git identity: set user.name and user.email with git config (they sign the patches)"
	fi
	need_cmd git perl python3 patch
	[ -n "$out" ] || out=$TEO_CACHE/series/out/v$version
	export_series "$out" "$version" "$name" "$email"
}

# ------------------------------------------------------------------ check

# Minimal configuration for building drivers/cpuidle at every patch, with
# the KUnit tests (teo.c includes them) built in.
STEP_CONFIG="CONFIG_64BIT=y
CONFIG_SMP=y
CONFIG_MODULES=y
CONFIG_NO_HZ_IDLE=y
CONFIG_CPU_IDLE=y
CONFIG_CPU_IDLE_GOV_MENU=y
CONFIG_CPU_IDLE_GOV_TEO=y
CONFIG_KUNIT=y
CONFIG_CPU_IDLE_GOV_TEO_KUNIT_TEST=y"

# The production configuration for the object comparison: no KUnit.
PLAIN_CONFIG="CONFIG_64BIT=y
CONFIG_SMP=y
CONFIG_NO_HZ_IDLE=y
CONFIG_CPU_IDLE=y
CONFIG_CPU_IDLE_GOV_TEO=y"

check_failed=0
check_fail() {
	note "FAIL: $*"
	check_failed=1
}

# Configure build folder $2 for tree $1 from allnoconfig with the options
# $3 forced on, as far as the tree's Kconfig knows them.
configure_build() {
	local tree=$1 build=$2 config=$3 opt name
	mkdir -p "$build"
	printf '%s\n' "$config" > "$build/step.config"
	(cd "$tree" && with_build_lock make -s O="$build" ARCH=x86_64 \
		KCONFIG_ALLCONFIG="$build/step.config" allnoconfig) >/dev/null
	for opt in $config; do
		name=${opt%%=*}
		grep -rqs "^config ${name#CONFIG_}\$" --include='Kconfig*' "$tree" ||
			continue
		grep -qxF "$opt" "$build/.config" ||
			check_fail "the configuration in $build lost $opt"
	done
}

# The objects a revision of tree $1 must build: teo (which includes its
# KUnit tests once the series has added them).
step_objects() {
	printf '%s\n' "$GOV/teo.o"
}

# Does teo.o of build $2 hold KUnit suites where tree $1 has the tests?
step_has_tests() {
	[ ! -f "$1/$GOV/tests/teo_kunit.c" ] ||
		objdump -h "$2/$GOV/teo.o" | grep -qw '\.kunit_test_suites'
}

# Build drivers/cpuidle/ with W=1 at every commit of the am'd tree.
check_every_patch_builds() {
	local tree=$1 build=$2 rev subject out obj
	for rev in $(git -C "$tree" rev-list --reverse teo-base..HEAD); do
		subject=$(git -C "$tree" log -1 --format=%s "$rev")
		git -C "$tree" checkout -q "$rev"
		configure_build "$tree" "$build" "$STEP_CONFIG"
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
			step_has_tests "$tree" "$build" ||
				check_fail "teo.o has no KUnit suites at '$subject'"
			note "builds (W=1, KUnit tests built in): $subject"
		fi
	done
	git -C "$tree" checkout -q teo-checked
}

# Files a patch $1 adds.
added_files() {
	awk '/^diff --git / { f = $4; sub(/^b\//, "", f) } /^new file mode/ { print f }' "$1"
}

# checkpatch.pl --strict on every patch; nothing is ignored up front.  One
# warning is a question rather than a finding: FILE_PATH_CHANGES ("added
# file(s), does MAINTAINERS need updating?") comes for every new file of a
# patch that does not touch MAINTAINERS.  It is answered, not ignored: the
# patch is clean only if every file it adds is already covered by the CPU
# IDLE entry of MAINTAINERS in the tree (get_maintainer.pl -f); patches
# adding files outside it must carry their MAINTAINERS lines.
check_checkpatch() {
	local tree=$1 dir=$2 p out findings f answered
	for p in "$dir"/*.patch; do
		case $p in *0000-cover-letter.patch) continue ;; esac
		out=$(cd "$tree" && perl scripts/checkpatch.pl --strict --terse \
			--show-types "$p" 2>&1) || true
		findings=$(printf '%s\n' "$out" | grep -E '(ERROR|WARNING|CHECK):' || true)
		answered=
		if [ -n "$findings" ] &&
		   ! printf '%s\n' "$findings" | grep -qv 'FILE_PATH_CHANGES'; then
			answered=yes
			for f in $(added_files "$p"); do
				(cd "$tree" && perl scripts/get_maintainer.pl --no-git \
					--no-git-fallback -f "$f" 2>/dev/null) |
					grep -q 'CPU IDLE TIME MANAGEMENT FRAMEWORK' || answered=
			done
		fi
		if [ -z "$findings" ]; then
			note "checkpatch --strict clean: ${p##*/}"
		elif [ -n "$answered" ]; then
			note "checkpatch --strict clean: ${p##*/} (its new files are already in the CPU IDLE entry of MAINTAINERS)"
		else
			printf '%s\n' "$out" >&2
			check_fail "checkpatch: ${p##*/}"
		fi
	done
}

# Every file the series adds must have a maintainer entry, and the cover
# letter must go to every address get_maintainer.pl prints for the series.
check_maintained() {
	local tree=$1 dir=$2 f out kind addr cover mail
	for f in $(git -C "$tree" diff --name-only --diff-filter=A teo-base HEAD); do
		out=$(cd "$tree" && perl scripts/get_maintainer.pl --no-git \
			--no-git-fallback -f "$f" 2>/dev/null)
		printf '%s\n' "$out" | grep -q 'CPU IDLE TIME MANAGEMENT FRAMEWORK' ||
			check_fail "$f is not covered by the CPU IDLE entry of MAINTAINERS"
	done
	cover=$(ls "$dir"/*0000-cover-letter.patch)
	while read -r kind addr; do
		mail=$(printf '%s\n' "$addr" | sed 's/.*<\(.*\)>.*/\1/')
		# The headers, unfolded.
		sed -n '1,/^$/p' "$cover" | sed -e ':a' -e 'N;$!ba' -e 's/\n[[:space:]]\+/ /g' |
			grep -i "^${kind}:" | grep -qF "$mail" ||
			check_fail "the cover letter lacks ${kind^}: $addr (get_maintainer.pl)"
	done < <(maintainer_addresses "$tree" teo-base HEAD)
	note "MAINTAINERS covers every new file; the cover letter has every get_maintainer.pl address"
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
	rm -rf "$out"
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
		check_fail "make htmldocs: sphinx-build is missing (apt-get install python3-sphinx)"
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
		Documentation "$GOV/teo.c")
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
		"$tree/$GOV/teo.c" | sed -n '/DOC:/!s/^ \* //p' |
		head -n 1 | cut -d' ' -f1-5)
	if [ -n "$first" ] && grep -qF "$first" "$html" 2>/dev/null; then
		note "make htmldocs: teo.html built with the DOC section of teo.c, no warnings in the series' files"
	else
		check_fail "make htmldocs: $html lacks the DOC section of teo.c"
	fi
}

# Print teo.c on stdin without its test hooks: the blocks under the test's
# Kconfig symbol (the static stub macro, the inclusion of the tests) and the
# redirections of the input wrappers.
strip_test_hooks() {
	sed -e '/^#ifdef CONFIG_CPU_IDLE_GOV_TEO_KUNIT_TEST$/,/^#endif$/d' \
		-e '/^[[:space:]]*TEO_TEST_REDIRECT(.*);$/d'
}

# Disassembly and section sizes of object $1 (text, data, rodata, bss).
object_summary() {
	objdump -d --no-show-raw-insn "$1" | sed '1,/^$/d'
	size -A "$1" | awk '$1 ~ /^\.(text|data|rodata|bss|init|exit)/ { print $1, $2 }'
}

# A production build (CONFIG_KUNIT=n) must compile teo.c to the same code
# as the file with its test hooks stripped.
check_kunit_off_object() {
	local tree=$1 build=$2 teo=$1/$GOV/teo.c rc=0
	configure_build "$tree" "$build" "$PLAIN_CONFIG"
	grep -q '^CONFIG_KUNIT=y' "$build/.config" &&
		{ check_fail "the production configuration has CONFIG_KUNIT"; return; }
	cp "$teo" "$build/teo.c.orig"
	rm -f "$build/$GOV/teo.o"
	(cd "$tree" && with_build_lock make -s O="$build" ARCH=x86_64 \
		CC="ccache gcc" "$GOV/teo.o") || rc=1
	[ $rc = 0 ] && object_summary "$build/$GOV/teo.o" > "$build/with-hooks.txt"
	strip_test_hooks < "$build/teo.c.orig" > "$teo"
	rm -f "$build/$GOV/teo.o"
	[ $rc = 0 ] && { (cd "$tree" && with_build_lock make -s O="$build" ARCH=x86_64 \
		CC="ccache gcc" "$GOV/teo.o") || rc=1; }
	[ $rc = 0 ] && object_summary "$build/$GOV/teo.o" > "$build/stripped.txt"
	cp "$build/teo.c.orig" "$teo"
	if [ $rc != 0 ]; then
		check_fail "teo.o without KUnit did not build"
	elif grep -q 'KUNIT\|kunit' <(strip_test_hooks < "$teo"); then
		check_fail "strip_test_hooks left test hooks in teo.c: $(strip_test_hooks < "$teo" | grep -m1 'KUNIT\|kunit')"
	elif ! diff -u "$build/with-hooks.txt" "$build/stripped.txt" >&2; then
		check_fail "CONFIG_KUNIT=n: teo.o differs from teo.c without its test hooks"
	else
		note "CONFIG_KUNIT=n: teo.o is the same code ($(grep -c '^ ' "$build/stripped.txt") instructions, same section sizes) as teo.c without its test hooks"
	fi
}

check_kunit_in_tree() {
	local tree=$1 build=$2 log=$2.out summary qemu_dir
	qemu_dir=$(kunit_qemu_dir)
	if (cd "$tree" && with_build_lock env PATH="$qemu_dir:$PATH" \
			python3 tools/testing/kunit/kunit.py run \
			--arch=x86_64 --build_dir="$build" --jobs="$(nproc)" \
			--kunitconfig="$tree/$GOV/.kunitconfig" \
			--make_options="CC=ccache gcc") > "$log" 2>&1; then
		summary=$(grep -E 'Testing complete\. Ran' "$log" | tail -n 1)
		note "KUnit built in, in the patched tree: ${summary#*] }"
		case $summary in
		*"Ran 0 tests"*|"") check_fail "KUnit ran no tests in the patched tree" ;;
		esac
	else
		tail -n 30 "$log" >&2
		check_fail "KUnit in the patched tree (log: $log)"
	fi
}

# After a fresh export: the b4 branch's patches are the exported ones.
check_b4_branch() {
	local repo=$1 dir=$2 work=$3 b4out
	b4out=$work/b4-patches
	rm -rf "$b4out"
	git -C "$repo" checkout -q -f "$B4_BRANCH"
	if ! (cd "$repo" && b4 prep -p "$b4out") > "$work/b4-format.log" 2>&1; then
		cat "$work/b4-format.log" >&2
		check_fail "b4 prep --format-patch on $B4_BRANCH"
	elif [ "$(patch_ids "$b4out")" != "$(patch_ids "$dir")" ]; then
		check_fail "the patches of $B4_BRANCH (b4 prep) differ from the exported ones"
	elif [ "$BASE_GIT" = 0 ] && grep -l '^base-commit:' "$b4out"/* >&2; then
		check_fail "b4 prep would mail a base-commit that exists only here"
	else
		note "branch $B4_BRANCH: b4 prep formats the same $(patch_ids "$dir" | wc -l) patches"
	fi
	git -C "$repo" checkout -q -f teo-series
}

# Stable patch ids of the patches in folder $1, in order.
patch_ids() {
	local p
	for p in "$1"/*.patch; do
		grep -q '^diff --git' "$p" || continue
		git patch-id --stable < "$p" | cut -d' ' -f1
	done
}

cmd_check() {
	local dir=${1:-} slot base repo work tree fresh=0
	case $dir in
	--help|-h) usage; exit 0 ;;
	-*) usage_error "check: unknown option '$dir'" ;;
	esac
	[ $# -le 1 ] || usage_error "check takes at most one folder, got $# arguments"
	if [ -n "$dir" ]; then
		[ -d "$dir" ] || usage_error "check: '$dir' is not a folder"
		compgen -G "$dir/*.patch" >/dev/null ||
			usage_error "check: '$dir' holds no *.patch files (git format-patch output)"
	fi
	need_cmd git perl python3 make patch objdump size
	check_definition
	slot=$("$TEO_REPO/scripts/prepare-tree.sh")
	base=$(cat "$slot/base")
	identify_base "$base"
	work=$TEO_CACHE/series/$(basename "$slot")
	repo=$work/repo
	check_chain "$work/chain"
	if [ -z "$dir" ]; then
		dir=$work/check-export
		rm -rf "$dir"
		export_series "$dir" 1 "teo series check" "check@invalid"
		fresh=1
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
		die "the series does not apply to Linux $BASE_NAME with git am"
	fi
	note "git am: ${#patches[@]} patches apply to Linux $BASE_NAME"

	check_checkpatch "$tree" "$dir"
	check_maintained "$tree" "$dir"
	check_kernel_doc "$tree"
	check_docs "$tree"
	check_htmldocs "$tree" "$work/htmldocs"
	check_selftests_build "$tree" "$work/selftests"
	[ $fresh = 0 ] || check_b4_branch "$repo" "$dir" "$work"
	check_every_patch_builds "$tree" "$work/build-step"
	check_kunit_off_object "$tree" "$work/build-nokunit"
	check_kunit_in_tree "$tree" "$work/build-kunit"
	[ $check_failed = 0 ] || die "series checks on Linux $BASE_NAME failed"
	note "series checks on Linux $BASE_NAME passed"
}

# --------------------------------------------------------------- selftest

# Fail the selftest with a message.
st_fail() {
	note "selftest FAIL: $*"
	st_failed=1
}

# Run "$@" in a subshell; succeed if it fails with stderr matching $1.
st_refused() {
	local want=$1 err
	shift
	if err=$("$@" 2>&1 >/dev/null); then
		return 1
	fi
	[[ $err == *"$want"* ]] || { note "expected '$want', got: $err"; return 1; }
}

cmd_selftest() {
	local tmp fix k
	st_failed=0
	tmp=$(mktemp -d)
	# shellcheck disable=SC2064 # expand now
	trap "rm -rf '$tmp'" EXIT

	range_matches 6.12 6.12.117 || st_fail "6.12 in 6.12"
	range_matches '>=6.13' 7.3.0 || st_fail "7.3 in >=6.13"
	! range_matches '>=6.13' 6.12.117 || st_fail "6.12 not in >=6.13"
	range_matches '>=6.13,<7.0' 6.18.2 || st_fail "6.18 in >=6.13,<7.0"
	! range_matches '<7.0' 7.3.0 || st_fail "7.3 not in <7.0"
	! valid_range '>=6' || st_fail "'>=6' is not a range"
	[ "$(debian_upstream 7.3~rc7-1~exp1)" = 7.3-rc7 ] || st_fail "debian_upstream rc"
	[ "$(debian_upstream 6.12.117-1~deb12u1)" = 6.12.117 ] || st_fail "debian_upstream stable"

	# A fixture: the real series plus a fake last commit whose Diff turns
	# a teo.c without one of its comment lines into the overlay's.
	fix=$tmp/top/series
	mkdir -p "$tmp/top"
	cp -R "$SERIES_DIR" "$fix"
	mkdir -p "$tmp/a/$GOV" "$tmp/b/$GOV"
	cp "$TEO_REPO/$GOV/teo.c" "$tmp/b/$GOV/teo.c"
	sed '/busy-polls instead of stopping/d' "$TEO_REPO/$GOV/teo.c" > "$tmp/a/$GOV/teo.c"
	(cd "$tmp" && diff -u "a/$GOV/teo.c" "b/$GOV/teo.c") > "$fix/99-fake-step.diff" &&
		st_fail "fixture: the fake step changes nothing"
	printf 'Subject: cpuidle: governors: teo: Fake step\nFiles:\nEdits:\nDiff: series/99-fake-step.diff\n\nA fake step.\n[base 6.12]\nOn 6.12.\n[end]\n[base >=6.13]\nLater.\n[end]\n' \
		> "$fix/99-fake-step.commit"
	export TEO_SERIES_DIR=$fix
	SERIES_DIR=$fix
	SERIES_TOP=$tmp/top
	EDITS_DIR=$fix/edits
	BASE_EDITS_DIR=$fix/edits/base
	(check_definition) || st_fail "fixture: definition refused"
	(build_snapshots "$tmp/snap") || st_fail "fixture: snapshots"
	k=$(commit_files | grep -n 99-fake-step | cut -d: -f1)
	cmp -s "$tmp/snap/$((k - 1))/$GOV/teo.c" "$tmp/a/$GOV/teo.c" ||
		st_fail "fixture: teo.c before the fake step is not the reverse-applied one"
	cmp -s "$tmp/snap/$k/$GOV/teo.c" "$TEO_REPO/$GOV/teo.c" ||
		st_fail "fixture: teo.c after the fake step is not the overlay's"
	(check_chain "$tmp/chain") 2>/dev/null || st_fail "fixture: chain"
	[ "$(resolve_text "$fix/99-fake-step.commit" 6.12.117 | tr '\n' ' ')" = "A fake step. On 6.12. " ] ||
		st_fail "fixture: [base] text for 6.12"
	[ "$(resolve_text "$fix/99-fake-step.commit" 7.3.0 | tr '\n' ' ')" = "A fake step. Later. " ] ||
		st_fail "fixture: [base] text for 7.3"
	st_refused "has no [base ...] text for Linux 6.11" \
		resolve_text "$fix/99-fake-step.commit" 6.11.0 || st_fail "fixture: missing [base] text accepted"

	# The Differential: count must be the lab's and the message must say
	# it; a base without an entry only gets a note.
	sed -i 's/^Diff: series\/99/Differential: 6.12:7 >=6.13:0\n&/' "$fix/99-fake-step.commit"
	printf 'A fake step.\nIt changes 7 decisions.\n' > "$tmp/msg7"
	printf 'A fake step.\nIt changes 17 decisions.\n' > "$tmp/msg17"
	(check_definition) || st_fail "fixture: a Differential: header was refused"
	(BASE_NAME=6.12.117 check_differential "$fix/99-fake-step.commit" "$tmp/msg7" 7) ||
		st_fail "fixture: the right count was refused"
	BASE_NAME=6.12.117 st_refused "says Differential: 7 for Linux 6.12.117, but the lab counts 8" \
		check_differential "$fix/99-fake-step.commit" "$tmp/msg7" 8 ||
		st_fail "fixture: a count the lab does not measure was accepted"
	BASE_NAME=6.12.117 st_refused "its message does not state its differential count 7" \
		check_differential "$fix/99-fake-step.commit" "$tmp/msg17" 7 ||
		st_fail "fixture: a message without its count was accepted"
	(BASE_NAME=6.11.0 check_differential "$fix/99-fake-step.commit" "$tmp/msg7" 3) 2>/dev/null ||
		st_fail "fixture: a base without an entry was refused"
	sed -i 's/^Differential: .*/Differential: 6.12:seven/' "$fix/99-fake-step.commit"
	st_refused "Differential entry '6.12:seven' is not RANGE:N" check_definition ||
		st_fail "fixture: a malformed Differential: entry was accepted"
	sed -i '/^Differential: /d' "$fix/99-fake-step.commit"

	# The cover letter's bounds, and the series' own Cc list.
	{ printf 'word\n%.0s' $(seq 61); printf '\n  table\n  row\n'; } > "$tmp/cover61"
	[ "$(cover_size "$tmp/cover61")" = "61 64" ] || st_fail "fixture: cover_size counts $(cover_size "$tmp/cover61")"
	st_refused "61 lines of prose and 64 in all" check_cover_size "$tmp/cover61" ||
		st_fail "fixture: a cover letter with 61 lines of prose was accepted"
	{ printf 'word\n%.0s' $(seq 60); printf '\n  table\n%.0s' $(seq 30); } > "$tmp/cover60"
	(check_cover_size "$tmp/cover60") || st_fail "fixture: 60 lines of prose were refused"
	printf '  row\n%.0s' $(seq 60) >> "$tmp/cover60"
	st_refused "60 lines of prose and 180 in all" check_cover_size "$tmp/cover60" ||
		st_fail "fixture: a cover letter of 180 lines was accepted"
	printf 'A Tester <a@example.org>  # ran it\nnot an address\n' > "$fix/cc"
	st_refused "1 line(s) are not 'Name <address>  # why'" check_definition ||
		st_fail "fixture: a malformed series/cc line was accepted"
	sed -i '/^not an address$/d' "$fix/cc"
	[ "$(series_cc)" = "cc A Tester <a@example.org>" ] || st_fail "fixture: series_cc printed '$(series_cc)'"

	# A Diff that no longer reverse-applies is named with its file.
	sed -i 's/busy-polls instead of stopping/busy-polls instead of halting/' "$fix/99-fake-step.diff"
	st_refused "99-fake-step.diff no longer reverse-applies to $GOV/teo.c" \
		build_snapshots "$tmp/snap2" || st_fail "fixture: a broken Diff was not named"
	# A Diff of an upstream file, or of a file no earlier commit adds.
	sed -i "s|$GOV/teo.c|$GOV/menu.c|" "$fix/99-fake-step.diff"
	st_refused "which is not an overlay file" check_definition ||
		st_fail "fixture: a Diff of an upstream file was accepted"
	# The same step moved before the commit that adds teo.c.
	sed -i "s|$GOV/menu.c|$GOV/teo.c|" "$fix/99-fake-step.diff"
	mv "$fix/99-fake-step.commit" "$fix/00-fake-step.commit"
	st_refused "before a commit adds it" check_definition ||
		st_fail "fixture: a Diff before the file's commit was accepted"
	[ "$st_failed" = 0 ] || die "series.sh selftest failed"
	note "selftest passed: ranges, [base] text, Differential: counts, cover letter size, series/cc, Diff chain and its error messages"
}

[ $# -gt 0 ] || { usage >&2; usage_error "no command given"; }
cmd=$1
shift
case $cmd in
export) cmd_export "$@" ;;
check) cmd_check "$@" ;;
files) cmd_files "$@" ;;
selftest) cmd_selftest "$@" ;;
--help|-h|help) usage ;;
*) usage_error "unknown command '$cmd'" ;;
esac
