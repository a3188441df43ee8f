#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# bench/file_bench (one file's ceiling by each way to write it): every
# mode writes the file it is timed on whole, the --offset bytes first
# and the bytes at their places, for writes that do not divide the
# total and sources off a page's edge; it leaves no file behind without
# --keep; bad arguments are one line and exit 2 before any file is made.
# Extra argument: the file_bench binary.
. "$(dirname "$0")/lib.sh"
FB=${4:?file_bench path}
# check FILE MODE OFFSET CHUNK_KIB: OFFSET zero bytes, then 1 MiB laid
# out as MODE writes it
check() {
	local why
	why=$(python3 - "$@" <<'PY'
import sys
path, mode, off, chunk = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]) << 10
d = open(path, 'rb').read()
total = 1 << 20
def bad(m):
    print(m)
    sys.exit(1)
if len(d) != off + total:
    bad('%d bytes, want %d' % (len(d), off + total))
if d[:off] != bytes(off):
    bad('the first %d bytes are not zero' % off)
body = d[off:]
if mode == 'handoff':
    # buffer i holds 0x80 | (i & 0x7f)
    for i in range((total + chunk - 1) // chunk):
        piece = body[i * chunk:(i + 1) * chunk]
        if piece != bytes([0x80 | (i & 0x7f)]) * len(piece):
            bad('buffer %d is not its fill' % i)
elif body != b'\x5a' * total:
    bad('not 0x5a throughout: the first other byte at %d' %
        next(i for i, b in enumerate(body) if b != 0x5a))
PY
	) || fail "$2 (--offset $3 --chunk $4): $why"
}
modes="write handoff write2 prealloc map1 map4"
# OFFSET CHUNK_KIB SRC_OFFSET ROUNDS (a second round replaces the kept files)
for args in "24 4 100 1" "0 12 0 2" "4097 256 4095 1"; do
	read -r off chunk src rounds <<<"$args"
	d=$T/d-$off-$chunk && mkdir -p "$d"
	"$FB" --dir "$d" --mib 1 --rounds "$rounds" --offset "$off" --chunk "$chunk" --src-offset "$src" --keep \
		>"$T/out" 2>"$T/err"
	rc=$?
	if [ $rc != 0 ] && [ "$off" = 24 ] && grep -q 'Operation not supported\|Invalid argument' "$T/err"; then
		# MADV_POPULATE_WRITE (Linux 5.14) or fallocate where TMPDIR lies
		skip "file_bench cannot run all its modes in ${TMPDIR:-/tmp}: $(cat "$T/err")"
	fi
	[ $rc = 0 ] || { fail "--offset $off --chunk $chunk: exit $rc: $(cat "$T/err")"; continue; }
	[ "$(grep -c '^| [0-9] | ' "$T/out")" = $((6 * rounds)) ] ||
		fail "--offset $off --chunk $chunk: not $((6 * rounds)) rows: $(cat "$T/out")"
	[ "$(ls -A "$d" | wc -l)" = 6 ] || fail "--offset $off --chunk $chunk: files: $(ls -A "$d")"
	for m in $modes; do
		[ -f "$d/file_bench-$m" ] || { fail "--offset $off --chunk $chunk: no file for $m"; continue; }
		check "$d/file_bench-$m" "$m" "$off" "$chunk"
	done
done
# without --keep nothing stays
mkdir -p "$T/nokeep"
"$FB" --dir "$T/nokeep" --mib 1 --rounds 2 --chunk 64 >/dev/null 2>"$T/err" || fail "a plain run: exit $?: $(cat "$T/err")"
[ -z "$(ls -A "$T/nokeep")" ] || fail "a plain run left $(ls -A "$T/nokeep")"
# bad arguments: one line on stderr, nothing on stdout, exit 2, no file
mkdir -p "$T/bad"
while IFS= read -r a; do
	eval "set -- $a"
	"$FB" --dir "$T/bad" --mib 1 --rounds 1 "$@" >"$T/out" 2>"$T/err"
	rc=$?
	[ $rc = 2 ] || fail "'$a': exit $rc, want 2"
	[ "$(wc -l <"$T/err")" = 1 ] && grep -q '^\(file_bench: \|usage: file_bench \)' "$T/err" ||
		fail "'$a': stderr: $(cat "$T/err")"
	[ ! -s "$T/out" ] || fail "'$a': wrote $(cat "$T/out")"
done <<'ARGS'
--modes foo
--modes ''
--modes write,,map1
--chunk 0
--chunk ' 5'
--mib x
--rounds -1
--offset -1
--offset 1073741824
--chunk 1048577
--src-offset 4096
--nonsense 1
--mib
ARGS
# more than the directory has room for: the most --mib and --offset take
# (1 TiB and 1 GiB), asked where that is far more than the room, so that
# what other tests free meanwhile cannot make it fit; bounded all the
# same, should a broken check start writing
free=$(python3 -c 'import os, sys; v = os.statvfs(sys.argv[1]); print(v.f_bavail * v.f_frsize >> 20)' "$T/bad")
if [ "$free" -lt $((1048576 - 65536)) ]; then
	timeout -k 5 30 "$FB" --dir "$T/bad" --mib 1048576 --offset 1073741823 --rounds 1 --modes write \
		>"$T/out" 2>"$T/err"
	rc=$?
	[ $rc = 2 ] && grep -q 'does not fit' "$T/err" && [ "$(wc -l <"$T/err")" = 1 ] && [ ! -s "$T/out" ] ||
		fail "no room: exit $rc: $(cat "$T/err")"
else
	note "the no-room case not run: ${free} MiB free in ${TMPDIR:-/tmp}"
fi
# with --keep the room is for every mode's file as well: files of a
# third of the room fit one at a time, not seven (six kept and the run's)
# side by side
mib=$((free / 3))
if [ "$mib" -ge 1 ] && [ "$mib" -le 1048576 ]; then
	timeout -k 5 30 "$FB" --dir "$T/bad" --mib "$mib" --rounds 1 --keep \
		>"$T/out" 2>"$T/err"
	rc=$?
	[ $rc = 2 ] && grep -q 'with --keep does not fit' "$T/err" && [ ! -s "$T/out" ] ||
		fail "no room for --keep: exit $rc: $(cat "$T/err")"
fi
"$FB" --dir "$T/missing" >"$T/out" 2>"$T/err"
rc=$?
[ $rc = 2 ] && [ "$(wc -l <"$T/err")" = 1 ] && [ ! -s "$T/out" ] || fail "a missing --dir: exit $rc: $(cat "$T/err")"
"$FB" >/dev/null 2>&1
rc=$?
[ $rc = 2 ] || fail "no --dir: exit $rc, want 2"
[ -z "$(ls -A "$T/bad")" ] || fail "bad arguments left $(ls -A "$T/bad")"
finish
