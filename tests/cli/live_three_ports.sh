#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# Three ports at once (-i three times, each its own RX lcore, each a
# different file): in the pcapng output, interface i holds port i's packets,
# equal (pcap-cmp --no-ts --iface i) to tcpdump's offline run on file i.
# Inputs as in live_equal.sh: no packet over ~15 KB, no snapped record.
. "$(dirname "$0")/lib.sh"
need tcpdump
files=("$LIVE1" "$LIVE2" "$LIVE3")
e='tcp or udp or arp'
total=0
for i in 0 1 2; do
	tdump "${files[$i]}" "$T/ref$i.pcap" "$e" || die "tcpdump on ${files[$i]}"
	n[$i]=$(count "$T/ref$i.pcap")
	total=$((total + n[i]))
done
gc -i "net_pcap0,rx_pcap=${files[0]}" -i "net_pcap1,rx_pcap=${files[1]}" \
	-i "net_pcap2,rx_pcap=${files[2]}" -w "$T/out.pcapng" -c "$total" \
	--duration 30 --summary-json "$T/sum.json" "$e" ||
	die "exit $?: $(cat "$T/gc.err")"
[ "$(count "$T/out.pcapng")" -eq "$total" ] || fail "captured $(count "$T/out.pcapng"), expected $total"
for i in 0 1 2; do
	"$CMP" -q --no-ts --iface "$i" "$T/out.pcapng" "$T/ref$i.pcap" ||
		fail "port $i (${files[$i]}) differs"
	[ "$(count --iface "$i" "$T/out.pcapng")" -eq "${n[$i]}" ] || fail "port $i count"
done
# the tool itself must see a difference when ports are swapped
if [ "${n[0]}" -ne "${n[1]}" ] && "$CMP" -q --no-ts --iface 1 "$T/out.pcapng" "$T/ref0.pcap" >/dev/null; then
	fail "pcap-cmp --iface does not tell ports apart"
fi
finish
