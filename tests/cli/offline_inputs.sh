#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# gpu-capture -r reads capture archives as they are stored: gzip, zstd and
# lz4 inputs (found by their first bytes, whatever the name) give the
# output the plain file gives; several -r and -V LIST merge the inputs in
# time order (as mergecap does); -r - reads a pipe; a damaged compressed
# input ends with an error after the records before the damage. Streams
# that split (lz4(1)'s independent blocks, pzstd's frames) are decompressed
# on several threads where there are CPUs for them (-v says so).
. "$(dirname "$0")/lib.sh"
need gzip
need zstd
need lz4
need pzstd
need mergecap
E='tcp or udp'
for f in "$DATA/eth-mix.pcap" "$DATA/eth-mix.pcapng" "$DATA/eth-be.pcap"; do
	b=$(basename "$f")
	gc -v -r "$f" -w "$T/plain.pcap" "$E" || { fail "$b: plain: $(cat "$T/gc.err")"; continue; }
	check_readable "$T/plain.pcap" 10
	# -v: the reader's time, and its waits within it
	awk '/file reader: [0-9]+ ms, [0-9]+ ms of CPU; waited [0-9]+ ms for the executor, [0-9]+ ms for the writer, [0-9]+ ms for the copying threads$/ {
		k = split($0, w, /[^0-9]+/); n = 0
		for (i = 1; i <= k; i++) if (w[i] != "") v[n++] = w[i] + 0
		ok = n == 5 && v[2] + v[3] + v[4] <= v[0] + 1 } END { exit !ok }' "$T/gc.err" ||
		fail "$b: -v: no reader line, or waits longer than the reader: $(grep reader "$T/gc.err")"
	gzip -c "$f" > "$T/in.gz"
	zstd -q -c "$f" > "$T/in.zst"
	lz4 -q -c "$f" > "$T/in.lz4"
	# by the first bytes: a gzip stream named as a plain capture
	cp "$T/in.gz" "$T/in-gz-named.pcap"
	for c in in.gz in.zst in.lz4 in-gz-named.pcap; do
		gc -r "$T/$c" -w "$T/out.pcap" "$E" || { fail "$b $c: $(cat "$T/gc.err")"; continue; }
		"$CMP" -q "$T/out.pcap" "$T/plain.pcap" || fail "$b $c: records differ from the plain input's"
	done
	# zstd of several frames (zstd -B? not needed: two frames concatenated)
	head -c 100000 "$f" | zstd -q -c > "$T/two.zst"
	tail -c +100001 "$f" | zstd -q -c >> "$T/two.zst"
	gc -r "$T/two.zst" -w "$T/out.pcap" "$E" && "$CMP" -q "$T/out.pcap" "$T/plain.pcap" ||
		fail "$b: a zstd input of two frames differs"
	# pzstd's frames (a skippable frame first), lz4 blocks of 64 KB,
	# linked lz4 blocks (tests/pipeline/test_capfile_decoders.c has the
	# layouts that do not split)
	pzstd -q -p 2 -c "$f" > "$T/in.pz.zst"
	lz4 -q -B4 -c "$f" > "$T/in.b4.lz4"
	lz4 -q -BD -B4 -c "$f" > "$T/in.bd.lz4"
	cs="in.pz.zst in.b4.lz4 in.bd.lz4"
	# bgzip's members (tabix, htslib), where it is installed
	command -v bgzip >/dev/null && bgzip -c "$f" >"$T/in.bgzf.gz" && cs="$cs in.bgzf.gz"
	for c in $cs; do
		gc -v -r "$T/$c" -w "$T/out.pcap" "$E" || { fail "$b $c: $(cat "$T/gc.err")"; continue; }
		"$CMP" -q "$T/out.pcap" "$T/plain.pcap" || fail "$b $c: records differ from the plain input's"
		# (a file of one block is written with independent blocks)
		[ "$(nproc)" -lt 2 ] ||
			grep -Eq 'decompressed on [2-9] threads, [1-9][0-9]* units' "$T/gc.err" ||
			fail "$b $c: -v says: $(grep decompressed "$T/gc.err")"
	done
	# a pipe
	cat "$f" | gc -r - -w "$T/out.pcap" "$E" && "$CMP" -q "$T/out.pcap" "$T/plain.pcap" ||
		fail "$b: -r - (a pipe) differs"
	gzip -c "$f" | gc -r - -w "$T/out.pcap" "$E" && "$CMP" -q "$T/out.pcap" "$T/plain.pcap" ||
		fail "$b: -r - (a gzip pipe) differs"
