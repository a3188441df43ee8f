#!/usr/bin/env bash
# Live equality on the GPU backend: gpu-capture on net_pcap ports replaying
# corpus files (host and copy memory modes, one and three ports) against
# tcpdump's offline run of the same files. Arg: the bundle directory.
# GPUS=0,1: the queues spread over those GPUs (--gpu).
set -uo pipefail
b=$1
G=$b/bin/gpu-capture CMP=$b/bin/pcap-cmp T="$b/bin/tcpdump -Z root"
C=$b/shared/data/pcaps/tcpdump-tests
tmp=$(mktemp -d)
pass=0 fail=0
mapfile -t files < <(python3 "$b/root/scripts/device/pick-live-files.py" "$C" "${NFILES:-6}")
exprs=('tcp or udp' 'not arp' 'greater 200' 'ether multicast')
count() { # records in a capture file (tcpdump's text output can wrap)
	"$CMP" "$1" "$1" 2>/dev/null | sed -n 's/^[^:]*: \([0-9]*\) records.*/\1/p'
}
check() { # name out ref
	if "$CMP" --no-ts "$2" "$3" >/dev/null 2>&1; then pass=$((pass + 1)); else
		fail=$((fail + 1)); echo "FAIL $1"; "$CMP" --no-ts "$2" "$3" | head -3; fi
}
# MEMS=cpu runs the same comparison on the cpu backend
for mem in ${MEMS:-host copy}; do
	be="--backend gpu --mem $mem${GPUS:+ --gpu $GPUS}"
	[ "$mem" = cpu ] && be="--backend cpu"
	for fe in "${files[@]}"; do
		f=$fe
		for e in "${exprs[@]}"; do
			$T -r "$f" -w "$tmp/ref.pcap" "$e" 2>/dev/null
			n=$(count "$tmp/ref.pcap")
			[ "${n:-0}" -gt 0 ] || continue
			timeout 60 "$G" -q $be -i "net_pcap0,rx_pcap=$f" \
				-w "$tmp/out.pcap" -c "$n" --duration 30 "$e" 2>"$tmp/err" ||
				{ echo "rc!=0: $(cat "$tmp/err")"; }
			check "$mem $(basename "$f") '$e'" "$tmp/out.pcap" "$tmp/ref.pcap"
		done
	done
	# three ports at once, one lcore each, pcapng: compare per interface
	f1=${files[0]} f2=${files[1]} f3=${files[2]}
	e='not arp'
	tot=0
	for i in 1 2 3; do
		eval "fi=\$f$i"
		$T -r "$fi" -w "$tmp/ref$i.pcap" "$e" 2>/dev/null
		tot=$((tot + $(count "$tmp/ref$i.pcap")))
	done
	timeout 60 "$G" -q $be -i "net_pcap0,rx_pcap=$f1" -i "net_pcap1,rx_pcap=$f2" \
		-i "net_pcap2,rx_pcap=$f3" -w "$tmp/multi.pcapng" -c $tot --duration 30 "$e"
	for i in 1 2 3; do
		python3 "$b/root/scripts/pcapng-split.py" "$tmp/multi.pcapng" $((i - 1)) "$tmp/port$i.pcap"
		check "$mem 3 ports: port $i" "$tmp/port$i.pcap" "$tmp/ref$i.pcap"
	done
done
echo "live equality: $pass passed, $fail failed"
rm -rf "$tmp"
[ $fail = 0 ]
