#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# A bad filter: exit 1 with libpcap's message, in offline and live mode,
# before any output file is created or any port started.
. "$(dirname "$0")/lib.sh"
need tcpdump
gc -r "$LIVE1" -w "$T/o.pcap" 'tcp and and'; rc=$?
[ $rc -eq 1 ] || fail "offline: exit $rc"
grep -q "syntax error" "$T/gc.err" || fail "offline: no libpcap message: $(cat "$T/gc.err")"
[ -e "$T/o.pcap" ] && fail "offline: output created for a bad filter"
gc -i "net_pcap0,rx_pcap=$LIVE1" -w "$T/l.pcap" --duration 5 'port 99999999'; rc=$?
[ $rc -eq 1 ] || fail "live: exit $rc"
grep -q "illegal port number\|out of range" "$T/gc.err" || fail "live: no libpcap message: $(cat "$T/gc.err")"
[ -e "$T/l.pcap" ] && fail "live: output created for a bad filter"
# a bad per-output filter too
gc -r "$LIVE1" -w "$T/a.pcap:tcp" -w "$T/b.pcap:udp port x y"; rc=$?
[ $rc -eq 1 ] || fail "-w FILE:EXPR: exit $rc"
grep -q "syntax error\|unknown" "$T/gc.err" || fail "-w FILE:EXPR: $(cat "$T/gc.err")"
# a ':' of a strftime name taken for FILE:EXPR: the line says how to
# write one (the trailing expression's error does not)
gc -r "$LIVE1" -G 60 -w "$T/cap-%H:%M.pcap"; rc=$?
[ $rc -eq 1 ] && grep -qF "written '\\:'" "$T/gc.err" || fail "-w with a ':' of a name: exit $rc: $(cat "$T/gc.err")"
gc -r "$LIVE1" -w "$T/c.pcap" 'tcp and and'
grep -qF "written '\\:'" "$T/gc.err" && fail "the trailing expression's error speaks of -w's ':'"
[ -z "$(compgen -G "$T/cap-*")" ] || fail "-w with a ':' of a name: output created"
# a 400 KB expression with an error: one line, which does not echo it whole
python3 -c 'print("tcp and and " + " or ".join("host 10.0.%d.%d" % (i // 250, i % 250) for i in range(25000)))' >"$T/long.expr"
# (as words: one argument may hold 128 KiB at most)
# shellcheck disable=SC2046
gc -r "$LIVE1" -w "$T/long.pcap" $(cat "$T/long.expr"); rc=$?
[ $rc -eq 1 ] || fail "400 KB expression: exit $rc"
[ "$(wc -l <"$T/gc.err")" -eq 1 ] || fail "400 KB expression: $(wc -l <"$T/gc.err") lines"
[ "$(wc -c <"$T/gc.err")" -lt 1000 ] || fail "400 KB expression: a $(wc -c <"$T/gc.err")-byte message"
grep -q "syntax error" "$T/gc.err" || fail "400 KB expression: $(head -c 300 "$T/gc.err")"
[ -e "$T/long.pcap" ] && fail "400 KB expression: output created"
# a file of a link type libpcap does not know: refused as tcpdump refuses
# it, with libpcap's message, even with no expression
python3 -c 'import struct,sys; sys.stdout.buffer.write(struct.pack("<IHHiIII", 0xa1b2c3d4, 2, 4, 0, 0, 65535, 65000) + struct.pack("<IIII", 1, 0, 4, 4) + b"abcd")' >"$T/lt65000.pcap"
tcpdump -r "$T/lt65000.pcap" -w "$T/td.pcap" 2>"$T/td.err"; trc=$?
gc -r "$T/lt65000.pcap" -w "$T/lt.pcap"; rc=$?
[ $trc -ne 0 ] || fail "tcpdump took link type 65000: the test's premise is wrong"
[ $rc -eq 1 ] || fail "link type 65000: exit $rc"
grep -q "unknown data link type 65000" "$T/gc.err" || fail "link type 65000: $(cat "$T/gc.err")"
[ -e "$T/lt.pcap" ] && fail "link type 65000: output created"
finish
