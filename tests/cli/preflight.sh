#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# Option values checked against what they cost, and every output path
# checked, before anything is allocated or captured: one line, exit 1,
# no output file left.
. "$(dirname "$0")/lib.sh"
refused() { # RC WHAT PATTERN FILE...
	local rc=$1 what=$2 pat=$3
	shift 3
	[ "$rc" -eq 1 ] || fail "$what: exit $rc, expected 1"
	[ "$(wc -l <"$T/gc.err")" -eq 1 ] || fail "$what: $(wc -l <"$T/gc.err") lines: $(cat "$T/gc.err")"
	grep -q -- "$pat" "$T/gc.err" || fail "$what: '$pat' not in: $(cat "$T/gc.err")"
	for f in "$@"; do [ -e "$f" ] && fail "$what: $f created"; done
	return 0
}
PORT="net_pcap0,rx_pcap=$LIVE1"
# too few mbufs: refused up front with the least that works, which works
gc -i "$PORT" -w "$T/m.pcap" --duration 2 --mbufs 64; rc=$?
refused $rc "--mbufs 64" "at least 1280" "$T/m.pcap"
gc -i "$PORT" -w "$T/m.pcap" --duration 2 --mbufs 1000 --rxd 512 --batch 512; rc=$?
refused $rc "--mbufs 1000 --rxd 512 --batch 512" "at least 1024" "$T/m.pcap"
gc -i "$PORT" -w "$T/m.pcap" --backend cpu --duration 2 --mbufs 1280 ||
	fail "--mbufs 1280 (the least): exit $?: $(cat "$T/gc.err")"
[ "$(count "$T/m.pcap")" -eq "$(count "$LIVE1")" ] || fail "--mbufs 1280: not every packet"
# memory: a ring that needs more than the process may have (ulimit -d),
# with the numbers
if sanitized; then
	note "ASan build: the ulimit -d cases are left out"
else
	(ulimit -d 2000000 && gc --backend gpu -r "$LIVE1" -w "$T/r.pcap" --ring 1024); rc=$?
	refused $rc "--backend gpu --ring 1024 under ulimit -d 2 GB" "--batch 2048: the capture needs 4.50 GB.*export 2.28 GB, staging 1.07 GB, packet pools 0.00 GB, file readers 1.142 GB.*2.05 GB is available" "$T/r.pcap"
	# auto, whose rule reads one filter's file on the cpu backend: 256
	(ulimit -d 2000000 && gc -r "$LIVE1" -w "$T/r.pcap" --ring 1024); rc=$?
	refused $rc "auto --ring 1024 under ulimit -d 2 GB" "--batch 256: the capture needs 3.38 GB" "$T/r.pcap"
	# auto with a GPU option may take the gpu backend: 2048
	(ulimit -d 2000000 && gc --mem host -r "$LIVE1" -w "$T/r.pcap" --ring 1024); rc=$?
	refused $rc "auto --mem host --ring 1024 under ulimit -d 2 GB" "--batch 2048: the capture needs 4.50 GB" "$T/r.pcap"
	# -B sizes the ring in batches of --batch's 256: -r keeps to them
	(ulimit -d 2000000 && gc -r "$LIVE1" -w "$T/r.pcap" -B 1048576); rc=$?
	refused $rc "-r -B 1048576 under ulimit -d 2 GB" "--ring 2048 --batch 256: the capture needs" "$T/r.pcap"
	# the cpu backend reads files in batches of 256 (the gpu one: 2048)
	(ulimit -d 2000000 && gc --backend cpu -r "$LIVE1" -w "$T/r.pcap" --ring 1024); rc=$?
	refused $rc "--backend cpu --ring 1024 under ulimit -d 2 GB" "--batch 256: the capture needs 3.38 GB.*export 2.16 GB.*file readers 0.144 GB" "$T/r.pcap"
	(ulimit -d 2000000 && gc -i "$PORT" -w "$T/r.pcap" --mbufs 2000000 --duration 2); rc=$?
	refused $rc "--mbufs 2000000 under ulimit -d 2 GB" "packet pools [1-9]" "$T/r.pcap"
	# what the readers take: the records' time fields on their way to
	# the writer and the slots' descriptors (above: 0.144 GB at --ring
	# 1024), one input's finders' lists (6 MB, 4 finders: 0.013 GB
	# more), a compressed input's decoding threads' slots
	repeat_pcap "$LIVE1" "$T/big.pcap" 6
	(ulimit -d 2000000 && gc --backend cpu -r "$T/big.pcap" -w "$T/r.pcap" --ring 1024 --find-threads 4); rc=$?
	refused $rc "--find-threads 4 under ulimit -d 2 GB" "packet pools 0.00 GB, file readers 0.156 GB)" "$T/r.pcap"
	(ulimit -d 2000000 && gc --backend cpu -r "$T/big.pcap" -w "$T/r.pcap" --ring 1024 --find-threads 0); rc=$?
	refused $rc "--find-threads 0 under ulimit -d 2 GB" "packet pools 0.00 GB, file readers 0.144 GB)" "$T/r.pcap"
	if command -v pzstd >/dev/null; then
		pzstd -q -1 -f "$T/big.pcap" -o "$T/big.zst"
		(ulimit -d 2000000 && gc --backend cpu -r "$T/big.zst" -w "$T/r.pcap" --ring 1024); rc=$?
		refused $rc "pzstd's frames under ulimit -d 2 GB" "packet pools 0.00 GB, file readers 0\.\(1[5-9]\|[2-9]\)[0-9]* GB)" "$T/r.pcap"
	fi
	rm -f "$T/big.pcap" "$T/big.zst"
	# the defaults fit in the same limit
	(ulimit -d 2000000 && gc -r "$LIVE1" -w "$T/d.pcap") || fail "defaults under ulimit -d 2 GB: $(cat "$T/gc.err")"
