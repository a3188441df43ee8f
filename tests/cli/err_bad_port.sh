#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# Unknown driver, malformed PCI address, absent PCI device, missing
# rx_pcap file, tcpdump's -i any: exit 1 with one clear line, no output
# file.
. "$(dirname "$0")/lib.sh"
for p in net_nosuchdriver0 0000:zz:00.0 "0000:ff:1f.7" "net_pcap0,rx_pcap=$T/none.pcap"; do
	gc -i "$p" -w "$T/o.pcap" --duration 5; rc=$?
	[ $rc -eq 1 ] || fail "'$p': exit $rc, expected 1"
	[ -s "$T/gc.err" ] || fail "'$p': no message"
	grep -qi "gpu-capture" "$T/gc.err" || fail "'$p': message not from gpu-capture: $(cat "$T/gc.err")"
	note "'$p': $(grep gpu-capture "$T/gc.err" | head -1)"
	[ -e "$T/o.pcap" ] && { fail "'$p': output created"; rm -f "$T/o.pcap"; }
done
# tcpdump's -i any: the line says what to give instead
gc -i any -w "$T/o.pcap" --duration 5; rc=$?
[ $rc -eq 1 ] && grep -q "give -i once for each interface" "$T/gc.err" && [ "$(wc -l <"$T/gc.err")" -eq 1 ] ||
	fail "-i any: exit $rc: $(cat "$T/gc.err")"
finish
