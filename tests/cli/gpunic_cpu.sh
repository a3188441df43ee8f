#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# The emulated GPUDirect NIC's port logic without a GPU (agent=cpu: the
# feeding threads copy instead of the DMA kernel; everything else is the
# NIC's): captures delivered once, in file order, with their times and
# lengths, equal to tcpdump -r -w record for record on one queue and as a
# multiset on four (times to the microsecond that tcpdump -w keeps); the
# flows spread over every queue; several rx_pcap files one after the
# other; a packet larger than a data room chained and linearized;
# prefill=1 with chains; loop=1 delivering again and again, stamped with
# the host's clock.
. "$(dirname "$0")/lib.sh"
F1=$DATA/eth-mix.pcap F2=$DATA/eth-be.pcap F3=$DATA/eth-snap96-ns.pcap
multiset() { python3 "$SRC/tests/tools/pcap-multiset.py" "$1" "$2"; }
for f in "$F1" "$F2" "$F3"; do
	for e in "" "tcp or udp" "greater 200"; do
		tdump "$f" "$T/ref.pcap" $e || die "tcpdump: $(cat "$T/td.err")"
		n=$(count "$T/ref.pcap")
		[ "$n" -gt 0 ] || continue
		gc -i "gpunic0,rx_pcap=$f,agent=cpu" --backend cpu -c "$n" --backpressure \
			--duration 30 -w "$T/o.pcap" $e || fail "$f '$e': exit $?: $(cat "$T/gc.err")"
		"$CMP" --usec "$T/o.pcap" "$T/ref.pcap" >/dev/null ||
			fail "$f '$e': $("$CMP" --usec "$T/o.pcap" "$T/ref.pcap" | head -1)"
		gc -i "gpunic0,rx_pcap=$f,agent=cpu" --backend cpu --queues 4 -c "$n" \
			--backpressure --duration 30 -w "$T/o4.pcap" $e ||
			fail "$f '$e' 4 queues: exit $?: $(cat "$T/gc.err")"
		multiset "$T/o4.pcap" "$T/ref.pcap" || fail "$f '$e' 4 queues: not the same records"
	done
done
# the mixed capture, whose damaged records hold a wire length shorter
# than the bytes captured and seconds libpcap reads as negative: written
# as tcpdump writes them (records with a fraction of a second out of
# range left out: a time in nanoseconds cannot carry them)
if [ -f "$MIX" ]; then
	python3 - "$MIX" "$T/mix.pcap" <<'PY'
import struct, sys
b = open(sys.argv[1], 'rb').read()
o = open(sys.argv[2], 'wb')
o.write(b[:24])
off = 24
while off + 16 <= len(b):
    fr, cl = struct.unpack('<II', b[off + 4:off + 12])
    if fr < 1000000:
        o.write(b[off:off + 16 + cl])
    off += 16 + cl
PY
	tdump "$T/mix.pcap" "$T/ref.pcap"
	n=$(count "$T/ref.pcap")
	gc -i "gpunic0,rx_pcap=$T/mix.pcap,agent=cpu" --backend cpu -c "$n" --backpressure \
		--duration 30 -w "$T/o.pcap" || fail "mix: exit $?: $(cat "$T/gc.err")"
	"$CMP" --usec "$T/o.pcap" "$T/ref.pcap" >/dev/null ||
		fail "mix: $("$CMP" --usec "$T/o.pcap" "$T/ref.pcap" | head -1)"
fi
# the flow hash spreads over every one of 4 queues (the mixed capture
# has hundreds of flows)
if [ -f "$MIX" ]; then
	gc -i "gpunic0,rx_pcap=$MIX,agent=cpu" --backend cpu --queues 4 --backpressure \
		--duration 3 --summary-json "$T/s.json" -w "$T/o.pcap" "tcp port 80" ||
		fail "spread: exit $?: $(cat "$T/gc.err")"
	python3 -c "import json,sys; q=[x['rx'] for x in json.load(open(sys.argv[1]))['queues']]; print('per queue', q); sys.exit(not all(q))" \
		"$T/s.json" || fail "spread: a queue received nothing"
fi
# three files, one after the other, as one wire
python3 - "$T/cat.pcap" "$F1" "$F2" "$F1" <<'PY'
import sys
out = open(sys.argv[1], 'wb')
for i, p in enumerate(sys.argv[2:]):
    b = open(p, 'rb').read()
    out.write(b if i == 0 else b[24:])
PY
tdump "$T/cat.pcap" "$T/ref.pcap"
n=$(count "$T/ref.pcap")
gc -i "gpunic0,rx_pcap=$F1,rx_pcap=$F2,rx_pcap=$F1,agent=cpu" --backend cpu -c "$n" \
	--backpressure --duration 30 -w "$T/o.pcap" || fail "three files: exit $?: $(cat "$T/gc.err")"
"$CMP" --usec "$T/o.pcap" "$T/ref.pcap" >/dev/null ||
	fail "three files: $("$CMP" --usec "$T/o.pcap" "$T/ref.pcap" | head -1)"
