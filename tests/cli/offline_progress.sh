#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# A long -r run shows a progress line on a terminal (bytes and records
# read, the rate; the time left where the size is known), never when
# stderr is not a terminal, never with -q. The input comes through a pipe
# that pauses, so that the run lasts past the line's first second.
. "$(dirname "$0")/lib.sh"
need script
# eth-mix.pcap's records ten times over (about 500 KB)
f=$T/in.pcap
python3 - "$DATA/eth-mix.pcap" "$f" <<'PY'
import sys
d = open(sys.argv[1], 'rb').read()
open(sys.argv[2], 'wb').write(d + d[24:] * 9)
PY
slow="{ head -c 200000 '$f'; sleep 2.5; tail -c +200001 '$f'; }"
# on a terminal (script(1) gives the command one)
script -qec "$slow | timeout 60 '$GC' -r - -w '$T/a.pcap'" /dev/null > "$T/tty.txt" 2>&1
grep -a -q 'records' "$T/tty.txt" && grep -a -q $'\r' "$T/tty.txt" ||
	fail "no progress line on a terminal: $(tr '\r' '\n' < "$T/tty.txt" | head -5)"
grep -a -q 'packets captured' "$T/tty.txt" || fail "no summary after the progress line"
# with -q: nothing
script -qec "$slow | timeout 60 '$GC' -q -r - -w '$T/c.pcap'" /dev/null > "$T/q.txt" 2>&1
[ ! -s "$T/q.txt" ] || fail "-q printed: $(tr '\r' '\n' < "$T/q.txt" | head -3)"
# not a terminal: the summary only
eval "$slow" | timeout 60 "$GC" -r - -w "$T/d.pcap" 2> "$T/err.txt"
grep -q 'records' "$T/err.txt" && fail "a progress line without a terminal"
grep -q $'\r' "$T/err.txt" && fail "a carriage return without a terminal"
grep -q 'packets captured' "$T/err.txt" || fail "no summary: $(cat "$T/err.txt")"
"$CMP" -q "$T/a.pcap" "$T/d.pcap" || fail "the output differs with a progress line"
finish
