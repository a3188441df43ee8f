#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# An output slower than the capture (a FIFO whose reader takes 16 KB every
# 20 ms for 5 s from its first bytes, then the rest): the writer waits for
# it with every buffer of its I/O thread full, and says so: the summary's line,
# --summary-json's io_waits and io_wait_seconds. Every record it wrote
# reached the reader. The reader is slower than the writer by far (0.8
# MB/s against the tens of megabytes a second the capture frames even on
# a loaded machine: 4 MB/s fills the ring before the reader's 5 s end),
# and the writer's periodic push waits for its ring only when it is full,
# so every wait it makes is counted.
. "$(dirname "$0")/lib.sh"
mkfifo "$T/fifo"
slow_reader "$T/fifo" "$T/got.pcap" 5 &
rpid=$!
timeout -k 5 90 "$GC" -i "gpunic0,rx_pcap=$DATA/eth-mix.pcap,loop=1,agent=cpu" --backend cpu \
	--duration 3 --summary-json "$T/s.json" -w "$T/fifo" 2>"$T/err.txt" ||
	die "exit $?: $(cat "$T/err.txt")"
wait $rpid || die "the reader failed"
grep -q "^[0-9.]* s waited for the outputs' storage ([0-9]* times every buffer of an output's I/O thread was full)" \
	"$T/err.txt" || fail "no storage wait in the summary: $(cat "$T/err.txt")"
python3 - "$T/s.json" "$(count "$T/got.pcap")" <<'PY' || fail "summary JSON: $(cat "$T/s.json")"
import json, sys
s = json.load(open(sys.argv[1]))
n = int(sys.argv[2])
assert s["io_waits"] >= 1 and s["io_wait_seconds"] > 0, (s["io_waits"], s["io_wait_seconds"])
assert s["written"] == n > 0 and s["dropped"]["write_failed"] == 0, (s["written"], n, s["dropped"])
PY
# an output as fast as the capture needs: the line only where it waited
timeout -k 5 90 "$GC" -r "$DATA/eth-mix.pcap" -w "$T/o.pcap" 2>"$T/err2.txt" ||
	die "offline: exit $?: $(cat "$T/err2.txt")"
grep -q "waited for the outputs' storage" "$T/err2.txt" &&
	fail "a storage wait on a file of $(count "$T/o.pcap") records: $(cat "$T/err2.txt")"
finish
