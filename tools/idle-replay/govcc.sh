#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Compile one governor source against the shim; on failure name the kernel
# API the shim lacks instead of leaving the reader with a compiler log.
#   govcc.sh LABEL SOURCE OBJECT CC FLAGS...
set -eu
label=$1 src=$2 obj=$3
shift 3
[ -f "$src" ] || {
	echo "idle-replay: governor '$label': source $src does not exist" >&2
	exit 1
}
log=$obj.log
if LC_ALL=C "$@" -c "$src" -o "$obj" 2>"$log"; then
	exit 0
fi
missing=$(sed -n \
	-e "s/.*implicit declaration of function '\([A-Za-z0-9_]*\)'.*/function \1()/p" \
	-e "s/.*fatal error: \([^:]*\): No such file or directory.*/header <\1>/p" \
	-e "s/.*'\([A-Za-z0-9_]*\)' undeclared.*/identifier \1/p" \
	-e "s/.*unknown type name '\([A-Za-z0-9_]*\)'.*/type \1/p" \
	-e "s/.*has no member named '\([A-Za-z0-9_]*\)'.*/struct member \1/p" \
	-e "s/.*invalid use of undefined type '\([^']*\)'.*/type \1/p" \
	"$log" | sort -u | tr '\n' ',' | sed 's/,$//; s/,/, /g')
if [ -n "$missing" ]; then
	echo "idle-replay: governor '$label' ($src) needs kernel API the shim lacks: $missing" >&2
else
	echo "idle-replay: governor '$label' ($src) does not compile against the shim:" >&2
	sed -n '1,20p' "$log" >&2
fi
echo "idle-replay: full compiler output in $log; add the API to tools/idle-replay/shim/kapi.h" >&2
exit 1
