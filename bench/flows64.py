#!/usr/bin/env python3
"""Write a pcap of 16384 64-byte UDP frames over 4096 flows (every third
to port 53): the emulated NIC's small-packet source (bench/gpu_capture.sh's
gpunic64). usage: flows64.py OUT.pcap"""
import struct
import sys

o = open(sys.argv[1], 'wb')
o.write(struct.pack('<IHHiIII', 0xa1b2c3d4, 2, 4, 0, 0, 65535, 1))
for i in range(16384):
    f = bytes.fromhex('020000000002020000000001') + b'\x08\x00'
    f += bytes([0x45, 0, 0, 50, 0, 0, 0, 0, 64, 17, 0, 0, 10, 0, (i >> 8) & 15, i & 255, 10, 1, 0, 1])
    f += struct.pack('>HHHH', 1024 + (i % 4096), 53 if i % 3 == 0 else 9, 30, 0)
    f += b'\0' * (64 - len(f))
    o.write(struct.pack('<IIII', 1700000000, i, 64, 64) + f)
