#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# With -r, records' times reach the output as tcpdump -w carries them,
# whatever their values: a pcap input's seconds and fraction fields as they
# were (fractions of 2^31 and more, seconds near 2^32; microsecond inputs
# stay microsecond), a pcapng input's times past the year 2554 (where
# nanoseconds since the epoch no longer fit in 64 bits) converted as
# libpcap converts them into a pcap output (a microsecond pcapng into a
# microsecond file, also one whose snapshot length libpcap keeps past
# the link type's largest), and written unchanged, with their resolution and
# offset, into a pcapng output; unless --time-stamp-precision (or --nano)
# is given: then in that precision, cut as libpcap cuts them; the input's
# snapshot length in the header (tcpdump's file, byte for byte); and with
# the writer far behind the reader.
. "$(dirname "$0")/lib.sh"
need tcpdump
need python3
py=$T/times.py
cat > "$py" <<'PY'
import struct, sys

FRAME = b'\xff' * 6 + b'\x00\x11\x22\x33\x44\x55\x08\x06' + bytes(range(28))
PCAP_TIMES = [(1700000000, 0), (1700000000, 999999), (1700000000, 0x80000001),
              (0x7fffffff, 0xffffffff), (0xfffffffe, 12), (1700000000, 1500000),
              (5, 0xfffffff0)]
PLAIN_TIMES = [(1700000000, 0), (1700000000, 999999), (1700000001, 123456)]


def pcap(path, magic, snap=262144):
    out = [struct.pack('<IHHiIII', magic, 2, 4, 0, 0, snap, 1)]
    for s, f in PCAP_TIMES:
        out.append(struct.pack('<IIII', s, f, len(FRAME), len(FRAME)) + FRAME)
    open(path, 'wb').write(b''.join(out))


def opt(code, val):
    return struct.pack('<HH', code, len(val)) + val + b'\0' * ((-len(val)) % 4)


def block(t, body):
    return struct.pack('<II', t, 12 + len(body)) + body + struct.pack('<I', 12 + len(body))


# (tsresol, tsoffset, counts): year 3000 in us, year 2603 through an offset
NG_IFS = [(6, 0, [32503680000 * 10**6 + 17, 1700000000 * 10**6 + 999999]),
          (9, 20000000000, [123456789, 10**18 + 5]),
          (3, 0, [1700000000123])]


def pcapng(path, snap=262144):
    out = block(0x0A0D0D0A, struct.pack('<IHHq', 0x1A2B3C4D, 1, 0, -1) + opt(0, b''))
    for r, off, _ in NG_IFS:
        o = opt(9, bytes([r]))
        if off:
            o += opt(14, struct.pack('<q', off))
        out += block(1, struct.pack('<HHI', 1, 0, snap) + o + opt(0, b''))
    for i, (_, _, ts) in enumerate(NG_IFS):
        for t in ts:
            pad = b'\0' * ((-len(FRAME)) % 4)
            out += block(6, struct.pack('<IIIII', i, t >> 32, t & 0xffffffff, len(FRAME),
                                        len(FRAME)) + FRAME + pad)
    open(path, 'wb').write(out)


def pcap_fields(path):
    d = open(path, 'rb').read()
    o, r = 24, []
    while o + 16 <= len(d):
        s, f, c, _ = struct.unpack('<IIII', d[o:o + 16])
        r.append((s, f))
        o += 16 + c
    return '%08x ' % struct.unpack('<I', d[:4])[0] + ' '.join('%d.%d' % x for x in r)


def pcapng_fields(path):
    d = open(path, 'rb').read()
    o, ifs, r = 0, [], []
    while o + 12 <= len(d):
        t, n = struct.unpack('<II', d[o:o + 8])
        if t == 1:
            res, off, p = 6, 0, o + 16
            while p < o + n - 4:
                c, ln = struct.unpack('<HH', d[p:p + 4])
                if c == 0:
                    break
                if c == 9:
                    res = d[p + 4]
                if c == 14:
                    off = struct.unpack('<q', d[p + 4:p + 12])[0]
                p += 4 + (ln + 3) // 4 * 4
            ifs.append('%d/%d' % (res, off))
        if t == 6:
            i, hi, lo = struct.unpack('<III', d[o + 8:o + 20])
            r.append('%s:%d' % (ifs[i], hi << 32 | lo))
        o += n
    return ' '.join(r)


