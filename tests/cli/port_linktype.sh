#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# A port's link type is its own (net_pcap: its file's): a raw-IP file
# replayed is written as raw IP (101), with the filter compiled for raw
# IP, and equals tcpdump's offline run; an Ethernet-only filter is refused
# for it. Several ports into a pcap file are refused before anything
# starts, pointing at pcapng (as dumpcap does), and ports of different
# link types in one capture too.
. "$(dirname "$0")/lib.sh"
need tcpdump
RAW=$DATA/raw-ip.pcap
e='udp or tcp'
tdump "$RAW" "$T/ref.pcap" "$e" || die "tcpdump on $RAW"
n=$(count "$T/ref.pcap")
[ "$n" -gt 0 ] || die "no reference records"
for out in raw.pcap raw.pcapng; do
	gc -i "net_pcap0,rx_pcap=$RAW" -w "$T/$out" -c "$n" --duration 30 "$e" ||
		die "$out: exit $?: $(cat "$T/gc.err")"
	"$CMP" -q "$T/$out" "$T/ref.pcap" || fail "$out: differs from tcpdump's (link type, records or times)"
done
[ "$(od -An -tu4 -j20 -N4 "$T/raw.pcap" | tr -d ' ')" = 101 ] || fail "raw.pcap: link type not 101"
gc -i "net_pcap0,rx_pcap=$RAW" -w "$T/eth.pcap" 'ether host 01:02:03:04:05:06'; rc=$?
[ $rc -eq 1 ] && grep -q "RAW\|link" "$T/gc.err" || fail "an Ethernet filter on raw IP: exit $rc: $(cat "$T/gc.err")"

# two ports into pcap: refused, nothing created; into pcapng: taken
gc -i "net_pcap0,rx_pcap=$LIVE1" -i "net_pcap1,rx_pcap=$LIVE2" -w "$T/two.pcap" tcp; rc=$?
[ $rc -eq 1 ] && grep -q "pcapng" "$T/gc.err" || fail "two ports into pcap: exit $rc: $(cat "$T/gc.err")"
[ ! -e "$T/two.pcap" ] || fail "two ports into pcap: the file was created"
gc -i "net_pcap0,rx_pcap=$LIVE1" -i "net_pcap1,rx_pcap=$LIVE2" -w "$T/ok.pcapng" -w "$T/two.pcap" tcp; rc=$?
[ $rc -eq 1 ] && [ ! -e "$T/ok.pcapng" ] || fail "two ports, one output pcap: exit $rc, or an output created"
# Ethernet and raw IP ports in one capture
gc -i "net_pcap0,rx_pcap=$LIVE1" -i "net_pcap1,rx_pcap=$RAW" -w "$T/mix.pcapng" ip; rc=$?
[ $rc -eq 1 ] && grep -q "link type" "$T/gc.err" || fail "mixed link types: exit $rc: $(cat "$T/gc.err")"
# two files of different link types behind one port
gc -i "net_pcap0,rx_pcap=$LIVE1,rx_pcap=$RAW" --queues 2 -w "$T/q.pcapng" ip; rc=$?
[ $rc -eq 1 ] && grep -q "link type" "$T/gc.err" || fail "one port, two link types: exit $rc: $(cat "$T/gc.err")"
finish
