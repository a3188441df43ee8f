#!/bin/bash
# The GPU suites and live equality under AddressSanitizer and UBSan, on the
# GPU machine: the gpu executor's host code (gpu/ and the pipeline
# around it) with a real GPU behind it, which CI's sanitizer-free machine
# never runs. Here (no GPU):
#   meson setup /tmp/build-asan -Db_sanitize=address,undefined -Db_lundef=false
#   GCAP_BUILD=/tmp/build-asan GCAP_BUNDLE_MIN=1 bash scripts/device/bundle.sh
# then, through the device tool (carry .devbundle):
#   export OUT; bash .devbundle/root/scripts/device/asan-run.sh
# Leak checking is off: the CUDA driver keeps its allocations to the end.
# protect_shadow_gap=0: the driver maps memory where ASan's gap would be.
# Log: $OUT/asan-gpu.log; any sanitizer report also in $OUT/asan.* or
# $OUT/ubsan.*. Exit 1 when a program failed or a report was written.
set -uo pipefail
b=$(cd "$(dirname "$0")/../../.." && pwd)
source "$b/env.sh"
OUT=${OUT:-/tmp/gcap-out}
mkdir -p "$OUT"
export ASAN_OPTIONS=protect_shadow_gap=0:detect_leaks=0:halt_on_error=1:log_path=$OUT/asan
export UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1:log_path=$OUT/ubsan
cd "$b/.."
export GCAP_SOURCE_ROOT=$PWD GCAP_INCLUDE_DIR=$PWD/include
export GCAP_GPU_CORPUS=$b/data/mix-en10mb.pcap GCAP_CACHE_DIR=/tmp/gcap-cache-asan
export CK_DEFAULT_TIMEOUT=600
B=$b/bin
source "$PWD/tests/gpu/suite.sh"
ALL=$GCAP_GPU_SUITE
rc=0
run() { # NAME TIMEOUT CMD...
	local name=$1 t=$2 r
	shift 2
	echo "== $name"
	timeout "$t" "$@"; r=$?
	echo "$name rc=$r"
	[ $r -eq 0 ] || rc=1
}
{
	echo "commit: $(cat "$b/COMMIT")"
	nvidia-smi -L
	run test_gpu_nodev 120 "$B/test_gpu_nodev"
	GCAP_GPU_TESTS=$ALL run test_gpu 300 "$B/test_gpu"
	run test_kernels_gpu 400 "$B/test_kernels_gpu"
	GCAP_GPU_TESTS=test_doorbell_stress GCAP_GPU_STRESS_BATCHES=${STRESS:-200000} \
		run "test_gpu doorbell stress" 200 "$B/test_gpu"
	GCAP_GPU_TESTS=test_doorbell_stress GCAP_GPU_BLOCKS=4 GCAP_GPU_STRESS_BATCHES=${STRESS_BLOCKS:-100000} \
		run "test_gpu doorbell stress, 4 blocks" 200 "$B/test_gpu"
	run "live equality (gpu-capture, --backend gpu)" 400 bash "$b/root/scripts/device/live-eq.sh" "$b"
} >"$OUT/asan-gpu.log" 2>&1
if ls "$OUT"/asan.* "$OUT"/ubsan.* >/dev/null 2>&1; then
	echo "sanitizer reports:" >>"$OUT/asan-gpu.log"
	ls "$OUT"/asan.* "$OUT"/ubsan.* >>"$OUT/asan-gpu.log" 2>/dev/null
	rc=1
fi
echo "asan-run rc=$rc" >>"$OUT/asan-gpu.log"
grep -E "rc=|Checks|equal|FAIL|ERROR" "$OUT/asan-gpu.log" | tail -40
exit $rc
