#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# With -r, what the input says of its interfaces reaches the output: a
# pcap link-type field is written as it was, FCS bits included, as
# tcpdump -w writes it (every corpus file with such bits); the whole
# file is tcpdump's, byte for byte (a third of the corpus, and inputs
# libpcap takes or refuses in its own way); a pcapng's
# interfaces (names, descriptions, speeds, time resolutions and offsets)
# are the output's, each packet on its own (tshark reads them back).
. "$(dirname "$0")/lib.sh"
need tcpdump
need tshark
need python3
# the 32-bit link-type field of a pcap file's header, as a hex number
ltfield() { od -An -tx4 -j20 -N4 "$1" | tr -d ' '; }
n=0
if [ -d "$CORPUS" ]; then
	while read -r f; do
		b=$(basename "$f")
		tdump "$f" "$T/ref.pcap"; trc=$?
		gc -r "$f" -w "$T/out.pcap"; grc=$?
		[ $((trc != 0)) -eq $((grc != 0)) ] ||
			{ fail "$b: tcpdump exits $trc, gpu-capture $grc"; continue; }
		[ "$(ltfield "$T/out.pcap")" = "$(ltfield "$T/ref.pcap")" ] ||
			fail "$b: link-type field $(ltfield "$T/out.pcap"), tcpdump's $(ltfield "$T/ref.pcap")"
		"$CMP" -q --usec "$T/out.pcap" "$T/ref.pcap" || fail "$b: records differ"
		n=$((n + 1))
	done < <(python3 - "$CORPUS" <<'PY'
import os, struct, sys
d = sys.argv[1]
for f in sorted(os.listdir(d)):
    if not f.endswith('.pcap'):
        continue
    h = open(os.path.join(d, f), 'rb').read(24)
    if len(h) == 24 and h[:4] in (b'\xd4\xc3\xb2\xa1', b'\x4d\x3c\xb2\xa1') and \
            struct.unpack('<I', h[20:24])[0] >> 16:
        print(os.path.join(d, f))
PY
)
	[ $n -ge 50 ] || fail "only $n corpus files with FCS bits compared"
	note "$n files with FCS bits in the link-type field"
fi
# the output is tcpdump's file, byte for byte (header, snapshot length,
# time fields, records): every pcapng of the corpus and every third pcap;
# where gpu-capture keeps nanoseconds that tcpdump -w cuts to microseconds
# (its file of nanosecond magic), with --time-stamp-precision micro
magic() { od -An -tx4 -N4 "$1" | tr -d ' '; }
n=0
if [ -d "$CORPUS" ]; then
	while read -r f; do
		b=$(basename "$f")
		tdump "$f" "$T/ref.pcap" || continue
		gc -r "$f" -w "$T/out.pcap" || { fail "$b: $(cat "$T/gc.err")"; continue; }
		if [ "$(magic "$T/out.pcap")" = a1b23c4d ] && [ "$(magic "$T/ref.pcap")" = a1b2c3d4 ]; then
			gc -r "$f" --time-stamp-precision micro -w "$T/out.pcap" ||
				{ fail "$b micro: $(cat "$T/gc.err")"; continue; }
		fi
		cmp -s "$T/out.pcap" "$T/ref.pcap" ||
			fail "$b: not tcpdump's file: $(cmp "$T/out.pcap" "$T/ref.pcap" 2>&1 | head -1)"
		n=$((n + 1))
	done < <(ls "$CORPUS" | awk '/\.pcap$/ && n++ % 3 == 0 || /\.pcapng$/ { print d "/" $0 }' d="$CORPUS")
	[ $n -ge 250 ] || fail "only $n corpus files compared whole"
	note "$n corpus files equal to tcpdump's, byte for byte"
fi
# inputs libpcap takes or refuses in its own way, each as tcpdump reads
# it (at nanosecond precision where gpu-capture keeps nanoseconds): a pcap record past Ethernet's largest
# within the snapshot (refused), a later pcapng interface of another
# snapshot length, or of a link type whose LINKTYPE and DLT numbers
# differ (refused), two interfaces of a snapshot past the largest, or of
# 262144 and 0 (the largest), one of nanoseconds (read, each record on
# its interface and time), and an interface of nanoseconds that comes
# after the first packet (its records in the first interface's place
# and resolution, microseconds: the outputs opened before it came)
python3 - "$T" <<'PY'
import struct, sys
d = sys.argv[1]
F = b'\xff' * 6 + b'\x00\x11\x22\x33\x44\x55\x08\x06' + bytes(range(28))
o = [struct.pack('<IHHiIII', 0xa1b2c3d4, 2, 4, 0, 0, 524288, 1)]
for i, f in enumerate([F, F + bytes(300000), F]):
    o.append(struct.pack('<IIII', 1700000000 + i, 0, len(f), len(f)) + f)
