#!/usr/bin/env bash
# The main job, end to end: install, build, then capture the bundled sample
# traffic through a DPDK port (net_pcap replaying data/sample.pcap) with a
# tcpdump filter, write a pcap, and show what was captured.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/deps.sh
bash scripts/build.sh >/dev/null
out=${OUT:-/tmp/gpucap-demo.pcap}
filter=${FILTER:-tcp port 80 or udp port 53}
# stop once every matching packet of the file is in (net_pcap has no EOF)
count() { tcpdump -r "$1" --count "${@:2}" 2>/dev/null | awk '{print $1}'; }
want=$(count data/sample.pcap "$filter")
echo "+ gpu-capture -i net_pcap0,rx_pcap=data/sample.pcap -w $out -c $want --duration 30 '$filter'"
./build/apps/gpu-capture -i "net_pcap0,rx_pcap=data/sample.pcap" -w "$out" -c "$want" --duration 30 "$filter"
echo "+ tcpdump -nn -r $out -c 20"
tcpdump -nn -r "$out" -c 20 2>/dev/null
echo "($(count "$out") packets in $out)"
