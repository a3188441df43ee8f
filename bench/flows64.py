#!/usr/bin/env python3
"""Write a pcap of 16384 UDP frames of 64 bytes (or SIZE, 64 to 1514) over
4096 flows (every third to port 53): the emulated NIC's fixed-size sources
(bench/gpu_capture.sh's gpunic64, gpunicSIZE). usage: flows64.py OUT.pcap
[SIZE]"""
import struct
import sys

arg = sys.argv[2] if len(sys.argv) > 2 else '64'
if not arg.isdigit() or not 64 <= int(arg) <= 1514:
    sys.exit('flows64.py: SIZE must be 64 to 1514 bytes, not %s' % arg)
size = int(arg)
o = open(sys.argv[1], 'wb')
o.write(struct.pack('<IHHiIII', 0xa1b2c3d4, 2, 4, 0, 0, 65535, 1))
for i in range(16384):
    f = bytes.fromhex('020000000002020000000001') + b'\x08\x00'
    ip_len = size - 14
    f += bytes([0x45, 0, ip_len >> 8, ip_len & 255, 0, 0, 0, 0, 64, 17, 0, 0,
                10, 0, (i >> 8) & 15, i & 255, 10, 1, 0, 1])
    f += struct.pack('>HHHH', 1024 + (i % 4096), 53 if i % 3 == 0 else 9, size - 34, 0)
    f += b'\0' * (size - len(f))
    o.write(struct.pack('<IIII', 1700000000, i, size, size) + f)
