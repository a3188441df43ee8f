#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# Linux interfaces (in a network namespace of the test's own): promiscuous
# mode is on while capturing and off again after (it was off before), -p
# leaves it off (tcpdump's meaning), and on the loopback interface each
# packet is captured once (10 datagrams sent, 10 records), not twice.
. "$(dirname "$0")/lib.sh"
need ip
need python3
[ "$(id -u)" = 0 ] || skip "needs root for a network namespace"
ns=gcap-pl-$$
ip netns add "$ns" 2>/dev/null || skip "cannot create a network namespace"
trap 'ip netns del "$ns" 2>/dev/null; rm -rf "$T"' EXIT
nsx() { ip netns exec "$ns" "$@"; }
nsx ip link add gca type veth peer name gcb || skip "cannot create a veth pair"
nsx ip link set gca up && nsx ip link set gcb up && nsx ip link set lo up
promisc() { nsx ip link show "$1" | head -1 | grep -q PROMISC; }
promisc gcb && die "gcb is promiscuous before the test"
for p in "" -p; do
	nsx timeout -k 5 60 "$GC" -q -i gcb -w "$T/v.pcap" --duration 4 $p udp 2>"$T/gc.err" &
	pid=$!
	seen=no
	for i in $(seq 1 30); do
		promisc gcb && seen=yes
		kill -0 $pid 2>/dev/null || break
		sleep 0.2
	done
	wait $pid || fail "capture ${p:-without -p}: exit $?: $(cat "$T/gc.err")"
	if [ -z "$p" ]; then
		[ $seen = yes ] || fail "gcb never promiscuous during the capture"
	else
		[ $seen = no ] || fail "-p: gcb promiscuous during the capture"
	fi
	promisc gcb && fail "gcb left promiscuous after the capture ${p:-without -p}"
done

# the loopback: 10 datagrams to 127.0.0.1, sent once the capture runs
nsx python3 - <<'PY' &
import socket, time
time.sleep(3)
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
for i in range(10):
    s.sendto(b"x" * (10 + i), ("127.0.0.1", 9999))
    time.sleep(0.05)
PY
nsx timeout -k 5 60 "$GC" -q -i lo -w "$T/lo.pcap" --duration 8 'udp port 9999' 2>"$T/gc.err" ||
	fail "lo: exit $?: $(cat "$T/gc.err")"
wait
n=$(count "$T/lo.pcap") || fail "lo: the output does not read back"
[ "${n:-0}" = 10 ] || fail "lo: $n records for 10 datagrams"
nsx timeout -k 5 60 "$GC" -q -i lo --queues 2 -w "$T/lo2.pcap" udp 2>"$T/gc.err"; rc=$?
[ $rc -eq 1 ] && grep -q "loopback" "$T/gc.err" || fail "lo --queues 2: exit $rc: $(cat "$T/gc.err")"
finish