fi
# output paths: checked at start, not after the capture ran
gc -r "$LIVE1" -w "$T/o.pcap" --summary-json "$T/nodir/s.json"; rc=$?
refused $rc "--summary-json in a missing directory" "summary-json.*nodir" "$T/o.pcap"
mkdir "$T/dir"
gc -r "$LIVE1" -w "$T/o.pcap" --summary-json "$T/dir"; rc=$?
refused $rc "--summary-json onto a directory" "summary-json" "$T/o.pcap"
gc -i "$PORT" -w "$T/o.pcap" --duration 2 --summary-json "$T/nodir/s.json"; rc=$?
refused $rc "live --summary-json in a missing directory" "summary-json" "$T/o.pcap"
KER=$SRC/kernels/examples/flowfirst/flowfirst.c
gc -r "$LIVE1" -w "$T/o.pcap" --backend cpu --kernel "$KER" --kernel-state "$T/nodir/k.json"; rc=$?
refused $rc "--kernel-state in a missing directory" "kernel-state" "$T/o.pcap"
gc -r "$LIVE1" -w "$T/o.pcap" --backend cpu --kernel "$KER" --kernel-state "$T/dir"; rc=$?
refused $rc "--kernel-state onto a directory" "kernel-state" "$T/o.pcap"
# a symbolic link planted in a sticky world-writable directory
mkdir -m 1777 "$T/tmp"
ln -s "$T/victim" "$T/tmp/s.json"
gc -r "$LIVE1" -w "$T/o.pcap" --summary-json "$T/tmp/s.json"; rc=$?
refused $rc "--summary-json through a planted link" "symbolic link" "$T/o.pcap" "$T/victim"
ln -s "$T/victim" "$T/tmp/w.pcap"
gc -i "$PORT" -w "$T/tmp/w.pcap" --duration 2; rc=$?
refused $rc "live -w through a planted link" "symbolic link" "$T/victim"
# a FIFO's reader is not handed an end of data by the check
mkfifo "$T/fifo"
timeout 60 cat "$T/fifo" >"$T/fifo.out" &
cpid=$!
gc -r "$LIVE1" -w "$T/fifo" || fail "-w FIFO: $(cat "$T/gc.err")"
wait $cpid
[ "$(count "$T/fifo.out")" -eq "$(count "$LIVE1")" ] || fail "-w FIFO: the reader got $(count "$T/fifo.out")"
# rotation's numbered names: their directory checked
gc -r "$LIVE1" -C 1 -W 3 -w "$T/nodir/r.pcap"; rc=$?
refused $rc "-C -W into a missing directory" "cannot write in"
# a good --kernel-state is still written (its check leaves no .tmp)
gc -r "$LIVE1" -w "$T/k.pcap" --backend cpu --kernel "$KER" --kernel-state "$T/k.json" ||
	fail "good --kernel-state: $(cat "$T/gc.err")"
[ -s "$T/k.json" ] && [ ! -e "$T/k.json.tmp" ] || fail "good --kernel-state: $(ls "$T")"
# the checks leave nothing: a good run still creates its files, and a
# refused one does not leave the others it checked
gc -r "$LIVE1" -w "$T/good.pcap" --summary-json "$T/good.json" || fail "good run: $(cat "$T/gc.err")"
[ -s "$T/good.json" ] && [ -s "$T/good.pcap" ] || fail "good run: outputs missing"
gc -r "$LIVE1" -w "$T/g2.pcap" --summary-json "$T/g2.json" --backend cpu --kernel "$KER" --kernel-state "$T/nodir/k"; rc=$?
refused $rc "a bad --kernel-state after good paths" "kernel-state" "$T/g2.pcap" "$T/g2.json"
finish
