#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""The CUDA driver's own set-up and teardown on this machine, as a one-shot
gpu-capture run pays them before its first packet and after its last: cuInit,
the primary context, pinned host memory of the size the -r path stages, its
release, the context's release. The floor of `gpu-capture --backend gpu -r`'s
fixed cost that no change to gpucap removes (only overlapping it with other
work hides it). Usage: cuda_setup_cost.py [PINNED_MB (48)] [REPEATS (3)];
prints one line per step with milliseconds (the first run, then the least of
the repeats in a fresh process each)."""
import ctypes
import os
import subprocess
import sys
import time


def one_run(pinned_mb):
    cu = ctypes.CDLL("libcuda.so.1")
    ms = {}

    def step(name, fn, *args):
        t = time.perf_counter()
        rc = fn(*args)
        ms[name] = (time.perf_counter() - t) * 1e3
        if rc != 0:
            raise SystemExit("%s: CUDA error %d" % (name, rc))

    dev = ctypes.c_int()
    ctx = ctypes.c_void_p()
    buf = ctypes.c_void_p()
    step("cuInit", cu.cuInit, 0)
    step("cuDeviceGet", cu.cuDeviceGet, ctypes.byref(dev), 0)
    step("cuDevicePrimaryCtxRetain", cu.cuDevicePrimaryCtxRetain, ctypes.byref(ctx), dev)
    step("cuCtxSetCurrent", cu.cuCtxSetCurrent, ctx)
    # CU_MEMHOSTALLOC_PORTABLE | CU_MEMHOSTALLOC_DEVICEMAP
    step("cuMemHostAlloc(%d MB)" % pinned_mb, cu.cuMemHostAlloc, ctypes.byref(buf),
         ctypes.c_size_t(pinned_mb << 20), 0x3)
    step("cuMemFreeHost", cu.cuMemFreeHost, buf)
    step("cuDevicePrimaryCtxRelease", cu.cuDevicePrimaryCtxRelease, dev)
    return ms


def main():
    pinned = int(sys.argv[1]) if len(sys.argv) > 1 else 48
    reps = int(sys.argv[2]) if len(sys.argv) > 2 else 3
    if os.environ.get("GCAP_SETUP_CHILD"):
        for k, v in one_run(pinned).items():
            print("%s %.3f" % (k, v))
        return
    runs = []
    for _ in range(1 + reps):
        out = subprocess.run([sys.executable, __file__, str(pinned)], capture_output=True,
                             text=True, env=dict(os.environ, GCAP_SETUP_CHILD="1"))
        if out.returncode != 0:
            raise SystemExit(out.stderr.strip() or "probe failed")
        runs.append([(l.rsplit(" ", 1)[0], float(l.rsplit(" ", 1)[1]))
                     for l in out.stdout.splitlines()])
    print("| step | first run ms | least of %d more ms |" % reps)
    print("|---|---:|---:|")
    total_first = total_least = 0.0
    for i, (name, first) in enumerate(runs[0]):
        least = min(r[i][1] for r in runs[1:]) if reps else first
        total_first += first
        total_least += least
        print("| %s | %.1f | %.1f |" % (name, first, least))
    print("| all | %.1f | %.1f |" % (total_first, total_least))


if __name__ == "__main__":
    main()