cmd = sys.argv[1]
if cmd == 'pcap-us':
    pcap(sys.argv[2], 0xa1b2c3d4)
elif cmd == 'pcap-ns':
    pcap(sys.argv[2], 0xa1b23c4d)
elif cmd == 'pcapng':
    pcapng(sys.argv[2])
elif cmd == 'fields':
    print(pcap_fields(sys.argv[2]))
elif cmd == 'ngfields':
    print(pcapng_fields(sys.argv[2]))
elif cmd == 'us-as-ng':  # a microsecond pcap's fields as a pcapng count
    print(' '.join('6/0:%d' % (s * 10**6 + f) for s, f in PCAP_TIMES))
elif cmd in ('plain-us', 'plain-ns'):  # times every reader converts alike
    PCAP_TIMES = PLAIN_TIMES
    if cmd == 'plain-ns':
        PCAP_TIMES = [(s, f * 1000 + 789) for s, f in PLAIN_TIMES]
    pcap(sys.argv[2], 0xa1b2c3d4 if cmd == 'plain-us' else 0xa1b23c4d)
elif cmd == 'many':  # 400,000 empty records, each of its own time
    PCAP_TIMES = [(1600000000 + i, (i * 7919) % 1000000) for i in range(400000)]
    FRAME = b''
    pcap(sys.argv[2], 0xa1b2c3d4)
elif cmd == 'snap-us':  # plain times, a snapshot length of 9000
    PCAP_TIMES = PLAIN_TIMES
    pcap(sys.argv[2], 0xa1b2c3d4, 9000)
elif cmd in ('ng-us', 'ng-us-big'):  # one interface of microseconds
    NG_IFS = [(6, 0, [(s * 10**6 + f) for s, f in PLAIN_TIMES])]
    # ng-us-big: a snapshot length past Ethernet's largest, which
    # libpcap 1.10 keeps as it is
    pcapng(sys.argv[2], 524288 if cmd == 'ng-us-big' else 262144)
elif cmd == 'plain-us-as-ng9':
    print(' '.join('9/0:%d' % (s * 10**9 + f * 1000) for s, f in PLAIN_TIMES))
PY
# microsecond pcap: the fields as they were, microsecond magic (tcpdump's)
python3 "$py" pcap-us "$T/us.pcap"
tdump "$T/us.pcap" "$T/us-ref.pcap" || fail "tcpdump cannot read the microsecond input"
gc -r "$T/us.pcap" -w "$T/us-out.pcap" || fail "us: $(cat "$T/gc.err")"
[ "$(python3 "$py" fields "$T/us-out.pcap")" = "$(python3 "$py" fields "$T/us-ref.pcap")" ] ||
	fail "us: $(python3 "$py" fields "$T/us-out.pcap") against tcpdump's $(python3 "$py" fields "$T/us-ref.pcap")"
# its pcapng: the fields taken together, not moved (microsecond units)
gc -r "$T/us.pcap" -w "$T/us-out.pcapng" || fail "us pcapng: $(cat "$T/gc.err")"
[ "$(python3 "$py" ngfields "$T/us-out.pcapng")" = "$(python3 "$py" us-as-ng)" ] ||
	fail "us pcapng: $(python3 "$py" ngfields "$T/us-out.pcapng")"
# nanosecond pcap: against tcpdump at nanosecond precision
python3 "$py" pcap-ns "$T/ns.pcap"
tdump "$T/ns.pcap" "$T/ns-ref.pcap" --time-stamp-precision=nano || fail "tcpdump --nano failed"
gc -r "$T/ns.pcap" -w "$T/ns-out.pcap" || fail "ns: $(cat "$T/gc.err")"
[ "$(python3 "$py" fields "$T/ns-out.pcap")" = "$(python3 "$py" fields "$T/ns-ref.pcap")" ] ||
	fail "ns: $(python3 "$py" fields "$T/ns-out.pcap") against tcpdump's $(python3 "$py" fields "$T/ns-ref.pcap")"
