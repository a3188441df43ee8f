#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Whether two classic pcap files hold the same records in any order
(times compared in microseconds, as tcpdump -w keeps them): what a
capture on several queues is checked against.

usage: pcap-multiset.py A B   (exit 0: the same, 1: not)
"""
import struct
import sys


def recs(path):
    b = open(path, 'rb').read()
    e = '<' if b[:4] in (b'\xd4\xc3\xb2\xa1', b'\x4d\x3c\xb2\xa1') else '>'
    ns = b[:4] in (b'\x4d\x3c\xb2\xa1', b'\xa1\xb2\x3c\x4d')
    off, r = 24, []
    while off + 16 <= len(b):
        ts, fr, cl, wl = struct.unpack(e + 'IIII', b[off:off + 16])
        r.append((ts, fr // 1000 if ns else fr, wl, b[off + 16:off + 16 + cl]))
        off += 16 + cl
    return sorted(r)


sys.exit(0 if recs(sys.argv[1]) == recs(sys.argv[2]) else 1)
