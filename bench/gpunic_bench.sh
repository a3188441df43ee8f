#!/usr/bin/env bash
# The emulated GPUDirect NIC (docs/gpu.md) on one machine, in one call, on
# the same lcores: the NIC's own floor (bench/rx_floor: receive and free),
# the cpu backend, the gpu backend with --mem host and with --mem gpu
# (data rooms in VRAM); 1 and 8 RX lcores; 64-byte frames (gpunic64) and
# the mixed sizes of mix-en10mb.pcap (gpunic); one filter, then 64
# (8 lcores); lossless rate and p99 RX-to-verdict at half that rate
# (bench/gpu_capture.sh). Then one lcore of --mem gpu with and without
# cuFlushGPUDirectRDMAWrites before each doorbell (GCAP_GPU_WMB).
# Last, what bounds the emulator: its per-queue counters (-v: launches,
# launch-to-completion time, waits for mbufs, RX ring room, a free slot)
# on the mixed sizes, cpu and --mem gpu, 1 and 8 lcores.
# env: as bench/gpu_capture.sh (GPU_CAPTURE, RX_FLOOR, MIX_PCAP, SECS),
#      OUT_DIR (results), QUEUES ("1 8"), ONLY=diag (the last part alone)
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
OUT=${OUT_DIR:-$here/results}
mkdir -p "$OUT"
md=$OUT/gpunic-bench.md
Q=${QUEUES:-1 8}
G=${GPU_CAPTURE:-$here/../build/apps/gpu-capture}
MIX=${MIX_PCAP:-$here/../../shared/data/bench/mix-en10mb.pcap}
: >"$md"
diag() {
	echo "## what bounds the emulator (gpu-capture -v, ${SECS:-2} s, mixed sizes, looped)"
	for run in ${DIAG_RUNS:-1:cpu 1:gpu 8:cpu 8:gpu}; do
		q=${run%:*} be=${run#*:}
		m=(--backend cpu)
		[ "$be" = gpu ] && m=(--backend gpu --mem gpu)
		(cd /tmp && timeout 60 "$G" -v -i "gpunic0,rx_pcap=$MIX,loop=1" --queues "$q" "${m[@]}" \
			--busy-poll --backpressure --duration "${SECS:-2}" --summary-json /tmp/gpunic-diag.json \
			-w /dev/shm/gpunic-diag.pcap 'tcp port 80 or udp port 53') >/tmp/gpunic-diag.log 2>&1
		echo "### $q lcore(s), $be: rc $?, $(python3 -c "import json; d=json.load(open('/tmp/gpunic-diag.json')); print(d['rx_mpps'], 'Mpps')" 2>/dev/null)"
		grep -E "queue [0-9]+: [0-9]+ launches|before each doorbell" /tmp/gpunic-diag.log | sed 's/^/    /'
		rm -f /tmp/gpunic-diag.json /dev/shm/gpunic-diag.pcap
	done
}
if [ "${ONLY:-}" = diag ]; then
	diag | tee "$md"
	exit 0
fi
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
diag >>"$md"
cat "$md"
