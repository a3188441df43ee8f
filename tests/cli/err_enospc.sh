#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# Output device full: a 64 KiB tmpfs. gpu-capture exits 1 with a clear
# message, and what it wrote reads back with libpcap (whole records only).
# The counts are the file's: the summary's captured and the JSON's written
# are the records libpcap reads, the rest of those captured is write_failed;
# with two outputs, each output's own count (one line each, JSON outputs).
# Needs root and a working mount (else skipped).
. "$(dirname "$0")/lib.sh"
[ "$(id -u)" -eq 0 ] || skip "not root: cannot mount a small tmpfs"
mkdir "$T/mnt"
mount -t tmpfs -o size=64k gcap-enospc "$T/mnt" 2>/dev/null || skip "mount -t tmpfs is not permitted here"
trap 'umount "$T/mnt" 2>/dev/null; rm -rf "$T"' EXIT
# the shared mix when it is there, else data/sample.pcap's records
# repeated 4 times (one header, records appended: still a valid pcap)
in=$MIX
if [ ! -f "$in" ]; then
	in=$T/big.pcap
	{ cat "$SRC/data/sample.pcap"; for _ in $(seq 3); do tail -c +25 "$SRC/data/sample.pcap"; done; } >"$in"
fi
# counts_match WHAT FILE: the summary and $T/j.json against FILE's records
counts_match() {
	local n
	n=$(count "$2") || return
	grep -q "^$n packets captured$" "$T/gc.err" || fail "$1: the file holds $n, the summary says: $(grep captured "$T/gc.err")"
	python3 - "$T/j.json" "$n" <<'PY' || fail "$1: JSON against $n records: $(cat "$T/j.json")"
import json, sys
s, n = json.load(open(sys.argv[1])), int(sys.argv[2])
assert s["written"] == n, (s["written"], n)
assert s["dropped"]["write_failed"] == s["captured"] - n, (s["captured"], s["dropped"])
assert s["dropped"]["write_failed"] > 0, s["dropped"]
PY
}
for o in o.pcap o.pcapng; do
	rm -f "$T/mnt"/*
	timeout -k 5 60 "$GC" -r "$in" -w "$T/mnt/$o" --summary-json "$T/j.json" 2>"$T/gc.err"; rc=$?
	[ $rc -eq 1 ] || fail "offline $o: exit $rc on a full device"
	grep -q "No space left on device" "$T/gc.err" || fail "offline $o: message: $(cat "$T/gc.err")"
	check_readable "$T/mnt/$o" 1
	counts_match "offline $o" "$T/mnt/$o"
	note "offline $o: $(count "$T/mnt/$o") records kept; $(head -1 "$T/gc.err")"
done
rm -f "$T/mnt"/*
timeout -k 5 60 "$GC" -i "net_pcap0,rx_pcap=$LOOP,infinite_rx=1" -w "$T/mnt/live.pcap" --duration 20 \
	--summary-json "$T/j.json" 2>"$T/gc.err"; rc=$?
[ $rc -eq 1 ] || fail "live: exit $rc on a full device"
grep -q "No space left on device" "$T/gc.err" || fail "live: message: $(cat "$T/gc.err")"
check_readable "$T/mnt/live.pcap" 1
counts_match live "$T/mnt/live.pcap"
# two outputs, one on the full device: each output's count is its files',
# and the packets the other output holds are not taken off the run's
rm -f "$T/mnt"/*
timeout -k 5 60 "$GC" -r "$in" -w "$T/whole.pcap" -w "$T/mnt/part.pcap" --summary-json "$T/j.json" \
	2>"$T/gc.err"; rc=$?
[ $rc -eq 1 ] || fail "two outputs: exit $rc on a full device"
nw=$(count "$T/whole.pcap") np=$(count "$T/mnt/part.pcap")
[ "$nw" -eq "$(count "$in")" ] || fail "two outputs: the healthy one holds $nw of $(count "$in")"
grep -q "^$nw packets captured$" "$T/gc.err" || fail "two outputs: $(grep captured "$T/gc.err")"
grep -q "^  $nw written to $T/whole.pcap$" "$T/gc.err" || fail "two outputs: $(cat "$T/gc.err")"
grep -q "^  $np written to $T/mnt/part.pcap ($((nw - np)) lost at a failed write)$" "$T/gc.err" ||
	fail "two outputs: $(cat "$T/gc.err")"
python3 - "$T/j.json" "$nw" "$np" <<'PY' || fail "two outputs: JSON: $(cat "$T/j.json")"
import json, sys
s, nw, np = json.load(open(sys.argv[1])), int(sys.argv[2]), int(sys.argv[3])
assert s["written"] == nw, (s["written"], nw)
o = s["outputs"]
assert [x["written"] for x in o] == [nw, np], o
assert [x["write_failed"] for x in o] == [0, nw - np], o
assert s["dropped"]["write_failed"] == nw - np, s["dropped"]
PY
finish
