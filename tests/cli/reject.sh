#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# Expressions libpcap rejects (syntax, or not valid for the file's link
# type): exit 1, libpcap's message on stderr, no packet read.
. "$(dirname "$0")/lib.sh"
need tcpdump
check_reject() { # FILE EXPR
	local f=$1 e=$2 msg rc
	tcpdump -r "$f" -d "$e" >/dev/null 2>"$T/td.err" && { fail "tcpdump accepts '$e' on $f"; return; }
	msg=$(sed -n 's/^tcpdump: //p' "$T/td.err" | tail -1)
	gc -r "$f" -w "$T/out.pcap" "$e"; rc=$?
	[ $rc -eq 1 ] || fail "'$e' on $(basename "$f"): exit $rc, expected 1"
	[ -n "$msg" ] && grep -qF -- "$msg" "$T/gc.err" ||
		fail "'$e': gpu-capture's message lacks libpcap's '$msg': $(cat "$T/gc.err")"
	[ "$(wc -l < "$T/gc.err")" -eq 1 ] || fail "'$e': more than one line on stderr"
}
check_reject "$DATA/eth-mix.pcap" 'tcp port'
check_reject "$DATA/eth-mix.pcap" 'host 300.1.1.1'
check_reject "$DATA/eth-mix.pcap" 'wlan addr1 00:11:22:33:44:55'
check_reject "$DATA/eth-mix.pcap" 'ip[1:3] = 1'
check_reject "$DATA/raw-ip.pcap" 'ether host 00:11:22:33:44:55'
check_reject "$DATA/raw-ip.pcap" 'vlan'
check_reject "$DATA/sll.pcap" 'ether broadcast'
finish
