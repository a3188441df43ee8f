#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# --stats prints live lines; the summary and --summary-json agree with the
# file written; --summary-json keeps its keys and number formats.
. "$(dirname "$0")/lib.sh"
# the capture runs until two rate lines are out (however long a loaded
# machine takes to print them; bounded), then SIGINT ends it
"$GC" -i "net_pcap0,rx_pcap=$LOOP,infinite_rx=1" -w "$T/o.pcap" --duration 120 --rx-rate 50000 \
	--stats 1 --summary-json "$T/s.json" udp >"$T/out.txt" 2>"$T/err.txt" &
pid=$!
for _ in $(seq 600); do
	[ "$(cat "$T/out.txt" "$T/err.txt" | grep -ci "pps")" -ge 2 ] && break
	kill -0 $pid 2>/dev/null || break
	sleep 0.1
done
kill -INT $pid
wait $pid || die "exit $?: $(cat "$T/err.txt")"
lines=$(cat "$T/out.txt" "$T/err.txt" | grep -ci "pps")
[ "$lines" -ge 2 ] || fail "--stats 1 printed $lines rate lines: $(cat "$T/out.txt" "$T/err.txt")"
grep -q "packets captured" "$T/err.txt" "$T/out.txt" || fail "no summary"
python3 - "$T/s.json" "$(count "$T/o.pcap")" <<'PY' || fail "summary JSON does not match the file"
import json, sys
s = json.load(open(sys.argv[1]))
n = int(sys.argv[2])
def find(d, key):
    if isinstance(d, dict):
        for k, v in d.items():
            if k == key:
                return v
            r = find(v, key)
            if r is not None:
                return r
    return None
cap, rx = find(s, "captured"), find(s, "received")
print("summary:", {k: s[k] for k in list(s)[:8]} if isinstance(s, dict) else s)
assert cap == n, (cap, n)
assert rx is not None and rx >= cap > 0, (rx, cap)
assert "latency_no_gap_us" not in s, "no-gap latency without --busy-poll"
assert "poll_phases" not in s, "poll phases without --poll-phases"
PY
# with --busy-poll: the poll gaps (by bound, never more at a higher one)
# and the latency of the packets no gap reached, with their share
"$GC" -i "net_pcap0,rx_pcap=$LOOP,infinite_rx=1" -w "$T/b.pcap" --duration 2 --rx-rate 50000 \
	--busy-poll --poll-phases --summary-json "$T/b.json" udp >"$T/bout.txt" 2>"$T/berr.txt" ||
	die "busy-poll: exit $?: $(cat "$T/berr.txt")"
python3 - "$T/b.json" <<'PY' || fail "busy-poll summary JSON: poll_gaps / latency_no_gap_us"
import json, sys
s = json.load(open(sys.argv[1]))
g, ng = s["poll_gaps"], s["latency_no_gap_us"]
print("poll_gaps:", g, "latency_no_gap_us:", ng)
b = [g["ge5us_per_s"], g["ge10us_per_s"], g["ge20us_per_s"], g["ge50us_per_s"]]
assert all(x >= 0 for x in b) and b == sorted(b, reverse=True), b
assert 0 <= g["time_pct"] <= 100 and g["longest_us"] >= 0, g
assert 0 < ng["share"] <= 1 and 0 < ng["p50"] <= ng["p99"] <= ng["p999"], ng
assert all("poll_gaps_ge10us" in q for q in s["queues"]), s["queues"]
r = s["rx_lcores"]
assert all(r[k] >= 0 for k in ("minor_faults", "major_faults", "voluntary_switches", "involuntary_switches")), r
# --poll-phases: every phase, shares that add up, long spans per queue
p = s["poll_phases"]
print("poll_phases:", p)
names = ["loop", "done", "prep", "rx", "describe", "submit"]
assert list(p) == names, list(p)
assert abs(sum(v["time_pct"] for v in p.values()) - 100) < 0.1, p
assert p["rx"]["time_pct"] > 0 and all(v["ge10us_per_s"] >= 0 for v in p.values()), p
assert all(list(q["phase_long"]) == names for q in s["queues"]), s["queues"]
PY
grep -q "RX poll phases (share of the time" "$T/berr.txt" || fail "no poll phases line in the summary: $(cat "$T/berr.txt")"
# the document the bench and device scripts read: its keys in their order
# and each number as printf writes it (decimals per key)
gc -r "$LIVE1" -w "$T/f.pcap" --summary-json "$T/f.json" udp || die "offline: exit $?: $(cat "$T/gc.err")"
python3 - "$T/f.json" "$(count "$T/f.pcap")" <<'PY' || fail "offline summary JSON: keys or number formats"
import json, sys
s = json.loads(open(sys.argv[1]).read(), parse_float=lambda t: ("float", t))
top = ["backend", "seconds", "cpu_seconds", "cores_used", "received", "received_bytes",
       "captured", "written", "order_forced", "io_waits", "io_wait_seconds",
       "backpressure_wait_seconds", "filtered", "dropped",
       "rx_mpps", "rx_gbps", "latency_us",
       "latency_parts_us", "batches", "batch_mean", "exec_us_mean", "cycle_us_mean",
       "rx_polls", "pkts_per_poll", "poll_interval_us", "poll_gaps", "rx_lcores", "queues"]
