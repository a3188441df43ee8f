#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# -d, -dd and -ddd of the empty expression print what tcpdump prints: the
# program returns the file's snapshot length with -r (files of unusual
# snaplens from the corpus, the first 16), -s's (default 262144) for a port.
. "$(dirname "$0")/lib.sh"
need tcpdump
n=0
for f in "$DATA/eth-snap96-ns.pcap" "$DATA/eth-mix.pcap" "$CORPUS"/*.pcap "$CORPUS"/*.pcapng; do
	[ -f "$f" ] || continue
	[ "$n" -ge 16 ] && break # enough: each costs a few runs
	timeout 20 tcpdump -r "$f" -d >"$T/td.d" 2>/dev/null || continue
	# the files whose snaplen is not one of the two usual ones (and ours)
	case "$f" in "$DATA"/*) ;; *) grep -qE '#(65535|262144)$' "$T/td.d" && continue ;; esac
	for d in -d -dd -ddd; do
		timeout 20 tcpdump -r "$f" $d >"$T/td.out" 2>/dev/null
		gc -r "$f" $d >"$T/gc.out" || fail "$(basename "$f") $d: exit $?: $(cat "$T/gc.err")"
		cmp -s "$T/td.out" "$T/gc.out" ||
			fail "$(basename "$f") $d: '$(head -1 "$T/gc.out")', tcpdump '$(head -1 "$T/td.out")'"
	done
	n=$((n + 1))
done
[ "$n" -ge 2 ] || fail "only $n files compared"
note "$n files compared"
# a port: the -s snap length, 262144 by default
gc -i net_null0 -d >"$T/l.out" || fail "live -d: $(cat "$T/gc.err")"
[ "$(cat "$T/l.out")" = "(000) ret      #262144" ] || fail "live -d: $(cat "$T/l.out")"
gc -i net_null0 -s 100 -ddd >"$T/l.out" || fail "live -ddd: $(cat "$T/gc.err")"
[ "$(tr '\n' '|' <"$T/l.out")" = "1|6 0 0 100|" ] || fail "live -s 100 -ddd: $(cat "$T/l.out")"
finish
