#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# Each output file in time order across queues and ports: two RX queues
# (one file each, their times interleaved), eight queues of one file's
# flows, two ports into one pcapng, and records of the same time;
# every record is checked (capinfos' "Strict time order", and a walk of
# the times), and nothing is lost. --no-time-order writes the queues'
# records as they come (the option is accepted; its order is the OS's).
# The window is 10 s here: a loaded machine may start one queue's lcore
# long after the other's has replayed its whole file.
W=(--time-order-window 10000)
. "$(dirname "$0")/lib.sh"
need tcpdump
need editcap
need capinfos
need reordercap
need tshark
# two inputs in time order (each queue keeps its own order, as tcpdump
# keeps a file's), the second the first 4 ms later: their records
# interleave
reordercap "$LIVE1" "$T/first.pcap" >/dev/null 2>&1 || die "reordercap"
editcap -t 0.004 "$T/first.pcap" "$T/later.pcap" >/dev/null 2>&1 || die "editcap -t"
n1=$(count "$T/first.pcap")
n=$((2 * n1))

# strictly ordered: capinfos says so, and every record's time is >= the one before
ordered() {
	capinfos -o "$1" 2>/dev/null | grep -q "Strict time order: *True" || return 1
	tcpdump -r "$1" -tt --time-stamp-precision nano 2>/dev/null |
		awk 'BEGIN { p = 0 } { if ($1 < p) exit 1; p = $1 }'
}

for out in q.pcap q.pcapng; do
	gc -i "net_pcap0,rx_pcap=$T/first.pcap,rx_pcap=$T/later.pcap" --queues 2 "${W[@]}" \
		-w "$T/$out" -c "$n" --duration 30 || die "2 queues: exit $?: $(cat "$T/gc.err")"
	[ "$(count "$T/$out")" -eq "$n" ] || fail "2 queues $out: $(count "$T/$out") records, want $n"
	ordered "$T/$out" || fail "2 queues $out: not in time order"
done
# a --rx-burst of 1 and batches of 2: many small buffers per queue
gc -i "net_pcap0,rx_pcap=$T/first.pcap,rx_pcap=$T/later.pcap" --queues 2 --rx-burst 1 --batch 2 "${W[@]}" \
	-w "$T/small.pcapng" -c "$n" --duration 30 || fail "small batches: exit $?: $(cat "$T/gc.err")"
ordered "$T/small.pcapng" || fail "small batches: not in time order"

