#!/usr/bin/env python3
"""Seed corpora of the libFuzzer targets, made at run time from the shared
data (nothing large is committed). Usage:
  seeds.py capture DIR OUT [N]  N (200) files of DIR up to 64 KiB,
                                spread over their sizes, each
                                behind an options byte (fuzz_capture.c)
  seeds.py decoders DIR OUT [N]  N (100) of the same files, each behind
                                a layout, a damage and a place
                                (fuzz_decoders.c)
  seeds.py kpkt PCAP OUT [N]    N (300) packets of a pcap, each behind the
                                6-byte header of fuzz_kpkt.c
"""
import os
import struct
import sys


def pick(src, n):
    files = []
    for name in os.listdir(src):
        p = os.path.join(src, name)
        if os.path.isfile(p) and os.path.getsize(p) <= 65536:
            files.append((os.path.getsize(p), name))
    files.sort()
    # spread over the sizes: the smallest alone are all a few records
    if len(files) > n:
        files = [files[i * len(files) // n] for i in range(n)]
    return files


def capture(src, out, n):
    files = pick(src, n)
    for i, (_, name) in enumerate(files):
        with open(os.path.join(src, name), 'rb') as f:
            body = f.read()
        # the byte picks the output formats and the second filter: vary it
        with open(os.path.join(out, name), 'wb') as f:
            f.write(bytes([i % 256]) + body)


def decoders(src, out, n):
    for i, (_, name) in enumerate(pick(src, n)):
        with open(os.path.join(src, name), 'rb') as f:
            body = f.read()
        # past the 64 KiB the reader takes at open, so that damage can
        # fall after what the outputs' set-up reads: a pcap's records
        # again (a pcapng's blocks: a new section)
        rest = body[24:] if body[:4] in (b'\xd4\xc3\xb2\xa1', b'\xa1\xb2\xc3\xd4') else body
        while rest and len(body) < 96 * 1024:
            body += rest
        # every layout; damage on one seed in four, at a spread place
        head = bytes([i % 10, (i // 10) % 4 if i % 4 == 0 else 0])
        with open(os.path.join(out, name), 'wb') as f:
            f.write(head + struct.pack('<I', i * 2654435761 % 2**32) + body)


def kpkt(pcap, out, n):
    with open(pcap, 'rb') as f:
        hdr = f.read(24)
        magic = struct.unpack('<I', hdr[:4])[0]
        e = '<' if magic in (0xa1b2c3d4, 0xa1b23c4d) else '>'
        seen = set()
        k = 0
        while k < n:
            rh = f.read(16)
            if len(rh) < 16:
                break
            _, _, caplen, wirelen = struct.unpack(e + 'IIII', rh)
            data = f.read(caplen)
            if len(data) < caplen:
                break
            # distinct shapes only: first 64 bytes and length
            key = (data[:64], caplen)
            if key in seen:
                continue
            seen.add(key)
            extra = max(0, min(wirelen - caplen, 65535))
            with open(os.path.join(out, 'pkt%04d' % k), 'wb') as o:
                o.write(struct.pack('<HI', extra, k * 2654435761 % 2**32) + data)
            k += 1


if __name__ == '__main__':
    modes = {'capture': (capture, 200), 'decoders': (decoders, 100), 'kpkt': (kpkt, 300)}
    if len(sys.argv) < 4 or sys.argv[1] not in modes:
        sys.exit('usage: seeds.py capture|decoders|kpkt SRC OUT [N]')
    fn, default = modes[sys.argv[1]]
    fn(sys.argv[2], sys.argv[3], int(sys.argv[4]) if len(sys.argv) > 4 else default)
