#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
# Write a pcapng of two Ethernet interfaces (names, descriptions, a speed,
# microsecond and nanosecond resolutions, a time offset on the second) and
# packets alternating between them, for the offline fidelity test.
import struct
import sys


def opt(code, val):
    pad = (-len(val)) % 4
    return struct.pack('<HH', code, len(val)) + val + b'\0' * pad


def block(t, body):
    n = 12 + len(body)
    return struct.pack('<II', t, n) + body + struct.pack('<I', n)


def main(path):
    out = block(0x0A0D0D0A, struct.pack('<IHHq', 0x1A2B3C4D, 1, 0, -1) +
                opt(4, b'mkng') + opt(0, b''))
    out += block(1, struct.pack('<HHI', 1, 0, 262144) + opt(2, b'eth0') +
                 opt(3, b'uplink port') + opt(8, struct.pack('<Q', 10**10)) +
                 opt(9, b'\x06') + opt(0, b''))
    out += block(1, struct.pack('<HHI', 1, 0, 262144) + opt(2, b'eth1') +
                 opt(3, b'mirror port') + opt(9, b'\x09') +
                 opt(14, struct.pack('<q', 3600)) + opt(0, b''))
    for i in range(40):
        ifid = i % 2
        sec = 1700000000 + i
        t = sec * 10**6 + i * 7 if ifid == 0 else sec * 10**9 + i * 7001
        frame = (b'\xff' * 6 + b'\x00\x11\x22\x33\x44\x55' + b'\x08\x06' +
                 bytes(range(28)) + bytes([i]) * (i + 1))
        pad = (-len(frame)) % 4
        out += block(6, struct.pack('<IIIII', ifid, t >> 32, t & 0xffffffff,
                                    len(frame), len(frame) + 4) + frame + b'\0' * pad)
    open(path, 'wb').write(out)


main(sys.argv[1])
