#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# Per-packet time stamps: a live net_pcap capture carries each packet's time
# from the file (the port's RX time stamp), so its records equal tcpdump's
# offline run on the file, times included: one port into pcap and pcapng,
# three ports into pcapng per interface. -j host gives the host's clock
# instead; -j adapter_unsynced is refused (net_pcap has no clock of its
# own); -J lists the types; --time-stamp-precision micro writes
# microseconds (pcap's magic, pcapng's if_tsresol).
. "$(dirname "$0")/lib.sh"
need tcpdump
e='tcp or udp or arp'
tdump "$LIVE1" "$T/ref.pcap" "$e" || die "tcpdump on $LIVE1"
n=$(count "$T/ref.pcap")
for out in out.pcap out.pcapng; do
	gc -i "net_pcap0,rx_pcap=$LIVE1" -w "$T/$out" -c "$n" --duration 20 "$e" ||
		die "exit $?: $(cat "$T/gc.err")"
	"$CMP" -q "$T/$out" "$T/ref.pcap" || fail "$out: records or times differ from tcpdump's"
done
# every record its own time (the file's times are all distinct)
nts=$(tcpdump -r "$T/out.pcap" -tt --time-stamp-precision nano 2>/dev/null | awk '{print $1}' | sort -u | wc -l)
nref=$(tcpdump -r "$T/ref.pcap" -tt 2>/dev/null | awk '{print $1}' | sort -u | wc -l)
[ "$nts" -eq "$nref" ] || fail "$nts distinct times, tcpdump's file has $nref"

# three ports into one pcapng: each interface equals its file, times included
files=("$LIVE1" "$LIVE2" "$LIVE3")
total=0
for i in 0 1 2; do
	tdump "${files[$i]}" "$T/ref$i.pcap" "$e" || die "tcpdump on ${files[$i]}"
	total=$((total + $(count "$T/ref$i.pcap")))
done
gc -i "net_pcap0,rx_pcap=${files[0]}" -i "net_pcap1,rx_pcap=${files[1]}" \
	-i "net_pcap2,rx_pcap=${files[2]}" -w "$T/three.pcapng" -c "$total" --duration 30 "$e" ||
	die "three ports: exit $?: $(cat "$T/gc.err")"
for i in 0 1 2; do
	"$CMP" -q --iface "$i" "$T/three.pcapng" "$T/ref$i.pcap" ||
		fail "port $i: records or times differ from tcpdump's on ${files[$i]}"
done

# -j host: the host's clock (now), not the file's (2023)
gc -i "net_pcap0,rx_pcap=$LIVE1" -w "$T/host.pcap" -c "$n" --duration 20 -j host "$e" ||
	fail "-j host: exit $?: $(cat "$T/gc.err")"
first=$(tcpdump -r "$T/host.pcap" -tt -c 1 2>/dev/null | awk '{print int($1)}')
now=$(date +%s)
[ -n "$first" ] && [ $((now - first)) -lt 600 ] && [ $((now - first)) -ge 0 ] ||
	fail "-j host: first record at ${first:-?}, now is $now"
"$CMP" -q "$T/host.pcap" "$T/ref.pcap" >/dev/null && fail "-j host: the file's times, not the host's"

# -j adapter_unsynced: refused before anything starts
gc -i "net_pcap0,rx_pcap=$LIVE1" -w "$T/u.pcap" -j adapter_unsynced "$e"; rc=$?
[ $rc -eq 1 ] && grep -q "adapter_unsynced" "$T/gc.err" || fail "-j adapter_unsynced: exit $rc: $(cat "$T/gc.err")"
[ ! -e "$T/u.pcap" ] || fail "-j adapter_unsynced created its output"

# -J: tcpdump's list, then exit 0 without capturing
timeout -k 5 60 "$GC" -i "net_pcap0,rx_pcap=$LIVE1" -J >"$T/J.out" 2>"$T/gc.err" || fail "-J: exit $?"
grep -q "^Time stamp types for net_pcap0,rx_pcap=.* (use option -j to set):$" "$T/J.out" &&
	grep -q "^  host (Host)$" "$T/J.out" && grep -q "^  adapter (Adapter)$" "$T/J.out" ||
	fail "-J: $(cat "$T/J.out")"

# --time-stamp-precision micro: microsecond files, the same times
for out in us.pcap us.pcapng; do
	gc -i "net_pcap0,rx_pcap=$LIVE1" -w "$T/$out" -c "$n" --duration 20 \
		--time-stamp-precision micro "$e" || fail "micro $out: exit $?: $(cat "$T/gc.err")"
	"$CMP" -q "$T/$out" "$T/ref.pcap" || fail "micro $out: differs from tcpdump's"
done
[ "$(od -An -tx4 -N4 "$T/us.pcap" | tr -d ' ')" = a1b2c3d4 ] || fail "micro: not the microsecond magic"
command -v tshark >/dev/null &&
	{ tshark -r "$T/us.pcapng" -V 2>/dev/null | grep -q "Time stamp resolution.*6" ||
		capinfos -a "$T/us.pcapng" >/dev/null 2>&1 || fail "micro pcapng unreadable"; }
gc -i "net_pcap0,rx_pcap=$LIVE1" -w "$T/x.pcap" --time-stamp-precision pico "$e"; rc=$?
[ $rc -eq 1 ] && grep -q "time-stamp-precision" "$T/gc.err" || fail "precision pico: exit $rc"
finish
