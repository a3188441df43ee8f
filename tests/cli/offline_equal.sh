#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# gpu-capture -r F -w out EXPR writes the records tcpdump -r F -w ref EXPR
# writes (pcap-cmp), with the same exit status class, on a subset of the
# corpus (several link types, pcapng inputs) and tests/data; pcapng output
# too for a few expressions. tcpdump -w writes microsecond pcap, so
# timestamps are compared to the microsecond (pcap-cmp --usec).
. "$(dirname "$0")/lib.sh"
need tcpdump
exprs=(
	''
	'tcp port 80 or udp port 53'
	'ip6'
	'tcp[tcpflags] & tcp-syn != 0'
	'vlan'
	'greater 200'
	'ip broadcast or ether multicast'
	'not ip'
	'icmp or icmp6'
	'udp[8:2] > 1000 and len < 1500'
)
nrun=0
while read -r f; do
	b=$(basename "$f")
	for i in "${!exprs[@]}"; do
		e=${exprs[$i]}
		args=()
		[ -n "$e" ] && args=("$e")
		tdump "$f" "$T/ref.pcap" "${args[@]}"; trc=$?
		gc -r "$f" -w "$T/out.pcap" "${args[@]}"; grc=$?
		if ! tcpdump -r "$f" -d "${args[@]}" >/dev/null 2>&1; then
			# rejected by libpcap for this link type: exit 1 and its message
			msg=$(sed -n 's/^tcpdump: //p' "$T/td.err" | tail -1)
			[ $grc -eq 1 ] || fail "$b '$e': tcpdump rejects it ($msg), gpu-capture exits $grc"
			grep -qF -- "$msg" "$T/gc.err" || fail "$b '$e': gpu-capture's message lacks libpcap's '$msg': $(cat "$T/gc.err")"
			continue
		fi
		nrun=$((nrun + 1))
		if [ $((trc != 0)) -ne $((grc != 0)) ]; then
			fail "$b '$e': tcpdump exits $trc, gpu-capture $grc ($(cat "$T/gc.err"))"
			continue
		fi
		"$CMP" -q --usec "$T/out.pcap" "$T/ref.pcap" || fail "$b '$e': records differ"
		if [ "$i" -lt 3 ]; then
			gc -r "$f" -w "$T/out.pcapng" "${args[@]}"
			"$CMP" -q --usec "$T/out.pcapng" "$T/ref.pcap" || fail "$b '$e': pcapng records differ"
		fi
	done
done < <(cli_inputs)
[ $nrun -ge 50 ] || fail "only $nrun comparisons ran"
note "$nrun comparisons"
finish
