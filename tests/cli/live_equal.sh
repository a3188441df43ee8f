#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# Live: gpu-capture -i net_pcap0,rx_pcap=F -c N EXPR captures what tcpdump's
# offline run on F writes (N = its count; timestamps are receive times, so
# pcap-cmp --no-ts). net_pcap mangles packets larger than ~15 KB, and it
# cannot give a record's original length (pkt_len = caplen), so only inputs
# without such packets and without snapped records (caplen < len) are used:
# tests/data's eth-mix.pcap and eth-be.pcap (largest frame 8 KB), not
# mix-en10mb.pcap (it holds snapped records).
. "$(dirname "$0")/lib.sh"
need tcpdump
inputs=("$LIVE1" "$LIVE2")
for f in "${inputs[@]}"; do
	for e in 'tcp port 80 or udp port 53' 'ip6 or vlan' 'greater 300'; do
		tdump "$f" "$T/ref.pcap" "$e" || { fail "tcpdump '$e' on $f"; continue; }
		n=$(count "$T/ref.pcap")
		[ "$n" -gt 0 ] || { note "$(basename "$f") '$e': tcpdump writes nothing, skipped"; continue; }
		for out in out.pcap out.pcapng; do
			gc -i "net_pcap0,rx_pcap=$f" -w "$T/$out" -c "$n" --duration 20 "$e" ||
				{ fail "$(basename "$f") '$e': exit $?: $(cat "$T/gc.err")"; continue; }
			"$CMP" -q --no-ts "$T/$out" "$T/ref.pcap" || fail "$(basename "$f") '$e' $out differs"
		done
	done
	# receive calls of 3 packets (--rx-burst): the same records
	e='tcp port 80 or udp port 53'
	tdump "$f" "$T/ref.pcap" "$e" && n=$(count "$T/ref.pcap") && [ "$n" -gt 0 ] &&
		{ gc -i "net_pcap0,rx_pcap=$f" -w "$T/b.pcap" -c "$n" --duration 20 --rx-burst 3 "$e" ||
			fail "$(basename "$f") --rx-burst 3: exit $?: $(cat "$T/gc.err")"
		  "$CMP" -q --no-ts "$T/b.pcap" "$T/ref.pcap" || fail "$(basename "$f") --rx-burst 3 differs"; }
done
# a bad --rx-burst is refused before anything starts
gc -i "net_pcap0,rx_pcap=$LIVE1" -w "$T/x.pcap" --rx-burst 0 tcp; rc=$?
[ $rc -eq 1 ] && grep -q -- "--rx-burst" "$T/gc.err" || fail "--rx-burst 0: exit $rc: $(cat "$T/gc.err")"
[ ! -e "$T/x.pcap" ] || fail "--rx-burst 0 created its output"
finish
