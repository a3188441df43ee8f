#!/usr/bin/env bash
# The emulated GPUDirect NIC (docs/gpu.md) on one machine, in one call, on
# the same lcores: the NIC's own floor (bench/rx_floor: receive and free),
# the cpu backend, the gpu backend with --mem host and with --mem gpu
# (data rooms in VRAM); 1 and 8 RX lcores; 64-byte frames (gpunic64) and
# the mixed sizes of mix-en10mb.pcap (gpunic); one filter, then 64
# (8 lcores); lossless rate and p99 RX-to-verdict at half that rate
# (bench/gpu_capture.sh). Then one lcore of --mem gpu with and without
# cuFlushGPUDirectRDMAWrites before each doorbell (GCAP_GPU_WMB).
# env: as bench/gpu_capture.sh (GPU_CAPTURE, RX_FLOOR, MIX_PCAP, SECS),
#      OUT_DIR (results), QUEUES ("1 8")
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
OUT=${OUT_DIR:-$here/results}
mkdir -p "$OUT"
md=$OUT/gpunic-bench.md
Q=${QUEUES:-1 8}
: >"$md"
SOURCES="gpunic64 gpunic" QUEUES="$Q" BACKENDS="floor cpu gpu-host gpu-gpu" \
	OUT_DIR=$OUT/one bash "$here/gpu_capture.sh" >/dev/null
{ echo "## one filter"; cat "$OUT/one/gpu-capture-bench.md"; echo; } >>"$md"
SOURCES="gpunic64 gpunic" QUEUES=8 BACKENDS="cpu gpu-host gpu-gpu" NFILTERS=64 HALF=0 \
	OUT_DIR=$OUT/sixtyfour bash "$here/gpu_capture.sh" >/dev/null
{ echo "## 64 filters"; cat "$OUT/sixtyfour/gpu-capture-bench.md"; echo; } >>"$md"
for w in 0 1; do
	GCAP_GPU_WMB=$w SOURCES=gpunic64 QUEUES=1 BACKENDS=gpu-gpu HALF=0 \
		OUT_DIR=$OUT/wmb$w bash "$here/gpu_capture.sh" >/dev/null
	{ echo "## GCAP_GPU_WMB=$w (cuFlushGPUDirectRDMAWrites before each doorbell: $w)"
	  grep '^| gpunic' "$OUT/wmb$w/gpu-capture-bench.md"; echo; } >>"$md"
done
cat "$md"
