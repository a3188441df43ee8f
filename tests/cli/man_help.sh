#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# The man page and --help name every option options.c takes: each long
# option of its table and each letter of its short options.
. "$(dirname "$0")/lib.sh"
OPTS=$SRC/apps/gpu-capture/options.c
MAN=$SRC/docs/gpu-capture.8
"$GC" --help >"$T/help" || fail "--help: exit $?"
# the man page's text with roff's escaped minus as '-'
sed 's/\\-/-/g; s/\\f[BIRP]//g' "$MAN" >"$T/man"
longs=$(sed -n '/long_opts\[\] = {/,/^};/p' "$OPTS" | sed -n 's/^[[:space:]]*{ "\([a-z0-9-]*\)",.*/\1/p')
[ "$(echo "$longs" | wc -w)" -ge 40 ] || fail "only $(echo "$longs" | wc -w) long options read from $OPTS"
for l in $longs; do
	grep -qE -- "--$l([^a-z-]|$)" "$T/help" || fail "--$l is not in --help"
	grep -qE -- "--$l([^a-z-]|$)" "$T/man" || fail "--$l is not in the man page"
done
# the literal, on the declaration's line or the next ones, without ':'
shorts=$(sed -n '/^static const char short_opts\[\] =/,/;/p' "$OPTS" | tr -d '\n' |
	sed -n 's/^[^"]*"\([^"]*\)";.*/\1/p' | tr -d ':')
[ -n "$shorts" ] || fail "no short options read from $OPTS"
for ((i = 0; i < ${#shorts}; i++)); do
	c=${shorts:i:1}
	grep -qE -- "(^|[^a-z-])-$c([^a-zA-Z-]|$)" "$T/help" || fail "-$c is not in --help"
	grep -qE -- "(^|[^a-z-])-$c([^a-zA-Z-]|$)" "$T/man" || fail "-$c is not in the man page"
done
finish
