#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# A Linux interface (-i NAME, opened through net_af_packet): a veth pair in
# a network namespace of the test's own; frames sent on one end with an
# AF_PACKET socket are captured on the other, filtered, and written whole.
. "$(dirname "$0")/lib.sh"
need ip
need python3
[ "$(id -u)" = 0 ] || skip "needs root for a network namespace"
ns=gcap-cli-$$
ip netns add "$ns" 2>/dev/null || skip "cannot create a network namespace"
trap 'ip netns del "$ns" 2>/dev/null; rm -rf "$T"' EXIT
nsx() { ip netns exec "$ns" "$@"; }
nsx ip link add gca type veth peer name gcb || skip "cannot create a veth pair"
nsx ip link set gca up && nsx ip link set gcb up
# 30 UDP frames, 10 of them to port 53, sent once the capture runs
nsx python3 - <<'PY' &
import socket, struct, time
time.sleep(2)
s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW)
s.bind(("gca", 0))
for i in range(30):
    eth = bytes.fromhex("020000000002" "020000000001" "0800")
    ip = struct.pack("!BBHHHBBH4s4s", 0x45, 0, 28, i, 0, 64, 17, 0,
                     bytes([10, 0, 0, 1]), bytes([10, 0, 0, 2]))
    udp = struct.pack("!HHHH", 1000 + i, 53 if i % 3 == 0 else 80, 8, 0)
    s.send(eth + ip + udp)
PY
nsx timeout -k 5 60 "$GC" -q -i gcb -w "$T/out.pcapng" -c 10 --duration 15 'udp dst port 53' \
	2>"$T/gc.err" || fail "exit $?: $(cat "$T/gc.err")"
wait
n=$(count "$T/out.pcapng") || fail "the output does not read back"
[ "${n:-0}" = 10 ] || fail "captured ${n:-?} frames, want 10"
# every record whole: 14 + 28 bytes
"$CMP" --count "$T/out.pcapng" >/dev/null
command -v tcpdump >/dev/null &&
	[ "$(tcpdump -r "$T/out.pcapng" -nn 'udp dst port 53 and len == 42' 2>/dev/null | grep -c ' > 10.0.0.2.53:')" = 10 ] ||
	fail "records are not the 42-byte UDP frames sent"
finish
