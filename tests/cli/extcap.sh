#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# gpucap-extcap, installed into a private extcap folder: tshark lists a
# net_pcap port as an interface, shows its options, and captures 10
# packets through gpu-capture, with a capture filter gpu-capture applies
# and one it refuses. Wireshark 4.0 honours WIRESHARK_EXTCAP_DIR only
# for an unprivileged user: as root, tshark runs as nobody.
. "$(dirname "$0")/lib.sh"
need tshark
EXTCAP=$(dirname "$GC")/gpucap-extcap
[ -x "$EXTCAP" ] || die "no $EXTCAP"
as=()
if [ "$(id -u)" -eq 0 ]; then
	need setpriv
	as=(setpriv --reuid nobody --regid nogroup --clear-groups)
fi
chmod 711 "$T"
X=$T/pub
mkdir -p "$X/extcap" "$X/home" "$X/cfg/gpucap" "$X/out"
chmod -R 755 "$X"
chmod 777 "$X/out" "$X/home"
cp "$EXTCAP" "$X/extcap/gpucap-extcap"
# one port from the config file, one from the environment
echo "net_pcap0,rx_pcap=$LOOP,infinite_rx=1   # looped: any count" >"$X/cfg/gpucap/gpucap-extcap-ports"
ts() {
	env HOME="$X/home" XDG_CONFIG_HOME="$X/cfg" WIRESHARK_EXTCAP_DIR="$X/extcap" \
		GPUCAP_GPU_CAPTURE="$GC" GPUCAP_EXTCAP_PORTS="net_pcap1,rx_pcap=$LIVE1" \
		"${as[@]}" timeout -k 5 60 tshark "$@"
}
xc() {
	env XDG_CONFIG_HOME="$X/cfg" GPUCAP_GPU_CAPTURE="$GC" "$EXTCAP" "$@"
}
ts -D >"$T/d.out" 2>"$T/d.err" || fail "tshark -D: $(cat "$T/d.err")"
grep -q "gpucap-net_pcap0 (gpucap: DPDK virtual device net_pcap0)" "$T/d.out" ||
	fail "tshark -D does not list gpucap-net_pcap0: $(cat "$T/d.out" "$T/d.err")"
grep -q "gpucap-net_pcap1" "$T/d.out" || fail "tshark -D does not list gpucap-net_pcap1: $(cat "$T/d.out")"
# the capture dialog's options
xc --extcap-interface gpucap-net_pcap0 --extcap-config >"$T/cfg.out" 2>&1 ||
	fail "--extcap-config: $(cat "$T/cfg.out")"
for c in --port --queues --backend --mem --gpu; do
	grep -q "{call=$c}" "$T/cfg.out" || fail "--extcap-config has no $c: $(cat "$T/cfg.out")"
done
grep -q "{default=net_pcap0,rx_pcap=$LOOP,infinite_rx=1}" "$T/cfg.out" || fail "the port's default is not its spec"
[ "$(xc --extcap-interface gpucap-net_pcap0 --extcap-dlts)" = \
	"dlt {number=1}{name=EN10MB}{display=Ethernet}" ] || fail "--extcap-dlts"
# a live capture through the extcap: 10 packets
ts -i gpucap-net_pcap0 -c 10 -w "$X/out/a.pcapng" >"$T/a.out" 2>"$T/a.err" ||
	fail "tshark -i gpucap-net_pcap0 -c 10: $(cat "$T/a.err")"
n=$(count "$X/out/a.pcapng" 2>/dev/null || echo 0)
[ "$n" -eq 10 ] || fail "tshark captured $n packets through the extcap, expected 10: $(cat "$T/a.err")"
# with a capture filter, applied by gpu-capture: every packet is UDP
ts -i gpucap-net_pcap0 -f udp -c 10 -w "$X/out/u.pcapng" >"$T/u.out" 2>"$T/u.err" ||
	fail "tshark -f udp: $(cat "$T/u.err")"
n=$(count "$X/out/u.pcapng" 2>/dev/null || echo 0)
nu=$(tshark -r "$X/out/u.pcapng" -Y udp 2>/dev/null | wc -l)
[ "$n" -eq 10 ] && [ "$nu" -eq 10 ] || fail "-f udp: $n packets, $nu of them UDP"
# a filter gpu-capture refuses: tshark says why, before capturing
xc --extcap-interface gpucap-net_pcap0 --extcap-capture-filter "udp port nosuch" \
	>"$T/f.out" 2>&1 && fail "a bad capture filter is accepted"
grep -q "unknown port 'nosuch'" "$T/f.out" || fail "bad filter message: $(cat "$T/f.out")"
finish
