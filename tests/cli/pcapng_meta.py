#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Check the pcapng metadata gpu-capture writes, file by file of a rotation.

usage: pcapng_meta.py SUMMARY_JSON EXPECT_JSON FILE...

Each FILE (in rotation order) must hold: an SHB with shb_hardware, shb_os
and shb_userappl as EXPECT says; per interface if_name, if_description,
if_hardware, if_os, if_MACaddr, if_speed (where EXPECT gives one), if_tsresol and
if_filter exactly when EXPECT gives a filter; EPBs with epb_flags inbound
and an epb_queue below EXPECT's queue count; and one ISB per interface,
whose isb_usrdeliv counts the EPBs of this file and those before it. The
last file's ISB counters equal the run's summary (--summary-json): ifrecv
= received + the NIC's drops, ifdrop = the NIC's drops, osdrop = the
pipeline's and writer's drops, filteraccept = captured. Earlier files'
counters never exceed the last's. Prints one line per failure; exit 1 on
any.
"""
import json
import struct
import sys

fails = []


def fail(msg):
    fails.append(msg)
    print("FAIL: " + msg)


def options(b, o, end):
    out = {}
    while o + 4 <= end:
        code, ln = struct.unpack_from("<HH", b, o)
        if code == 0:
            break
        out.setdefault(code, []).append(b[o + 4:o + 4 + ln])
        o += 4 + ((ln + 3) & ~3)
    return out


def parse(path):
    b = open(path, "rb").read()
    pos, shb, idbs, epbs, isbs = 0, None, [], [], []
    while pos < len(b):
        t, ln = struct.unpack_from("<II", b, pos)
        if t == 0x0A0D0D0A:
            shb = options(b, pos + 24, pos + ln - 4)
        elif t == 1:
            idbs.append(options(b, pos + 16, pos + ln - 4))
        elif t == 6:
            ifid, _, _, cap = struct.unpack_from("<IIII", b, pos + 8)
            epbs.append((ifid, options(b, pos + 28 + ((cap + 3) & ~3), pos + ln - 4)))
        elif t == 5:
            ifid = struct.unpack_from("<I", b, pos + 8)[0]
            isbs.append((ifid, options(b, pos + 20, pos + ln - 4)))
        pos += ln
    return shb, idbs, epbs, isbs


def u64(v):
    return struct.unpack("<Q", v)[0]


def one(opts, code):
    v = opts.get(code)
    return v[0] if v else None


def main():
    summary = json.load(open(sys.argv[1]))
    exp = json.load(open(sys.argv[2]))
    files = sys.argv[3:]
    d = summary["dropped"]
    nic = d["imissed"] + d["rx_nombuf"]
    host = d["pipeline_full"] + d["writer_behind"] + d["chained"] + d["write_failed"]
    final = {4: summary["received"] + nic, 5: nic, 6: summary["captured"], 7: host}
    delivered = [0] * len(exp["ifaces"])
    for k, f in enumerate(files):
        shb, idbs, epbs, isbs = parse(f)
        for code, key in ((2, "hardware"), (3, "os"), (4, "userappl")):
            got = one(shb, code)
            if got is None or got.decode() != exp[key]:
                fail(f"{f}: SHB option {code} is {got!r}, want {exp[key]!r}")
        want = [c.encode() for c in exp.get("comments", [])]
        if shb.get(1, []) != want:
            fail(f"{f}: SHB comments {shb.get(1, [])!r}, want {want!r}")
        if len(idbs) != len(exp["ifaces"]):
            fail(f"{f}: {len(idbs)} IDBs, want {len(exp['ifaces'])}")
            continue
        for i, (idb, e) in enumerate(zip(idbs, exp["ifaces"])):
            if one(idb, 2) != e["name"].encode():
                fail(f"{f}: if_name {one(idb, 2)!r}, want {e['name']!r}")
            descr = one(idb, 3)
            if descr is None or e["driver"].encode() not in descr:
                fail(f"{f}: if_description {descr!r} does not name {e['driver']}")
            hw = one(idb, 15)
            if hw is None or e["driver"].encode() not in hw:
                fail(f"{f}: if_hardware {hw!r} does not name the device")
            if one(idb, 12) != exp["os"].encode():
                fail(f"{f}: if_os {one(idb, 12)!r}")
            mac = one(idb, 6)
            if mac is None or len(mac) != 6:
                fail(f"{f}: interface {i}: no if_MACaddr")
            if "speed" in e and (one(idb, 8) is None or u64(one(idb, 8)) != e["speed"]):
                fail(f"{f}: interface {i}: if_speed {one(idb, 8)!r}")
            if one(idb, 9) != bytes([9]):
                fail(f"{f}: if_tsresol {one(idb, 9)!r}")
            filt = one(idb, 11)
            want = None if e.get("filter") is None else b"\0" + e["filter"].encode()
            if filt != want:
                fail(f"{f}: interface {i}: if_filter {filt!r}, want {want!r}")
        for ifid, o in epbs:
            fl, q = one(o, 2), one(o, 6)
            if fl is None or struct.unpack("<I", fl)[0] & 3 != 1:
                fail(f"{f}: an EPB without epb_flags inbound ({fl!r})")
                break
            if q is None or struct.unpack("<I", q)[0] >= exp["queues"]:
                fail(f"{f}: an EPB's epb_queue {q!r}")
                break
            delivered[ifid] += 1
        if sorted(i for i, _ in isbs) != list(range(len(idbs))):
            fail(f"{f}: ISBs for interfaces {[i for i, _ in isbs]}")
            continue
        last = k == len(files) - 1
        for ifid, o in isbs:
            got = {c: u64(one(o, c)) for c in (4, 5, 6, 7, 8) if one(o, c) is not None}
            if got.get(8) != delivered[ifid]:
                fail(f"{f}: isb_usrdeliv {got.get(8)}, the files so far hold {delivered[ifid]}")
            if len(exp["ifaces"]) == 1:
                for c, v in final.items():
                    if c not in got or (got[c] != v if last else got[c] > v):
                        fail(f"{f}: ISB option {c} is {got.get(c)}, the summary says {v}")
            if one(o, 2) is None or one(o, 3) is None:
                fail(f"{f}: ISB without isb_starttime/isb_endtime")
    if delivered and sum(delivered) != summary["written"]:
        fail(f"the files hold {sum(delivered)} records, the summary says {summary['written']}")
    sys.exit(1 if fails else 0)


main()
