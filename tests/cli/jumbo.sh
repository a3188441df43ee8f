#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# Jumbo frames live: net_pcap gives a 9,000-byte frame as a chain of mbufs,
# and many of them fill a batch's staging area. Every one is recorded whole
# (caplen = len = 9,000), a filter on its last bytes sees them, the count
# equals tcpdump's on the same file, and no drop reason counts any.
. "$(dirname "$0")/lib.sh"
need tcpdump
F=$T/jumbo.pcap
# 2,000 frames of 9,000 bytes: byte 5000 is 0x55 in every 8th, 0xaa else
python3 - "$F" <<'PY' || die "cannot write $F"
import struct, sys
with open(sys.argv[1], "wb") as f:
    f.write(struct.pack("<IHHiIII", 0xa1b2c3d4, 2, 4, 0, 0, 65535, 1))
    for i in range(2000):
        d = bytearray(b"\x02\x00\x00\x00\x00\x01\x02\x00\x00\x00\x00\x02\x88\xb5")
        d += bytes((i + k) & 0xff for k in range(9000 - len(d)))
        d[5000] = 0x55 if i % 8 == 0 else 0xaa
        d[8999] = 0x5a
        f.write(struct.pack("<IIII", i, 0, 9000, 9000) + d)
PY
for e in 'ether[5000] != 0x55' 'ether[8999] = 0x5a'; do
	tdump "$F" "$T/ref.pcap" "$e" || { fail "tcpdump '$e'"; continue; }
	n=$(count "$T/ref.pcap")
	[ "$n" -gt 0 ] || { fail "tcpdump '$e' writes nothing"; continue; }
	gc -i "net_pcap0,rx_pcap=$F" -w "$T/out.pcap" --backend cpu -c "$n" --duration 20 \
		--summary-json "$T/s.json" "$e" ||
		{ fail "'$e': exit $?: $(cat "$T/gc.err")"; continue; }
	got=$(count "$T/out.pcap")
	[ "$got" = "$n" ] || fail "'$e': $got records, tcpdump $n"
	# every record whole
	python3 - "$T/out.pcap" <<'PY' || fail "'$e': a record is not whole"
import struct, sys
b = open(sys.argv[1], "rb").read()
o, bad, n = 24, 0, 0
while o + 16 <= len(b):
    _, _, cap, wire = struct.unpack_from("<IIII", b, o)
    bad += (cap, wire) != (9000, 9000)
    n += 1
    o += 16 + cap
print(n, "records,", bad, "not 9000/9000")
sys.exit(1 if bad or n == 0 else 0)
PY
	"$CMP" -q --no-ts "$T/out.pcap" "$T/ref.pcap" || fail "'$e': records differ from tcpdump's"
	python3 - "$T/s.json" <<'PY' || fail "'$e': a drop counted: $(cat "$T/s.json")"
import json, sys
d = json.load(open(sys.argv[1]))["dropped"]
print("dropped:", d)
assert "chained" in d and not any(d.values()), d
PY
done
finish
