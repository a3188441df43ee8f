#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# A bad filter: exit 1 with libpcap's message, in offline and live mode,
# before any output file is created or any port started.
. "$(dirname "$0")/lib.sh"
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
finish
