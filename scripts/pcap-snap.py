#!/usr/bin/env python3
"""Copy a pcap file with every record cut to at most SNAP bytes (original
lengths kept), e.g. so that DPDK's net_pcap can replay it with infinite_rx
(which refuses packets larger than one mbuf); with MAXLEN, records of more
than MAXLEN captured bytes are left out instead (e.g. frames longer than
the emulated NIC's data rooms hold, which arrive chained).
   pcap-snap.py IN OUT SNAP [MAXLEN]"""
import struct
import sys


def main(src, dst, snap, maxlen=None):
    d = open(src, "rb").read()
    e = {b"\xd4\xc3\xb2\xa1": "<", b"\xa1\xb2\xc3\xd4": ">",
         b"\x4d\x3c\xb2\xa1": "<", b"\xa1\xb2\x3c\x4d": ">"}.get(d[:4])
    if e is None:
        sys.exit("pcap-snap: %s is not a pcap file" % src)
    out = bytearray(d[:16]) + struct.pack(e + "I", snap) + d[20:24]
    off = 24
    while off + 16 <= len(d):
        ts, frac, cap, wire = struct.unpack_from(e + "IIII", d, off)
        if maxlen is None or cap <= maxlen:
            keep = min(cap, snap)
            out += struct.pack(e + "IIII", ts, frac, keep, wire)
            out += d[off + 16:off + 16 + keep]
        off += 16 + cap
    open(dst, "wb").write(out)


if __name__ == "__main__":
    if len(sys.argv) not in (4, 5):
        sys.exit(__doc__)
    main(sys.argv[1], sys.argv[2], int(sys.argv[3]),
         int(sys.argv[4]) if len(sys.argv) == 5 else None)
