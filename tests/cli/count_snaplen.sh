#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# -c COUNT and -s SNAPLEN as tcpdump has them (offline: equal files; live:
# exactly COUNT records).
. "$(dirname "$0")/lib.sh"
need tcpdump
f=$LIVE1
for c in 1 7 50; do
	gc -r "$f" -w "$T/o.pcap" -c "$c" udp || fail "-c $c: $(cat "$T/gc.err")"
	tcpdump -r "$f" -w "$T/r.pcap" -c "$c" udp 2>/dev/null
	"$CMP" -q "$T/o.pcap" "$T/r.pcap" || fail "-c $c differs from tcpdump"
	[ "$(count "$T/o.pcap")" -eq "$c" ] || fail "-c $c: $(count "$T/o.pcap") records"
done
gc -i "net_pcap0,rx_pcap=$LOOP,infinite_rx=1" -w "$T/l.pcap" -c 1000 --duration 20 || fail "live -c: $(cat "$T/gc.err")"
[ "$(count "$T/l.pcap")" -eq 1000 ] || fail "live -c 1000: $(count "$T/l.pcap") records"
# tcpdump -r does not cut records with -s: the reference is the input
# with its records cut (pcap-cmp --snap)
for s in 60 96 1500; do
	for o in o.pcap o.pcapng; do
		gc -r "$f" -w "$T/$o" -s "$s" || fail "-s $s: $(cat "$T/gc.err")"
		"$CMP" -q --snap "$s" "$T/$o" "$f" || fail "-s $s $o: records not cut to $s"
		"$CMP" -q "$T/$o" "$f" >/dev/null && [ "$s" -lt 1500 ] && fail "-s $s: nothing was cut"
	done
	gc -i "net_pcap0,rx_pcap=$f" -w "$T/l.pcap" -s "$s" -c "$(count "$f")" --duration 20 ||
		fail "live -s $s: $(cat "$T/gc.err")"
	"$CMP" -q --no-ts --snap "$s" "$T/l.pcap" "$f" || fail "live -s $s: records not cut to $s"
done
finish
