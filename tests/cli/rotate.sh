#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# -C MBYTES / -W FILES rotation: every file reads back with libpcap; the
# files together hold what one file would (without -W), and with -W the
# ring keeps at most FILES files, each at most about -C. -G follows the
# wall clock, not a record stamped years ahead.
. "$(dirname "$0")/lib.sh"
# the shared mix when it is there, else data/sample.pcap's records
# repeated 20 times (one header, records appended: still a valid pcap)
in=$MIX
if [ ! -f "$in" ]; then
	in=$T/big.pcap
	{ cat "$SRC/data/sample.pcap"; for _ in $(seq 19); do tail -c +25 "$SRC/data/sample.pcap"; done; } >"$in"
fi
gc -r "$in" -w "$T/all.pcap" || die "plain run: $(cat "$T/gc.err")"
total=$(count "$T/all.pcap")
mkdir "$T/c" "$T/w"
gc -r "$in" -w "$T/c/out.pcap" -C 1 || die "-C 1: $(cat "$T/gc.err")"
n=0; sum=0
for f in "$T/c/out.pcap" $(ls "$T"/c/out.pcap[0-9]* 2>/dev/null | sort -V); do
	check_readable "$f" 1 || continue
	sum=$((sum + $(count "$f")))
	n=$((n + 1))
	sz=$(stat -c %s "$f")
	[ "$sz" -le $((1000000 + 262144 + 64)) ] || fail "$f: $sz bytes with -C 1"
done
[ "$n" -ge 2 ] || fail "-C 1 made $n file(s)"
[ "$sum" -eq "$total" ] || fail "-C 1: files hold $sum records, one file $total"
# concatenated in order, the files are the single file
if command -v mergecap >/dev/null; then
	mergecap -a -F pcap -w "$T/cat.pcap" "$T/c/out.pcap" $(ls "$T"/c/out.pcap[0-9]* | sort -V)
	"$CMP" -q --usec "$T/cat.pcap" "$T/all.pcap" || fail "-C 1: the files in order differ from one file"
fi
gc -r "$in" -w "$T/w/ring.pcap" -C 1 -W 2 || die "-C 1 -W 2: $(cat "$T/gc.err")"
nw=$(ls "$T/w" | wc -l)
[ "$nw" -eq 2 ] || [ "$total" -lt 3000 ] || fail "-W 2 left $nw files: $(ls "$T/w")"
for f in "$T"/w/*; do check_readable "$f" 1; done

# -G follows the wall clock: a record stamped years ahead (a NIC clock
# that jumped) neither rotates to its year nor holds rotation there
python3 - "$T/future.pcap" <<'PY'
import struct, sys, time
now = int(time.time())
with open(sys.argv[1], "wb") as f:
    f.write(struct.pack("<IHHiIII", 0xa1b2c3d4, 2, 4, 0, 0, 65535, 1))
    for i in range(6):
        t = now + 10 * 365 * 86400 if i == 2 else now
        pkt = b"\xff" * 12 + b"\x08\x00" + bytes(46)
        f.write(struct.pack("<IIII", t, i, len(pkt), len(pkt)) + pkt)
PY
mkdir "$T/g"
gc -r "$T/future.pcap" -G 3600 -w "$T/g/g%Y.pcap" || fail "-G with a future record: $(cat "$T/gc.err")"
ng=$(find "$T/g" -type f | wc -l)
[ "$ng" -eq 1 ] && [ -f "$T/g/g$(date +%Y).pcap" ] ||
	fail "-G with a record ten years ahead: $(find "$T/g" -type f)"
finish