# pcapng past 2554 into pcap: as libpcap converts (tcpdump --nano)
python3 "$py" pcapng "$T/in.pcapng"
tdump "$T/in.pcapng" "$T/ng-ref.pcap" --time-stamp-precision=nano || fail "tcpdump cannot read the pcapng"
gc -r "$T/in.pcapng" -w "$T/ng-out.pcap" || fail "pcapng: $(cat "$T/gc.err")"
[ "$(python3 "$py" fields "$T/ng-out.pcap")" = "$(python3 "$py" fields "$T/ng-ref.pcap")" ] ||
	fail "pcapng -> pcap: $(python3 "$py" fields "$T/ng-out.pcap") against tcpdump's $(python3 "$py" fields "$T/ng-ref.pcap")"
# ... and into pcapng: every count, resolution and offset as it was
gc -r "$T/in.pcapng" -w "$T/ng-out.pcapng" || fail "pcapng: $(cat "$T/gc.err")"
[ "$(python3 "$py" ngfields "$T/ng-out.pcapng")" = "$(python3 "$py" ngfields "$T/in.pcapng")" ] ||
	fail "pcapng -> pcapng: $(python3 "$py" ngfields "$T/ng-out.pcapng") against $(python3 "$py" ngfields "$T/in.pcapng")"
# without -s the output is tcpdump's file, byte for byte: the input's
# snapshot length in the header
python3 "$py" snap-us "$T/snap.pcap"
tdump "$T/snap.pcap" "$T/snap-ref.pcap" || fail "tcpdump cannot read the 9000-byte snapshot input"
gc -r "$T/snap.pcap" -w "$T/snap-out.pcap" || fail "snap: $(cat "$T/gc.err")"
cmp -s "$T/snap-out.pcap" "$T/snap-ref.pcap" || fail "snap: not tcpdump's file: $(cmp "$T/snap-out.pcap" "$T/snap-ref.pcap")"
# a pcapng of microseconds into pcap: a microsecond file, tcpdump's;
# also where its snapshot length is past the link type's largest
for c in ng-us ng-us-big; do
	python3 "$py" $c "$T/$c.pcapng"
	tdump "$T/$c.pcapng" "$T/$c-ref.pcap" || fail "tcpdump cannot read $c.pcapng"
	gc -r "$T/$c.pcapng" -w "$T/$c-out.pcap" || fail "$c: $(cat "$T/gc.err")"
	cmp -s "$T/$c-out.pcap" "$T/$c-ref.pcap" ||
		fail "$c: $(python3 "$py" fields "$T/$c-out.pcap") against tcpdump's $(python3 "$py" fields "$T/$c-ref.pcap"); $(cmp "$T/$c-out.pcap" "$T/$c-ref.pcap")"
done
# several inputs, merged in time order: mergecap's file, the largest
# snapshot length in the header (times every reader reads alike)
if command -v mergecap >/dev/null; then
	python3 "$py" plain-us "$T/pu.pcap"
	mergecap -F pcap -w "$T/two-ref.pcap" "$T/snap.pcap" "$T/pu.pcap" || fail "mergecap failed"
	gc -r "$T/snap.pcap" -r "$T/pu.pcap" -w "$T/two-out.pcap" || fail "two inputs: $(cat "$T/gc.err")"
	cmp -s "$T/two-out.pcap" "$T/two-ref.pcap" ||
		fail "two inputs: not mergecap's file: $(cmp "$T/two-out.pcap" "$T/two-ref.pcap")"
	# into pcapng: libpcap reads it back (it refuses interfaces whose
	# snapshot lengths differ, which mergecap's pcapng has), tcpdump
	# and gpu-capture alike, the same records
	gc -r "$T/snap.pcap" -r "$T/pu.pcap" -w "$T/two-out.pcapng" || fail "two inputs: $(cat "$T/gc.err")"
	tdump "$T/two-out.pcapng" "$T/two-back.pcap" ||
		fail "two inputs into pcapng: tcpdump cannot read it: $(cat "$T/td.err")"
	gc -r "$T/two-out.pcapng" -w "$T/two-back2.pcap" ||
		fail "two inputs into pcapng: gpu-capture cannot read it: $(cat "$T/gc.err")"
	"$CMP" -q "$T/two-back.pcap" "$T/two-out.pcap" && "$CMP" -q "$T/two-back2.pcap" "$T/two-out.pcap" ||
		fail "two inputs into pcapng: read back, not the records of the pcap output"