done

# a file of 6 MB, pcap and pcapng: its records found ahead on 3 threads
# (--find-threads), the output what the reader alone writes; a damaged copy ends as it does
# alone; 9 threads, or live ports, are refused before anything starts
repeat_pcap "$DATA/eth-mix.pcap" "$T/big.pcap" 6
gc -r "$T/big.pcap" --find-threads 0 -w "$T/big0.pcap" "$E" || fail "--find-threads 0: $(cat "$T/gc.err")"
gc -v -r "$T/big.pcap" --find-threads 3 -w "$T/big3.pcap" "$E" || fail "--find-threads 3: $(cat "$T/gc.err")"
cmp -s "$T/big0.pcap" "$T/big3.pcap" || fail "--find-threads 3: output differs from the reader's alone"
grep -Eq 'input 1: records found ahead on 3 threads, [0-9]+ of [0-9]+ megabytes listed taken whole' "$T/gc.err" ||
	fail "--find-threads 3 -v says: $(grep -i found "$T/gc.err")"
check_readable "$T/big3.pcap" 1000
# the same records as pcapng: its blocks found ahead too
gc -r "$T/big.pcap" -w "$T/big.pcapng" || fail "to pcapng: $(cat "$T/gc.err")"
gc -r "$T/big.pcapng" --find-threads 0 -w "$T/big0.pcap" "$E" || fail "pcapng, --find-threads 0: $(cat "$T/gc.err")"
gc -v -r "$T/big.pcapng" --find-threads 3 -w "$T/big3.pcap" "$E" || fail "pcapng, --find-threads 3: $(cat "$T/gc.err")"
cmp -s "$T/big0.pcap" "$T/big3.pcap" || fail "pcapng, --find-threads 3: output differs from the reader's alone"
grep -Eq 'input 1: records found ahead on 3 threads, [1-9][0-9]* of [0-9]+ megabytes listed taken whole' "$T/gc.err" ||
	fail "pcapng, --find-threads 3 -v says: $(grep -i found "$T/gc.err")"
# batches of up to 8192 records from a file (a file's batch keeps no
# mbufs): the output of small batches, one input or two merged; 8193, or
# more than 512 on a live port, refused before anything starts
gc -r "$T/big.pcap" -w "$T/b256.pcap" "$E" || fail "--batch 256: $(cat "$T/gc.err")"
gc -r "$T/big.pcap" --batch 8192 -w "$T/b8k.pcap" "$E" || fail "--batch 8192: $(cat "$T/gc.err")"
cmp -s "$T/b256.pcap" "$T/b8k.pcap" || fail "--batch 8192: output differs from --batch 256's"
gc -r "$T/big.pcap" -r "$T/big.pcapng" --batch 100 -w "$T/m100.pcap" "$E" || fail "merged, --batch 100: $(cat "$T/gc.err")"
gc -r "$T/big.pcap" -r "$T/big.pcapng" --batch 8192 -w "$T/b8k.pcap" "$E" || fail "merged, --batch 8192: $(cat "$T/gc.err")"
cmp -s "$T/m100.pcap" "$T/b8k.pcap" || fail "merged, --batch 8192: output differs from --batch 100's"
[ "$(stat -c %s "$T/m100.pcap")" -gt "$(stat -c %s "$T/b256.pcap")" ] || fail "merged: not both inputs written"
gc -r "$T/big.pcap" --batch 8193 -w "$T/x.pcap" "$E" && fail "--batch 8193 accepted"
[ "$(wc -l < "$T/gc.err")" = 1 ] && grep -q -- "--batch" "$T/gc.err" || fail "--batch 8193: $(cat "$T/gc.err")"
gc -i net_null0 -c 1 --batch 1024 -w "$T/x.pcap" && fail "--batch 1024 with -i accepted"
[ "$(wc -l < "$T/gc.err")" = 1 ] && grep -q -- "--batch 1024: at most 512 on live ports (8192 with -r)" "$T/gc.err" ||
	fail "--batch 1024 with -i: $(cat "$T/gc.err")"