assert list(s) == top, list(s)
assert list(s["dropped"]) == ["imissed", "rx_nombuf", "pipeline_full", "writer_behind",
                             "chained", "write_failed"], s["dropped"]
assert list(s["backpressure_wait_seconds"]) == ["executor", "writer"], s["backpressure_wait_seconds"]
assert list(s["latency_us"]) == ["p50", "p99", "p999"], s["latency_us"]
assert list(s["latency_parts_us"]) == [f"{p}_p{n}" for p in ("cycle", "exec", "in", "back")
                                       for n in (50, 99)], s["latency_parts_us"]
assert list(s["poll_gaps"]) == ["ge5us_per_s", "ge10us_per_s", "ge20us_per_s", "ge50us_per_s",
                                "longest_us", "time_pct"], s["poll_gaps"]
assert list(s["rx_lcores"]) == ["minor_faults", "major_faults", "voluntary_switches",
                                "involuntary_switches"], s["rx_lcores"]
assert len(s["queues"]) == 1 and list(s["queues"][0]) == [
    "rx", "captured", "filtered", "pipeline_full", "writer_behind", "batches",
    "poll_gaps_ge10us", "poll_gap_longest_us"], s["queues"]
assert s["backend"] in ("cpu", "gpu") and s["captured"] == int(sys.argv[2]), s
def decimals(v, n, where):
    assert isinstance(v, tuple) and len(v[1].split(".")[1]) == n, (where, v, n)
for k, n in {"seconds": 6, "cpu_seconds": 3, "cores_used": 2, "io_wait_seconds": 6,
             "rx_mpps": 4, "rx_gbps": 4,
             "batch_mean": 1, "exec_us_mean": 2, "cycle_us_mean": 2, "pkts_per_poll": 1,
             "poll_interval_us": 2}.items():
    decimals(s[k], n, k)
for o in ("latency_us", "latency_parts_us"):
    for k, v in s[o].items():
        decimals(v, 1, o + "." + k)
for k, v in s["backpressure_wait_seconds"].items():
    decimals(v, 6, "backpressure_wait_seconds." + k)
for k, v in s["poll_gaps"].items():
    decimals(v, 3 if k == "time_pct" else 1, "poll_gaps." + k)
decimals(s["queues"][0]["poll_gap_longest_us"], 1, "poll_gap_longest_us")
ints = [s[k] for k in ("received", "received_bytes", "captured", "written", "io_waits",
                       "filtered", "batches", "rx_polls")] + list(s["dropped"].values())
assert all(isinstance(v, int) for v in ints), ints
PY
# the summary's first lines are tcpdump's, its plurals too: one packet
# written, what the reader read before -c stopped it, none dropped
"$GC" -r "$LIVE1" -c 1 -w "$T/one.pcap" 2>"$T/gc.err" || die "-c 1: exit $?: $(cat "$T/gc.err")"
grep -v '^backend\|^gpu-capture\|^gcap' "$T/gc.err" | head -3 >"$T/sum3"
sed -n 1p "$T/sum3" | grep -qx "1 packet captured" &&
	sed -n 2p "$T/sum3" | grep -Eqx "[0-9]+ packets? received by filter" &&
	sed -n 3p "$T/sum3" | grep -qx "0 packets dropped by kernel" ||
	fail "-c 1: not tcpdump's lines: $(cat "$T/gc.err")"
grep -q "dropped by interface\|dropped:" "$T/gc.err" && fail "-c 1: drop lines where none dropped: $(cat "$T/gc.err")"
# a summary that cannot be written is refused before the capture starts
gc -r "$LIVE1" -w "$T/g.pcap" --summary-json "$T/nodir/s.json" udp; rc=$?
[ $rc -eq 1 ] || fail "--summary-json into a missing directory: exit $rc"
grep -q "^gpu-capture: --summary-json: cannot write '$T/nodir/s.json': No such file or directory$" "$T/gc.err" ||
	fail "--summary-json into a missing directory: $(cat "$T/gc.err")"
[ -e "$T/g.pcap" ] && fail "an unwritable summary: the capture ran"
finish
