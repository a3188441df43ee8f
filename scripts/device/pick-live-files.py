#!/usr/bin/env python3
"""Print up to N Ethernet pcap files of DIR that a DPDK net_pcap port replays
faithfully: every record whole (caplen == len: net_pcap drops the original
length) and no larger than 9000 bytes (it mangles chained jumbo mbufs), and
more than 20 packets; the largest first.   pick-live-files.py DIR N"""
import os
import struct
import sys


def count(path):
    try:
        d = open(path, "rb").read()
    except OSError:
        return 0
    if len(d) < 24:
        return 0
    magic = d[:4]
    e = {b"\xd4\xc3\xb2\xa1": "<", b"\xa1\xb2\xc3\xd4": ">",
         b"\x4d\x3c\xb2\xa1": "<", b"\xa1\xb2\x3c\x4d": ">"}.get(magic)
    if e is None or struct.unpack_from(e + "I", d, 20)[0] & 0xFFFF != 1:
        return 0
    off, n = 24, 0
    while off + 16 <= len(d):
        _, _, cap, wire = struct.unpack_from(e + "IIII", d, off)
        if cap != wire or cap > 9000 or off + 16 + cap > len(d):
            return 0
        off += 16 + cap
        n += 1
    return n if off == len(d) and n > 20 else 0


if __name__ == "__main__":
    top, want = sys.argv[1], int(sys.argv[2])
    found = []
    for name in sorted(os.listdir(top)):
        path = os.path.join(top, name)
        if name.endswith(".pcap"):
            n = count(path)
            if n:
                found.append((-n, path))
    for _, path in sorted(found)[:want]:
        print(path)