open(d + '/lp-bigrec.pcap', 'wb').write(b''.join(o))
def opt(c, v): return struct.pack('<HH', c, len(v)) + v + b'\0' * ((-len(v)) % 4)
def block(t, b): return struct.pack('<II', t, 12 + len(b)) + b + struct.pack('<I', 12 + len(b))
def ng(name, idbs, late=False):
    # late: the interfaces after the first one come after its first packet
    o = block(0x0A0D0D0A, struct.pack('<IHHq', 0x1A2B3C4D, 1, 0, -1) + opt(0, b''))
    idb = [block(1, struct.pack('<HHI', lt, 0, snap) + opt(9, bytes([res])) + opt(0, b''))
           for lt, snap, res in idbs]
    o += b''.join(idb[:1] if late else idb)
    for i in range(4):
        res = idbs[i % len(idbs)][2]
        t = (1700000000 + i) * 10**res + 1234567 % 10**res
        o += block(6, struct.pack('<IIIII', i % len(idbs), t >> 32, t & 0xffffffff, len(F), len(F))
                   + F + b'\0' * ((-len(F)) % 4))
        if late and i == 0:
            o += b''.join(idb[1:])
    open(d + '/' + name, 'wb').write(o)
ng('lp-snap2.pcapng', [(1, 262144, 6), (1, 300000, 6)])
ng('lp-raw2.pcapng', [(101, 262144, 6), (101, 262144, 6)])
ng('lp-big2.pcapng', [(1, 524288, 6), (1, 524288, 9)])
ng('lp-snap0.pcapng', [(1, 262144, 6), (1, 0, 9)])
ng('lp-late.pcapng', [(1, 262144, 6), (1, 262144, 9)], late=True)
PY
for c in lp-bigrec.pcap:micro lp-snap2.pcapng:micro lp-raw2.pcapng:micro lp-big2.pcapng:nano \
	lp-snap0.pcapng:nano lp-late.pcapng:micro; do
	f=${c%:*}
	rm -f "$T/out.pcap" "$T/ref.pcap"
	tdump "$T/$f" "$T/ref.pcap" --time-stamp-precision="${c#*:}"; trc=$?
	gc -r "$T/$f" -w "$T/out.pcap"; grc=$?
	[ $((trc != 0)) -eq $((grc != 0)) ] || fail "$f: tcpdump exits $trc, gpu-capture $grc"
	cmp -s "$T/out.pcap" "$T/ref.pcap" || fail "$f: not tcpdump's file: $(cmp "$T/out.pcap" "$T/ref.pcap" 2>&1)"
done
# a pcap input's FCS length in a pcapng output: if_fcslen
python3 - "$DATA/eth-mix.pcap" "$T/fcs.pcap" <<'PY'
import sys
d = bytearray(open(sys.argv[1], 'rb').read())
d[20:24] = (1 | 0x04000000 | (2 << 28)).to_bytes(4, 'little')  # FCS of 4 bytes
open(sys.argv[2], 'wb').write(d)
PY
gc -r "$T/fcs.pcap" -w "$T/fcs.pcapng" || fail "fcs: $(cat "$T/gc.err")"
python3 - "$T/fcs.pcapng" <<'PY' || fail "fcs: no if_fcslen of 32 bits in the output's IDB"
import struct, sys
b = open(sys.argv[1], 'rb').read()
o = struct.unpack('<I', b[4:8])[0]                 # past the SHB
assert struct.unpack('<I', b[o:o + 4])[0] == 1   # the IDB
end, p = o + struct.unpack('<I', b[o + 4:o + 8])[0] - 4, o + 16
while p < end:
    code, ln = struct.unpack('<HH', b[p:p + 4])
    if code == 13:
        sys.exit(0 if ln == 1 and b[p + 4] == 32 else 1)
    if code == 0:
        break
    p += 4 + (ln + 3) // 4 * 4
sys.exit(1)
PY
# a pcapng of two interfaces: each packet on its own interface, named
python3 "$(dirname "$0")/mkng.py" "$T/two.pcapng"
fields=(-T fields -e frame.interface_id -e frame.interface_name
	-e frame.interface_description -e frame.time_epoch -e frame.len)
tshark -r "$T/two.pcapng" "${fields[@]}" > "$T/in.txt" 2>/dev/null || fail "tshark cannot read the input"
for o in out.pcapng; do
	gc -r "$T/two.pcapng" -w "$T/$o" || { fail "two interfaces: $(cat "$T/gc.err")"; continue; }
	tshark -r "$T/$o" "${fields[@]}" > "$T/out.txt" 2>/dev/null || fail "tshark cannot read $o"
	[ "$(wc -l < "$T/out.txt")" -eq 40 ] || fail "two interfaces: $(wc -l < "$T/out.txt") packets"
	diff "$T/in.txt" "$T/out.txt" > "$T/diff.txt" ||
		fail "two interfaces: interfaces or times differ: $(head -4 "$T/diff.txt")"
done
tshark -r "$T/out.pcapng" -T fields -e frame.interface_id -Y 'frame.interface_id == 1' 2>/dev/null |
	grep -q 1 || fail "two interfaces: nothing on interface 1"
# the interfaces of several pcapng inputs, each its own
gc -r "$T/two.pcapng" -r "$DATA/eth-mix.pcapng" -w "$T/both.pcapng" || fail "two inputs: $(cat "$T/gc.err")"
ni=$(capinfos -I "$T/both.pcapng" 2>/dev/null | grep -c '^Interface #')
want=$(( 2 + $(capinfos -I "$DATA/eth-mix.pcapng" 2>/dev/null | grep -c '^Interface #') ))
[ "$ni" -eq "$want" ] || fail "two pcapng inputs: $ni interfaces in the output, $want in the inputs"
finish