fi
# fields scaled to the other resolution as libpcap scales them, a
# damaged fraction (a second or more, read as negative) included: toward
# zero, never carried into the seconds
for c in "ns micro" "us nano"; do
	set -- $c
	gc -r "$T/$1.pcap" -w "$T/$1-$2.pcap" --time-stamp-precision $2 || fail "$1 $2: $(cat "$T/gc.err")"
	tdump "$T/$1.pcap" "$T/$1-$2-ref.pcap" --time-stamp-precision=$2 || fail "tcpdump $1 $2 failed"
	[ "$(python3 "$py" fields "$T/$1-$2.pcap")" = "$(python3 "$py" fields "$T/$1-$2-ref.pcap")" ] ||
		fail "$1 $2: $(python3 "$py" fields "$T/$1-$2.pcap") against tcpdump's $(python3 "$py" fields "$T/$1-$2-ref.pcap")"
done
# --time-stamp-precision given with -r: every record in that precision,
# as tcpdump -r converts them, whatever the input's own
python3 "$py" plain-us "$T/pu.pcap"
python3 "$py" plain-ns "$T/pn.pcap"
for c in "pu nano" "pn micro"; do
	set -- $c
	tdump "$T/$1.pcap" "$T/$1-$2-ref.pcap" --time-stamp-precision=$2 ||
		fail "tcpdump $1 --time-stamp-precision=$2 failed"
	gc -r "$T/$1.pcap" -w "$T/$1-$2.pcap" --time-stamp-precision $2 ||
		fail "$1 $2: $(cat "$T/gc.err")"
	[ "$(python3 "$py" fields "$T/$1-$2.pcap")" = "$(python3 "$py" fields "$T/$1-$2-ref.pcap")" ] ||
		fail "$1 --time-stamp-precision $2: $(python3 "$py" fields "$T/$1-$2.pcap") against tcpdump's $(python3 "$py" fields "$T/$1-$2-ref.pcap")"
done
# a writer far behind the reader (its pipe not read for a second): each
# record still gets its own time fields, which wait for the writer beside
# the batches in flight. With 2 slots the reader fills their export
# memory (about 131,000 empty records) while the writer waits: a ring a
# quarter of its size fails this
python3 "$py" many "$T/many.pcap"
tdump "$T/many.pcap" "$T/many-ref.pcap" || fail "tcpdump cannot read the 400,000 records"
timeout -k 5 60 "$GC" -q --ring 2 -r "$T/many.pcap" -w - 2>"$T/gc.err" | { sleep 1; cat; } >"$T/many-out.pcap"
cmp -s "$T/many-out.pcap" "$T/many-ref.pcap" ||
	fail "a writer behind: not tcpdump's records: $(cat "$T/gc.err"; "$CMP" "$T/many-out.pcap" "$T/many-ref.pcap" 2>&1 | head -3)"
gc -r "$T/pu.pcap" -w "$T/pu-nano.pcapng" --nano || fail "pu --nano: $(cat "$T/gc.err")"
[ "$(python3 "$py" ngfields "$T/pu-nano.pcapng")" = "$(python3 "$py" plain-us-as-ng9)" ] ||
	fail "pu --nano pcapng: $(python3 "$py" ngfields "$T/pu-nano.pcapng")"
finish