[ ! -e "$T/x.pcap" ] || fail "--batch refused: an output was created"
python3 - "$T/big.pcap" <<'PY'
import struct, sys
f = open(sys.argv[1], 'r+b')
pos = 24
while pos < 4 * 2**20 + 5000:
    f.seek(pos + 8)
    pos += 16 + struct.unpack('<I', f.read(4))[0]
f.seek(pos + 8)
f.write(struct.pack('<I', 0x7fffffff))
PY
gc -r "$T/big.pcap" --find-threads 0 -w "$T/big0.pcap" "$E"; r0=$?
gc -r "$T/big.pcap" --find-threads 3 -w "$T/big3.pcap" "$E"; r3=$?
[ $r0 -ne 0 ] && [ $r0 -eq $r3 ] || fail "damaged, --find-threads 3: exit $r3, alone $r0"
cmp -s "$T/big0.pcap" "$T/big3.pcap" || fail "damaged, --find-threads 3: output differs from the reader's alone"
gc -r "$T/big.pcap" --find-threads 9 -w "$T/x.pcap" && fail "--find-threads 9 accepted"
[ "$(wc -l < "$T/gc.err")" = 1 ] && grep -q -- "--find-threads" "$T/gc.err" ||
	fail "--find-threads 9: $(cat "$T/gc.err")"
[ ! -e "$T/x.pcap" ] || fail "--find-threads 9: an output was created"
gc -i net_null0 -c 1 --find-threads 2 -w "$T/x.pcap" && fail "--find-threads with -i accepted"
grep -q "applies to -r" "$T/gc.err" || fail "--find-threads with -i: $(cat "$T/gc.err")"

# a truncated gzip: the records before the cut, and libpcap's error
head -c 30000 "$DATA/eth-mix.pcap" | gzip -c > "$T/cut.gz"
head -c 30000 "$DATA/eth-mix.pcap" > "$T/cut.pcap"
tdump "$T/cut.pcap" "$T/cut-ref.pcap"; trc=$?
gc -r "$T/cut.gz" -w "$T/out.pcap"; grc=$?
[ $trc -ne 0 ] && [ $grc -ne 0 ] || fail "truncated gzip: tcpdump exits $trc (plain), gpu-capture $grc"
"$CMP" -q --usec "$T/out.pcap" "$T/cut-ref.pcap" || fail "truncated gzip: records before the cut differ"
grep -q "truncated dump file" "$T/gc.err" || fail "truncated gzip: no libpcap message: $(cat "$T/gc.err")"

# several inputs merged in time order: what mergecap writes (pcap)
a=$DATA/eth-mix.pcap
b=$DATA/eth-snap96-ns.pcap
c=$DATA/eth-be.pcap
mergecap -F pcap -w "$T/merged-ref.pcap" "$a" "$b" "$c" 2>/dev/null || fail "mergecap failed"
gc -r "$a" -r "$b" -r "$c" -w "$T/merged.pcap" || fail "-r x3: $(cat "$T/gc.err")"
"$CMP" -q --usec "$T/merged.pcap" "$T/merged-ref.pcap" || fail "-r x3: not the inputs in time order"
printf '%s\n\n%s\n%s\n' "$a" "$b" "$c" > "$T/list"
gc -V "$T/list" -w "$T/merged-v.pcap" || fail "-V: $(cat "$T/gc.err")"
"$CMP" -q "$T/merged-v.pcap" "$T/merged.pcap" || fail "-V LIST differs from the same -r inputs"
gzip -c "$b" > "$T/b.gz"
gc -r "$a" -r "$T/b.gz" -r "$c" -w "$T/merged-z.pcap" && "$CMP" -q "$T/merged-z.pcap" "$T/merged.pcap" ||
	fail "-r with a compressed input among plain ones differs"
# inputs of different link types are refused before anything starts
gc -r "$a" -r "$DATA/sll.pcap" -w "$T/bad.pcap"; rc=$?
[ $rc -eq 1 ] && grep -q "link type" "$T/gc.err" || fail "mixed link types: exit $rc, $(cat "$T/gc.err")"
gc -r "$a" -V "$T/list" -w "$T/bad.pcap"; rc=$?
[ $rc -eq 1 ] || fail "-r with -V: exit $rc"
finish
