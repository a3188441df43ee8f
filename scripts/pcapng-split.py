#!/usr/bin/env python3
"""Split a pcapng file by interface: write the Enhanced Packet Blocks of
interface N to a nanosecond pcap file. Used by tests to compare what each
port of a multi-port capture holds.   pcapng-split.py IN.pcapng N OUT.pcap"""
import struct
import sys


def main(src, want, dst):
    data = open(src, "rb").read()
    off, endian, ifs, recs = 0, "<", [], []
    while off + 12 <= len(data):
        btype, blen = struct.unpack_from(endian + "II", data, off)
        if btype == 0x0A0D0D0A:  # SHB: byte order from its magic
            endian = "<" if data[off + 8:off + 12] == b"\x4d\x3c\x2b\x1a" else ">"
            btype, blen = struct.unpack_from(endian + "II", data, off)
            ifs = []
        if blen < 12 or off + blen > len(data):
            sys.exit("pcapng-split: damaged block at offset %d" % off)
        body = data[off + 8:off + blen - 4]
        if btype == 1:  # IDB: link type, snaplen, options (if_tsresol)
            linktype, _, snaplen = struct.unpack_from(endian + "HHI", body, 0)
            res, o = 6, 8
            while o + 4 <= len(body):
                code, olen = struct.unpack_from(endian + "HH", body, o)
                if code == 0:
                    break
                if code == 9 and olen >= 1:
                    v = body[o + 4]
                    res = v if not v & 0x80 else None
                o += 4 + ((olen + 3) & ~3)
            ifs.append((linktype, snaplen, res))
        elif btype == 6:  # EPB
            ifid, hi, lo, cap, wire = struct.unpack_from(endian + "IIIII", body, 0)
            if ifid == want:
                ts = (hi << 32) | lo
                res = ifs[ifid][2]
                ns = ts * 10 ** (9 - res) if res is not None and res <= 9 else ts
                recs.append((ns, cap, wire, body[20:20 + cap]))
        off += blen
    if want >= len(ifs):
        sys.exit("pcapng-split: no interface %d (the file has %d)" % (want, len(ifs)))
    linktype, snaplen = ifs[want][0], ifs[want][1] or 262144
    with open(dst, "wb") as f:
        f.write(struct.pack("<IHHiIII", 0xA1B23C4D, 2, 4, 0, 0, snaplen, linktype))
        for ns, cap, wire, pkt in recs:
            f.write(struct.pack("<IIII", ns // 10 ** 9, ns % 10 ** 9, cap, wire))
            f.write(pkt)


if __name__ == "__main__":
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    main(sys.argv[1], int(sys.argv[2]), sys.argv[3])
