#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# An output whose reader stops reading (a FIFO: the reader takes 100 KB,
# then holds it open): SIGINT once, and --duration, end the run after the
# stop's bounded wait. Exit 1, the error said, and the summary JSON counts
# what the FIFO never took as write_failed (received = written + that).
. "$(dirname "$0")/lib.sh"
big=$T/big.pcap
{ cat "$DATA/eth-mix.pcap"; for _ in $(seq 1000); do tail -c +25 "$DATA/eth-mix.pcap"; done; } >"$big"
mkfifo "$T/fifo"
# stalled_reader: reads 100 KB into $T/got, then keeps the FIFO open
stalled_reader() {
	rm -f "$T/got"
	(
		head -c 100000 >"$T/got"
		exec sleep 300
	) <"$T/fifo" &
	rpid=$!
}
check_json() {
	python3 - "$T/j.json" <<'PY' || fail "$1: summary JSON: $(cat "$T/j.json")"
import json, sys
s = json.load(open(sys.argv[1]))
lost = s["dropped"]["write_failed"]
assert lost > 0, s["dropped"]
assert s["captured"] == s["written"] + lost, (s["captured"], s["written"], lost)
PY
}
stalled_reader
timeout -k 60 120 "$GC" -q -r "$big" -w "$T/fifo" --summary-json "$T/j.json" 2>"$T/gc.err" &
pid=$!
for _ in $(seq 3000); do
	[ "$(stat -c %s "$T/got" 2>/dev/null || echo 0)" -ge 100000 ] && break
	sleep 0.01
done
kill -INT "$pid"
wait "$pid"; rc=$?
kill "$rpid"; wait "$rpid" 2>/dev/null
[ $rc -eq 1 ] || fail "-r, SIGINT, stalled FIFO: exit $rc (124: it did not stop): $(cat "$T/gc.err")"
grep -q "did not take its records in time" "$T/gc.err" || fail "-r, stalled FIFO: message: $(cat "$T/gc.err")"
check_json "-r, stalled FIFO"
stalled_reader
timeout -k 60 120 "$GC" -q -i "net_pcap0,rx_pcap=$LOOP,infinite_rx=1" -w "$T/fifo" --duration 2 \
	--summary-json "$T/j.json" 2>"$T/gc.err"; rc=$?
kill "$rpid"; wait "$rpid" 2>/dev/null
[ $rc -eq 1 ] || fail "--duration, stalled FIFO: exit $rc (124: it did not end): $(cat "$T/gc.err")"
check_json "--duration, stalled FIFO"
finish
