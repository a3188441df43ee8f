#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# One pass, several outputs, each with its own filter: each file equals
# tcpdump's run of its expression (pcap and pcapng outputs mixed).
. "$(dirname "$0")/lib.sh"
need tcpdump
e1='tcp port 80 or udp port 53'
e2='ip6 and not icmp6'
e3='vlan or arp'
for f in "$DATA/eth-mix.pcap" "$DATA/eth-mix.pcapng" ${CORPUS:+$(ls "$CORPUS"/802.1ad_QinQ.pcap 2>/dev/null)}; do
	gc -r "$f" -w "$T/a.pcap:$e1" -w "$T/b.pcapng:$e2" -w "$T/c.pcap:$e3" -w "$T/d.pcap" 'greater 100' ||
		{ fail "$f: exit $?: $(cat "$T/gc.err")"; continue; }
	i=0
	for pair in "a.pcap|$e1" "b.pcapng|$e2" "c.pcap|$e3" "d.pcap|greater 100"; do
		o=${pair%%|*}; e=${pair#*|}
		tdump "$f" "$T/ref$i.pcap" "$e" || fail "tcpdump '$e'"
		"$CMP" -q --usec "$T/$o" "$T/ref$i.pcap" || fail "$(basename "$f") $o '$e' differs"
		i=$((i + 1))
	done
	# the outputs must differ from each other (or the test proves little)
	tot=$((${tot:-0} + $(count "$T/a.pcap") + $(count "$T/b.pcapng") + $(count "$T/c.pcap")))
done
[ "$tot" -gt 0 ] || fail "every output is empty"
finish