# 4000-byte frames: chains of two 2048-byte data rooms, linearized
python3 - "$T/jumbo.pcap" <<'PY'
import struct, sys
out = open(sys.argv[1], 'wb')
out.write(struct.pack('<IHHiIII', 0xa1b2c3d4, 2, 4, 0, 0, 65535, 1))
for i in range(13):
    n = 4000 if i % 4 == 3 else 60
    f = b'\xff' * 6 + b'\x00\x11\x22\x33\x44\x55\x08\x00' + bytes((i + k) & 0xff for k in range(n - 14))
    out.write(struct.pack('<IIII', 1700000000 + i, i, n, n) + f)
PY
tdump "$T/jumbo.pcap" "$T/ref.pcap"
gc -i "gpunic0,rx_pcap=$T/jumbo.pcap,agent=cpu" --backend cpu -c 13 --backpressure \
	--duration 30 -w "$T/o.pcap" || fail "chained: exit $?: $(cat "$T/gc.err")"
"$CMP" --usec "$T/o.pcap" "$T/ref.pcap" >/dev/null ||
	fail "chained: $("$CMP" --usec "$T/o.pcap" "$T/ref.pcap" | head -1)"
# prefill=1 waits until the NIC has filled what it can: with chained
# packets the buffers handed out run out before the RX ring's slots, and
# that is as full as it gets (it says so, not "not filled" after 10 s)
python3 - "$T/jumbo2.pcap" <<'PY'
import struct, sys
out = open(sys.argv[1], 'wb')
out.write(struct.pack('<IHHiIII', 0xa1b2c3d4, 2, 4, 0, 0, 65535, 1))
f = b'\xff' * 6 + b'\x00\x11\x22\x33\x44\x55\x08\x00' + bytes(k & 0xff for k in range(3986))
for i in range(3000):
    out.write(struct.pack('<IIII', 1700000000 + i, 0, 4000, 4000) + f)
PY
gc -v -i "gpunic0,rx_pcap=$T/jumbo2.pcap,prefill=1,agent=cpu" --backend cpu -c 3000 \
	--backpressure --duration 30 -w "$T/o.pcap" || fail "prefill: exit $?: $(cat "$T/gc.err")"
[ "$(count "$T/o.pcap")" = 3000 ] || fail "prefill: $(count "$T/o.pcap") records, expected 3000"
grep -q "not filled" "$T/gc.err" && fail "prefill: $(grep "not filled" "$T/gc.err")"
grep -q "prefill=1: [0-9]* packets in the RX rings" "$T/gc.err" ||
	fail "prefill: no end said: $(grep -i prefill "$T/gc.err")"
# loop=1: the file again and again (80 packets, 500 asked), each packet
# stamped with the host's clock when the NIC delivered it, as a NIC
# stamps arrivals: every record within the run, one queue's in order,
# and one queue's records the file's packets pass after pass (a batch
# of the NIC runs on over a pass's end).
# (That several queues' records then merge in order without forcing is
# a matter of scheduling on a loaded machine: the bench shows it,
# docs/benchmarks.md "Packets in VRAM".)
for q in 1 2; do
	t0=$(date +%s)
	gc -i "gpunic0,rx_pcap=$F2,loop=1,agent=cpu" --backend cpu --queues $q -c 500 \
		--backpressure --duration 30 -w "$T/o.pcap" || fail "loop: exit $?: $(cat "$T/gc.err")"
	t1=$(($(date +%s) + 1))
	[ "$(count "$T/o.pcap")" = 500 ] || fail "loop, $q queue(s): $(count "$T/o.pcap") records, expected 500"
	python3 - "$T/o.pcap" "$t0" "$t1" "$q" "$F2" <<'PY' || fail "loop, $q queue(s): times not the host's clock, or not the file's packets in turn"
import struct, sys
d = open(sys.argv[1], 'rb').read()
t0, t1, nq = int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
src = open(sys.argv[5], 'rb').read()
e = '<' if src[:4] in (b'\xd4\xc3\xb2\xa1', b'\x4d\x3c\xb2\xa1') else '>'
pkts, o = [], 24
while o + 16 <= len(src):
    c = struct.unpack(e + 'I', src[o + 8:o + 12])[0]
    pkts.append(src[o + 16:o + 16 + c])
    o += 16 + c
unit = 1 if struct.unpack('<I', d[:4])[0] == 0xa1b23c4d else 1000
o, prev, bad, k = 24, 0, 0, 0
while o + 16 <= len(d):
    s, f, c, _ = struct.unpack('<IIII', d[o:o + 16])
    t = s * 10**9 + f * unit
    bad += not t0 <= s <= t1 or (nq == 1 and t < prev)
    bad += nq == 1 and d[o + 16:o + 16 + c] != pkts[k % len(pkts)]
    prev, o, k = t, o + 16 + c, k + 1
sys.exit(bad > 0 or k != 500)
PY
done
finish
