#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# Under --backpressure a slow output holds the ports, not the packets: a
# 3 s capture into a FIFO whose reader takes 16 KB every 20 ms for 5.5 s
# from its first bytes fills the writer's I/O ring, then the queue's
# export memory, and the RX queue's port waits for the writer. The summary
# says how long (its line, --summary-json's backpressure_wait_seconds),
# and nothing is dropped, not even at the stop, where the RX lcore's last
# batch waits some 2.5 s for the writer's room (the stop gives the drain
# 3.75 of its 5 s; with the 2 s it had, that batch was dropped as writer
# behind). Every record written reached the reader. The capture frames far
# more than the reader's 0.8 MB/s even on a loaded machine (the ring and
# that memory fill at a few MB/s). Without --backpressure nothing waits:
# no line, zeros.
. "$(dirname "$0")/lib.sh"
mkfifo "$T/fifo"
slow_reader "$T/fifo" "$T/got.pcap" 5.5 &
rpid=$!
timeout -k 5 90 "$GC" -i "gpunic0,rx_pcap=$DATA/eth-mix.pcap,loop=1,agent=cpu" --backend cpu \
	--backpressure --duration 3 --summary-json "$T/s.json" -w "$T/fifo" 2>"$T/err.txt" ||
	die "exit $?: $(cat "$T/err.txt")"
wait $rpid || die "the reader failed"
grep -q "^[0-9.]* s the ports waited for the writer and [0-9.]* s for the executor (--backpressure, over 1 queue of [0-9.]* s)" \
	"$T/err.txt" || fail "no port wait in the summary: $(cat "$T/err.txt")"
python3 - "$T/s.json" "$(count "$T/got.pcap")" <<'PY' || fail "summary JSON: $(cat "$T/s.json")"
import json, sys
s = json.load(open(sys.argv[1]))
n = int(sys.argv[2])
w = s["backpressure_wait_seconds"]
assert list(w) == ["executor", "writer"], w
assert 0 < w["writer"] <= s["seconds"] and 0 <= w["executor"] <= s["seconds"], (w, s["seconds"])
d = s["dropped"]
assert d["pipeline_full"] == d["writer_behind"] == d["write_failed"] == 0, d
assert s["written"] == n > 0, (s["written"], n)
PY
# the same port into a file, without --backpressure: nothing waits
timeout -k 5 90 "$GC" -i "gpunic0,rx_pcap=$DATA/eth-mix.pcap,loop=1,agent=cpu" --backend cpu \
	--ring 2 --duration 1 --summary-json "$T/s2.json" -w "$T/o.pcap" 2>"$T/err2.txt" ||
	die "exit $?: $(cat "$T/err2.txt")"
grep -q "the ports waited" "$T/err2.txt" && fail "a port wait without --backpressure: $(cat "$T/err2.txt")"
python3 - "$T/s2.json" <<'PY' || fail "summary JSON without --backpressure: $(cat "$T/s2.json")"
import json, sys
s = json.load(open(sys.argv[1]))
assert s["backpressure_wait_seconds"] == {"executor": 0.0, "writer": 0.0}, s["backpressure_wait_seconds"]
PY
finish
