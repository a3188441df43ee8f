#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""How a stored capture's bytes can reach the GPU on this machine, each way
timed over the whole file: read() into a plain buffer (the read limit), the
mapping copied into pinned staging by 1..N threads (what the -r reader does
on one), the mapping registered with the driver in place
(cuMemHostRegister READ_ONLY: no copy; whole, in chunks, on several
threads, after MAP_POPULATE), and the copy engines reading the registered
mapping into VRAM. Usage: file_pin.py FILE [THREADS (1,2,4,8)]
[CHUNK_MB (64,256)]; prints one line per way with ms and GB/s."""
import ctypes
import os
import sys
import threading
import time

PROT_READ, MAP_PRIVATE, MAP_POPULATE = 1, 2, 0x8000
REG_DEVICEMAP, REG_READ_ONLY = 0x02, 0x08
ATTRS = {"PAGEABLE_MEMORY_ACCESS": 88, "CAN_USE_HOST_POINTER_FOR_REGISTERED_MEM": 91,
         "PAGEABLE_MEMORY_ACCESS_USES_HOST_PAGE_TABLES": 100,
         "READ_ONLY_HOST_REGISTER_SUPPORTED": 113}

libc = ctypes.CDLL("libc.so.6", use_errno=True)
libc.mmap.restype = ctypes.c_void_p
libc.mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int,
                      ctypes.c_int, ctypes.c_long]
libc.munmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t]
libc.memcpy.restype = ctypes.c_void_p
libc.memcpy.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_size_t]
libc.read.restype = ctypes.c_ssize_t
libc.read.argtypes = [ctypes.c_int, ctypes.c_void_p, ctypes.c_size_t]
libc.malloc.restype = ctypes.c_void_p
cu = ctypes.CDLL("libcuda.so.1")
cu.cuMemHostRegister_v2.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_uint]
cu.cuMemHostUnregister.argtypes = [ctypes.c_void_p]
cu.cuMemcpyHtoD_v2.argtypes = [ctypes.c_uint64, ctypes.c_void_p, ctypes.c_size_t]


def check(name, rc):
    if rc != 0:
        raise RuntimeError("%s: CUDA error %d" % (name, rc))


def line(what, ms, size, extra=""):
    print("%-52s %9.1f ms %6.2f GB/s%s" % (what, ms, size / ms / 1e6, extra), flush=True)


def mapping(fd, size, flags=MAP_PRIVATE):
    m = libc.mmap(None, size, PROT_READ, flags, fd, 0)
    if m in (None, ctypes.c_void_p(-1).value):
        raise OSError(ctypes.get_errno(), "mmap")
    return m


def spans(size, chunk):
    return [(o, min(chunk, size - o)) for o in range(0, size, chunk)]


def on_threads(n, work, items, ctx=None):
    """work(k, item) for every item, items taken in turn by n threads (each
    with ctx current: the driver's calls need a context per thread)."""
    def run(k):
        if ctx is not None:
            check("cuCtxSetCurrent", cu.cuCtxSetCurrent(ctx))
        for it in items[k::n]:
            work(k, it)
    ts = [threading.Thread(target=run, args=(k,)) for k in range(n)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()


def main():
    path = sys.argv[1]
    threads = [int(x) for x in (sys.argv[2] if len(sys.argv) > 2 else "1,2,4,8").split(",")]
    chunks = [int(x) << 20 for x in (sys.argv[3] if len(sys.argv) > 3 else "64,256").split(",")]
    size = os.path.getsize(path)
    fd = os.open(path, os.O_RDONLY)
    print("file %s: %d bytes" % (path, size))

    check("cuInit", cu.cuInit(0))
    dev, ctx = ctypes.c_int(), ctypes.c_void_p()
    check("cuDeviceGet", cu.cuDeviceGet(ctypes.byref(dev), 0))
    check("cuDevicePrimaryCtxRetain", cu.cuDevicePrimaryCtxRetain(ctypes.byref(ctx), dev))
    check("cuCtxSetCurrent", cu.cuCtxSetCurrent(ctx))
    for name, a in ATTRS.items():
        v = ctypes.c_int()
        cu.cuDeviceGetAttribute(ctypes.byref(v), a, dev)
        print("attribute %s = %d" % (name, v.value))

    # the read limit: read() in 1 MB pieces into one buffer, as cat
    buf = libc.malloc(1 << 20)
    t = time.perf_counter()
    os.lseek(fd, 0, os.SEEK_SET)
    while libc.read(fd, buf, 1 << 20) > 0:
        pass
    line("read() 1 MB pieces (the read limit)", (time.perf_counter() - t) * 1e3, size)

    # copies of the mapping into pinned staging (a fresh mapping each time:
    # its page faults are part of the cost)
    stage_sz = 64 << 20
    stages = []
    for _ in range(max(threads)):
        p = ctypes.c_void_p()
        check("cuMemHostAlloc", cu.cuMemHostAlloc(ctypes.byref(p), ctypes.c_size_t(stage_sz), 0x3))
        stages.append(p.value)
    for n in threads:
        m = mapping(fd, size)
        t = time.perf_counter()
        on_threads(n, lambda k, s: libc.memcpy(stages[k], m + s[0], s[1]), spans(size, stage_sz))
        line("mapping copied into pinned staging, %d thread(s)" % n,
             (time.perf_counter() - t) * 1e3, size)
        libc.munmap(m, size)

    # the mapping registered in place
    for flags, fname in ((REG_READ_ONLY, "READ_ONLY"), (REG_READ_ONLY | REG_DEVICEMAP,
                                                        "READ_ONLY|DEVICEMAP")):
        m = mapping(fd, size)
        t = time.perf_counter()
        rc = cu.cuMemHostRegister_v2(m, size, flags)
        ms = (time.perf_counter() - t) * 1e3
        if rc != 0:
            print("cuMemHostRegister(whole, %s): CUDA error %d" % (fname, rc))
        else:
            line("registered whole (%s)" % fname, ms, size)
            t = time.perf_counter()
            check("cuMemHostUnregister", cu.cuMemHostUnregister(m))
            line("  unregistered whole", (time.perf_counter() - t) * 1e3, size)
        libc.munmap(m, size)
    m = mapping(fd, size, MAP_PRIVATE | MAP_POPULATE)
    libc.munmap(m, size)
    t = time.perf_counter()
    m = mapping(fd, size, MAP_PRIVATE | MAP_POPULATE)
    mp = (time.perf_counter() - t) * 1e3
    t = time.perf_counter()
    rc = cu.cuMemHostRegister_v2(m, size, REG_READ_ONLY)
    if rc == 0:
        line("MAP_POPULATE, then registered whole", mp + (time.perf_counter() - t) * 1e3, size,
             " (populate %.1f ms)" % mp)
        check("cuMemHostUnregister", cu.cuMemHostUnregister(m))
    libc.munmap(m, size)
    for chunk in chunks:
        for n in threads:
            m = mapping(fd, size)
            err = []

            def reg(k, s):
                rc = cu.cuMemHostRegister_v2(m + s[0], s[1], REG_READ_ONLY)
                if rc != 0:
                    err.append(rc)
            t = time.perf_counter()
            on_threads(n, reg, spans(size, chunk), ctx)
            ms = (time.perf_counter() - t) * 1e3
            if err:
                print("registered in %d MB chunks, %d thread(s): CUDA error %d" %
                      (chunk >> 20, n, err[0]))
            else:
                line("registered in %d MB chunks, %d thread(s)" % (chunk >> 20, n), ms, size)
            if n == 1 and not err:
                # the copy engines reading the registered mapping into VRAM
                d = ctypes.c_uint64()
                check("cuMemAlloc", cu.cuMemAlloc_v2(ctypes.byref(d), ctypes.c_size_t(chunk)))
                t = time.perf_counter()
                for o, ln in spans(size, chunk):
                    check("cuMemcpyHtoD", cu.cuMemcpyHtoD_v2(d.value, m + o, ln))
                line("  copy engines: registered mapping -> VRAM", (time.perf_counter() - t) * 1e3,
                     size)
                cu.cuMemFree_v2(d)
            for o, ln in spans(size, chunk):
                cu.cuMemHostUnregister(ctypes.c_void_p(m + o))
            libc.munmap(m, size)
    # the copy engines from pinned staging, for comparison
    d = ctypes.c_uint64()
    check("cuMemAlloc", cu.cuMemAlloc_v2(ctypes.byref(d), ctypes.c_size_t(stage_sz)))
    t = time.perf_counter()
    for _ in range(0, size, stage_sz):
        check("cuMemcpyHtoD", cu.cuMemcpyHtoD_v2(d.value, stages[0], stage_sz))
    line("copy engines: pinned staging -> VRAM (64 MB pieces)", (time.perf_counter() - t) * 1e3,
         size)


if __name__ == "__main__":
    main()
