#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# -w - writes pcap to stdout: piped into tcpdump -r -, and equal to -w FILE.
. "$(dirname "$0")/lib.sh"
need tcpdump
e='tcp or udp'
gc -r "$LIVE1" -w "$T/file.pcap" "$e" || die "$(cat "$T/gc.err")"
n=$(count "$T/file.pcap")
m=$("$GC" -q -r "$LIVE1" -w - "$e" 2>"$T/gc.err" | tcpdump -r - 2>/dev/null | wc -l)
[ "$m" -eq "$n" ] || fail "tcpdump -r - read $m packets, expected $n"
"$GC" -q -r "$LIVE1" -w - "$e" 2>"$T/gc.err" > "$T/stdout.pcap" || fail "exit $?"
"$CMP" -q "$T/stdout.pcap" "$T/file.pcap" || fail "stdout differs from -w FILE"
# live too, with -c
"$GC" -q -i "net_pcap0,rx_pcap=$LIVE1" -w - -c "$n" --duration 20 "$e" 2>"$T/gc.err" |
	tcpdump -r - -w "$T/live.pcap" 2>/dev/null
"$CMP" -q --no-ts --usec "$T/live.pcap" "$T/file.pcap" || fail "live stdout differs"
# a closed pipe is a write error, not a hang or a crash
timeout 30 "$GC" -q -i "net_pcap0,rx_pcap=$LOOP,infinite_rx=1" -w - --duration 20 2>"$T/gc.err" | head -c 100 >/dev/null
rc=${PIPESTATUS[0]}
[ "$rc" -eq 1 ] || fail "closed stdout: exit $rc ($(cat "$T/gc.err"))"
finish