# eight queues of the emulated NIC (agent=cpu: no GPU needed), its flows
# spread by hash, so that consecutive records come from different queues:
# the merge gives back the file exactly, record for record. Nothing may
# go out before a queue that has nothing (order_forced 0), even on a
# loaded machine: every queue's packets wait in its ring before the start
# (prefill=1), so its batches are whole and a few; a quarter of the export
# memory of --ring 64 holds more than all of them; the window (60 s) is
# longer than the run; and the last records, for which the NIC's times
# give no idle marks, go out at the stop (--duration, no -c).
python3 - "$T/flows.pcap" <<'PY'
import random, struct, sys
random.seed(7)
out = open(sys.argv[1], 'wb')
out.write(struct.pack('<IHHiIII', 0xa1b2c3d4, 2, 4, 0, 0, 65535, 1))
t = 1700000000 * 1000000
for i in range(20000):
    f = random.randrange(2000)
    udp = struct.pack('>HHHHI', 1024 + f, 53, 26, 0, i) + bytes(14)
    ip = struct.pack('>BBHHHBBH4s4s', 0x45, 0, 20 + len(udp), 0, 0, 64, 17, 0,
                     bytes([10, 0, f >> 8, f & 255]), bytes([10, 1, 0, 1]))
    fr = bytes(6) + bytes([2, 0, 0, 0, 0, 1]) + b'\x08\x00' + ip + udp
    t += random.choice((1, 1, 2, 5, 40))  # distinct times, microseconds apart
    out.write(struct.pack('<IIII', t // 1000000, t % 1000000, len(fr), len(fr)) + fr)
PY
gc -i "gpunic0,rx_pcap=$T/flows.pcap,agent=cpu,prefill=1" --queues 8 --backend cpu \
	--ring 64 --backpressure --time-order-window 60000 --duration 10 \
	--summary-json "$T/flows.json" -w "$T/flows-o.pcap" ||
	fail "8 queues: exit $?: $(cat "$T/gc.err")"
forced=$(python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['order_forced'])" \
	"$T/flows.json")
[ "$forced" = 0 ] || fail "8 queues: $forced records went out without waiting for every queue"
"$CMP" --usec "$T/flows-o.pcap" "$T/flows.pcap" >/dev/null ||
	fail "8 queues: $("$CMP" --usec "$T/flows-o.pcap" "$T/flows.pcap" | head -1)"

# on the host's clock (-j host), where a queue's burst shares one time:
# the two queues' records merged in time order, none lost
gc -i "net_pcap0,rx_pcap=$T/first.pcap,rx_pcap=$T/later.pcap" --queues 2 -j host "${W[@]}" \
	-w "$T/host.pcap" -c "$n" --duration 30 || die "host clock: exit $?: $(cat "$T/gc.err")"
[ "$(count "$T/host.pcap")" -eq "$n" ] || fail "host clock: $(count "$T/host.pcap") records, want $n"
ordered "$T/host.pcap" || fail "host clock: not in time order"

# two ports, one file each, into one pcapng
gc -i "net_pcap0,rx_pcap=$T/first.pcap" -i "net_pcap1,rx_pcap=$T/later.pcap" "${W[@]}" \
	-w "$T/ports.pcapng" -c "$n" --duration 30 || die "2 ports: exit $?: $(cat "$T/gc.err")"
[ "$(count "$T/ports.pcapng")" -eq "$n" ] || fail "2 ports: $(count "$T/ports.pcapng") records"
ordered "$T/ports.pcapng" || fail "2 ports: not in time order"
# the same records as the two files merged (mergecap orders by time)
if command -v mergecap >/dev/null; then
	mergecap -F pcap -w "$T/merged.pcap" "$T/first.pcap" "$T/later.pcap" 2>/dev/null &&
		"$CMP" -q --no-linktype "$T/q.pcap" "$T/merged.pcap" ||
		fail "2 queues: not the records of the two files merged by time"
fi

# records of the same time from several queues: the lower queue first
# (queue 0 is the first port's), so that such a file is the same from run
# to run. Both ports replay one file: every time comes once from each.
gc -i "net_pcap0,rx_pcap=$T/first.pcap" -i "net_pcap1,rx_pcap=$T/first.pcap" "${W[@]}" \
	-w "$T/ties.pcapng" -c "$((2 * n1))" --duration 30 || die "ties: exit $?: $(cat "$T/gc.err")"
[ "$(count "$T/ties.pcapng")" -eq $((2 * n1)) ] || fail "ties: $(count "$T/ties.pcapng") records"
tshark -r "$T/ties.pcapng" -T fields -e frame.time_epoch -e frame.interface_id 2>/dev/null |
	awk '$1 == t && $2 < i { bad = 1 } { t = $1; i = $2 } END { exit bad }' ||
	fail "ties: a record of the second port went before one of the first at the same time"

# a queue on the host's clock (-j host) that has nothing does not hold the
# others: its idle polls say no earlier record can come from it. With a
# window of 60 s, a merge that waited for it would end the run by
# --duration (50 s), not by -c within seconds.
tcpdump -r "$T/first.pcap" -w "$T/empty.pcap" 'len > 100000' 2>/dev/null || die "empty file"
start=$SECONDS
gc -i "net_pcap0,rx_pcap=$T/first.pcap,rx_pcap=$T/empty.pcap" --queues 2 -j host \
	--time-order-window 60000 -w "$T/idle.pcap" -c "$n1" --duration 50 \
	--summary-json "$T/idle.json" ||
	fail "an idle queue: exit $?: $(cat "$T/gc.err")"
[ $((SECONDS - start)) -lt 40 ] || fail "an idle host-clock queue held the others for the window"
[ "$(count "$T/idle.pcap")" -eq "$n1" ] && ordered "$T/idle.pcap" || fail "an idle queue: records or order"
jget() { python3 -c "import json,sys; print(json.load(open(sys.argv[1]))[sys.argv[2]])" "$@"; }
[ "$(jget "$T/idle.json" order_forced)" = 0 ] ||
	fail "an idle host-clock queue: records counted as written without waiting"
# the emulated NIC with loop=1 stamps on the host's clock as it delivers
# and says, at an idle poll, before when nothing it delivers later is
# stamped: one flow, so one of two queues gets every packet and the other
# none; that one does not hold the first either (--rx-rate: the first's
# records do not fill a quarter of its export memory meanwhile)
python3 - "$T/oneflow.pcap" <<'PY'
import struct, sys
out = open(sys.argv[1], 'wb')
out.write(struct.pack('<IHHiIII', 0xa1b2c3d4, 2, 4, 0, 0, 65535, 1))
fr = bytes(6) + bytes([0, 1, 2, 3, 4, 5]) + b'\x08\x00' + bytes([0x45, 0, 0, 46, 0, 0, 0, 0, 64, 17, 0, 0, 10, 0, 0, 1, 10, 0, 0, 2]) + struct.pack('>HHHH', 4000, 53, 26, 0) + bytes(18)
for i in range(200):
    out.write(struct.pack('<IIII', 1700000000, i, len(fr), len(fr)) + fr)
PY
start=$SECONDS
gc -i "gpunic0,rx_pcap=$T/oneflow.pcap,loop=1,agent=cpu" --queues 2 --backend cpu \
	--rx-rate 20000 --time-order-window 60000 -w "$T/nicidle.pcap" -c 1000 --duration 50 \
	--summary-json "$T/nicidle.json" || fail "an idle NIC queue: exit $?: $(cat "$T/gc.err")"
[ $((SECONDS - start)) -lt 40 ] || fail "an idle NIC queue held the other for the window"
[ "$(count "$T/nicidle.pcap")" -eq 1000 ] && ordered "$T/nicidle.pcap" ||
	fail "an idle NIC queue: records or order"
[ "$(jget "$T/nicidle.json" order_forced)" = 0 ] ||
	fail "an idle NIC queue: records counted as written without waiting"
# the same on the port's clock (the file's times): the idle queue gives no
# marks, so the records go out when the window passes, and are counted so
gc -i "net_pcap0,rx_pcap=$T/first.pcap,rx_pcap=$T/empty.pcap" --queues 2 \
	--time-order-window 200 -w "$T/forced.pcap" -c "$n1" --duration 50 \
	--summary-json "$T/forced.json" || fail "window passed: exit $?: $(cat "$T/gc.err")"
[ "$(count "$T/forced.pcap")" -eq "$n1" ] && ordered "$T/forced.pcap" ||
	fail "window passed: records or order"
[ "$(jget "$T/forced.json" order_forced)" -gt 0 ] ||
	fail "window passed: no record counted as written without waiting"

# --no-time-order: the capture is whole, in whatever order it came
gc -i "net_pcap0,rx_pcap=$T/first.pcap,rx_pcap=$T/later.pcap" --queues 2 --no-time-order \
	-w "$T/raw.pcap" -c "$n" --duration 30 || fail "--no-time-order: exit $?: $(cat "$T/gc.err")"
[ "$(count "$T/raw.pcap")" -eq "$n" ] || fail "--no-time-order: $(count "$T/raw.pcap") records"
gc -i "net_pcap0,rx_pcap=$LIVE1" -w "$T/x.pcap" --time-order-window 0; rc=$?
[ $rc -eq 1 ] && grep -q -- "--time-order-window" "$T/gc.err" || fail "--time-order-window 0: exit $rc"
finish
