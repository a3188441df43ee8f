#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# tshark reads the files gpu-capture writes (pcap, pcapng, multi-port
# pcapng, snapped) with the packet counts libpcap sees.
. "$(dirname "$0")/lib.sh"
need tshark
gc -r "$LIVE1" -w "$T/a.pcap" || fail "a: $(cat "$T/gc.err")"
gc -r "$DATA/eth-mix.pcapng" -w "$T/b.pcapng" 'ip or ip6' || fail "b: $(cat "$T/gc.err")"
gc -r "$LIVE1" -w "$T/c.pcap" -s 64 tcp || fail "c: $(cat "$T/gc.err")"
gc -i "net_pcap0,rx_pcap=$LIVE1" -i "net_pcap1,rx_pcap=$LIVE2" -w "$T/d.pcapng" \
	-c $(( $(count "$LIVE1") + $(count "$LIVE2") )) --duration 20 || fail "d: $(cat "$T/gc.err")"
for f in a.pcap b.pcapng c.pcap d.pcapng; do
	n=$(tshark -r "$T/$f" 2>"$T/ts.err" | wc -l)
	[ -s "$T/ts.err" ] && grep -qiv "running as user" "$T/ts.err" && fail "$f: tshark says $(cat "$T/ts.err")"
	[ "$n" -eq "$(count "$T/$f")" ] || fail "$f: tshark reads $n packets, libpcap $(count "$T/$f")"
done
# interfaces of the two-port file
ni=$(tshark -r "$T/d.pcapng" -T fields -e frame.interface_id 2>/dev/null | sort -u | wc -l)
[ "$ni" -eq 2 ] || fail "d.pcapng: tshark sees $ni interfaces"
finish
