#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Generate the small captures of tests/data (deterministic).

    python3 tests/tools/mkdata.py tests/data

Packets are built here byte by byte (no third-party module), so the test
inputs are ours and cover what the filter suites need: Ethernet with
IPv4/IPv6, TCP (flags, ports), UDP, ICMP/ICMPv6 types, VLAN and QinQ tags,
ARP, broadcast and multicast, fragments, short snapshots (caplen < len),
plus Linux SLL and raw-IP link types, pcapng input, a big-endian pcap and
a damaged file.
"""
import os
import random
import struct
import sys

rnd = random.Random(20240601)


def csum(b):
    if len(b) % 2:
        b += b"\0"
    s = sum(struct.unpack("!%dH" % (len(b) // 2), b))
    while s >> 16:
        s = (s & 0xFFFF) + (s >> 16)
    return (~s) & 0xFFFF


def ip4(src, dst, proto, payload, frag=0, mf=False, ttl=64):
    hdr = struct.pack("!BBHHHBBH4s4s", 0x45, 0, 20 + len(payload),
                      rnd.randrange(65536), (0x2000 if mf else 0) | frag,
                      ttl, proto, 0, bytes(src), bytes(dst))
    hdr = hdr[:10] + struct.pack("!H", csum(hdr)) + hdr[12:]
    return hdr + payload


def ip6(src, dst, nh, payload, hlim=64):
    return struct.pack("!IHBB16s16s", 0x60000000, len(payload), nh, hlim,
                       bytes(src), bytes(dst)) + payload


def tcp(sport, dport, flags, data=b"", win=8192):
    return struct.pack("!HHIIBBHHH", sport, dport, rnd.randrange(1 << 32),
                       rnd.randrange(1 << 32), 5 << 4, flags, win, 0, 0) + data


def udp(sport, dport, data=b""):
    return struct.pack("!HHHH", sport, dport, 8 + len(data), 0) + data


def icmp(typ, code, data=b""):
    b = struct.pack("!BBHHH", typ, code, 0, rnd.randrange(65536), 1) + data
    return b[:2] + struct.pack("!H", csum(b)) + b[4:]


def eth(dst, src, etype, payload, vlans=()):
    b = bytes(dst) + bytes(src)
    for tpid, vid in vlans:
        b += struct.pack("!HH", tpid, vid)
    return b + struct.pack("!H", etype) + payload


def mac(*b):
    return bytes(b)


BCAST = mac(255, 255, 255, 255, 255, 255)
A = mac(0x00, 0x11, 0x22, 0x33, 0x44, 0x55)
B = mac(0x00, 0x66, 0x77, 0x88, 0x99, 0xAA)
MC4 = mac(0x01, 0x00, 0x5E, 0x00, 0x00, 0xFB)
MC6 = mac(0x33, 0x33, 0x00, 0x00, 0x00, 0x01)
H = [[10, 0, 0, 1], [10, 0, 0, 2], [192, 168, 1, 10], [192, 168, 1, 255],
     [172, 16, 5, 4], [8, 8, 8, 8], [224, 0, 0, 251], [255, 255, 255, 255]]
H6 = [bytes.fromhex("20010db8000000000000000000000001"),
      bytes.fromhex("20010db8000000000000000000000002"),
      bytes.fromhex("fe800000000000000211 22fffe334455".replace(" ", "")),
      bytes.fromhex("ff020000000000000000000000000001")]
FL = {"F": 1, "S": 2, "R": 4, "P": 8, "A": 16, "U": 32}


def flags(s):
    return sum(FL[c] for c in s)


def payload(n):
    return bytes(rnd.randrange(256) for _ in range(n))


def ether_packets():
    """A varied list of Ethernet frames."""
    pk = []
    ports = [80, 443, 22, 53, 8080, 123, 1024, 6000, 65535]
    for i in range(168):
        kind = i % 12
        s, d = rnd.sample(range(6), 2)
        sp, dp = rnd.choice(ports), rnd.choice(ports)
        body = payload(rnd.choice([0, 0, 0, 10, 60, 200, 1400]))
        if kind == 0:
            f = rnd.choice(["S", "SA", "A", "PA", "FA", "R", "RA", "U", "FPU", "A"])
            pk.append(eth(B, A, 0x0800, ip4(H[s], H[d], 6, tcp(sp, dp, flags(f), body))))
        elif kind == 1:
            pk.append(eth(B, A, 0x0800, ip4(H[s], H[d], 17, udp(sp, dp, body))))
        elif kind == 2:
            t, c = rnd.choice([(8, 0), (0, 0), (3, 1), (3, 3), (11, 0), (5, 1), (13, 0)])
            pk.append(eth(B, A, 0x0800, ip4(H[s], H[d], 1, icmp(t, c, payload(32)))))
        elif kind == 3:
            pk.append(eth(B, A, 0x86DD, ip6(H6[s % 3], H6[d % 3], 6,
                                            tcp(sp, dp, flags(rnd.choice(["S", "SA", "PA"])), body))))
        elif kind == 4:
            pk.append(eth(B, A, 0x86DD, ip6(H6[s % 3], H6[d % 3], 17, udp(sp, dp, body))))
        elif kind == 5:
            t = rnd.choice([128, 129, 133, 135, 136, 1])
            pk.append(eth(MC6 if t in (133, 135) else B, A, 0x86DD,
                          ip6(H6[s % 3], H6[3] if t in (133, 135) else H6[d % 3], 58,
                              icmp(t, 0, payload(16)))))
        elif kind == 6:
            vid = rnd.choice([10, 20, 100])
            pk.append(eth(B, A, 0x0800, ip4(H[s], H[d], 6, tcp(sp, dp, flags("PA"), body)),
                          vlans=[(0x8100, vid)]))
        elif kind == 7:
            pk.append(eth(B, A, 0x86DD, ip6(H6[0], H6[1], 17, udp(sp, 53, body)),
                          vlans=[(0x88A8, 300), (0x8100, rnd.choice([10, 20]))]))
        elif kind == 8:
            arp = struct.pack("!HHBBH6s4s6s4s", 1, 0x0800, 6, 4, rnd.choice([1, 2]),
                              A, bytes(H[s]), b"\0" * 6, bytes(H[d]))
            pk.append(eth(BCAST, A, 0x0806, arp))
        elif kind == 9:
            pk.append(eth(BCAST, A, 0x0800, ip4(H[2], H[rnd.choice([3, 7])], 17,
                                                udp(68, 67, payload(200)))))
        elif kind == 10:
            pk.append(eth(MC4, A, 0x0800, ip4(H[s], H[6], 17, udp(5353, 5353, body), ttl=1)))
        else:
            # fragments: first (MF), then a later one with an offset
            full = tcp(sp, dp, flags("PA"), payload(600))
            pk.append(eth(B, A, 0x0800, ip4(H[s], H[d], 6, full[:304], mf=True)))
            pk.append(eth(B, A, 0x0800, ip4(H[s], H[d], 6, full[304:], frag=38)))
    # minimum-size and oversized frames
    pk.append(eth(B, A, 0x0800, ip4(H[0], H[1], 17, udp(1, 2))) + b"\0" * 18)
    pk.append(eth(B, A, 0x0800, ip4(H[0], H[1], 17, udp(9, 9, payload(8000)))))
    return pk


def w_pcap(path, linktype, pkts, snaplen=65535, nano=False, big=False, cut=None):
    e = ">" if big else "<"
    magic = 0xA1B23C4D if nano else 0xA1B2C3D4
    out = struct.pack(e + "IHHiIII", magic, 2, 4, 0, 0, snaplen, linktype)
    t = 1700000000
    for i, p in enumerate(pkts):
        cap = p[:cut(i, p)] if cut else p[:snaplen]
        frac = (i * 7919 + 123) % (1000000000 if nano else 1000000)
        out += struct.pack(e + "IIII", t + i // 10, frac, len(cap), len(p)) + cap
    with open(path, "wb") as f:
        f.write(out)
    return out


def pad4(b):
    return b + b"\0" * (-len(b) % 4)


def block(typ, body):
    n = 12 + len(body)
    return struct.pack("<II", typ, n) + body + struct.pack("<I", n)


def opt(code, val):
    return struct.pack("<HH", code, len(val)) + pad4(val)


def w_pcapng(path, linktype, pkts, snaplen=0):
    shb = block(0x0A0D0D0A, struct.pack("<IHHq", 0x1A2B3C4D, 1, 0, -1))
    # interface 0 with nanosecond resolution (if_tsresol = 9)
    idb = block(1, struct.pack("<HHI", linktype, 0, snaplen) + opt(9, b"\x09") + opt(0, b""))
    out = shb + idb
    t = 1700000000 * 1000000000 + 1
    for i, p in enumerate(pkts):
        ts = t + i * 1000003
        cap = p[:200] if i % 17 == 5 else p
        out += block(6, struct.pack("<IIIII", 0, ts >> 32, ts & 0xFFFFFFFF, len(cap), len(p)) + pad4(cap))
    with open(path, "wb") as f:
        f.write(out)


def main():
    d = sys.argv[1] if len(sys.argv) > 1 else "tests/data"
    os.makedirs(d, exist_ok=True)
    pk = ether_packets()
    w_pcap(os.path.join(d, "eth-mix.pcap"), 1, pk)
    # short snapshot: records cut to 96 bytes (caplen < len), nanosecond
    w_pcap(os.path.join(d, "eth-snap96-ns.pcap"), 1, pk[:120], snaplen=96, nano=True)
    # big-endian file
    w_pcap(os.path.join(d, "eth-be.pcap"), 1, pk[60:140], big=True)
    w_pcapng(os.path.join(d, "eth-mix.pcapng"), 1, pk[:120])
    # Linux cooked (SLL): 16-byte header (packet type, ARPHRD, addr, proto)
    sll = []
    for i, p in enumerate(pk[:100]):
        et = p[12:14]
        if et in (b"\x81\x00", b"\x88\xa8"):
            continue
        sll.append(struct.pack("!HHH8s", i % 5, 1, 6, A + b"\0\0") + et + p[14:])
    w_pcap(os.path.join(d, "sll.pcap"), 113, sll)
    # raw IP (LINKTYPE_RAW = 101): IPv4 and IPv6 without a link header
    raw = [p[14:] for p in pk[:100] if p[12:14] in (b"\x08\x00", b"\x86\xdd")]
    w_pcap(os.path.join(d, "raw-ip.pcap"), 101, raw)
    # damaged: the last record claims more bytes than the file holds
    img = w_pcap(os.path.join(d, "damaged-trunc.pcap"), 1, pk[:40])
    with open(os.path.join(d, "damaged-trunc.pcap"), "wb") as f:
        f.write(img[:-37])
    # damaged: a record header with caplen larger than the snapshot length
    img = bytearray(w_pcap(os.path.join(d, "damaged-caplen.pcap"), 1, pk[:30], snaplen=2000))
    off = 24
    for _ in range(20):
        off += 16 + struct.unpack_from("<I", img, off + 8)[0]
    struct.pack_into("<II", img, off + 8, 0x7FFFFFF0, 0x7FFFFFF0)
    with open(os.path.join(d, "damaged-caplen.pcap"), "wb") as f:
        f.write(bytes(img))


if __name__ == "__main__":
    main()
