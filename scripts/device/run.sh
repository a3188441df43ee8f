#!/usr/bin/env bash
# There (the GPU machine): run the GPU tests and benchmarks from .devbundle,
# logs to $OUT. Usage: bash .devbundle/root/scripts/device/run.sh [STEP...]
# Steps: info tests sanitize corpus live bench (default: all).
set -uo pipefail
b=$(cd "$(dirname "$0")/../../.." && pwd)
source "$b/env.sh"
export GCAP_SOURCE_ROOT=$b/root GCAP_INCLUDE_DIR=$b/root/include
export GCAP_COMMIT=$(cat "$b/COMMIT")
export XDG_CACHE_HOME=/tmp/gcap-cache
OUT=${OUT:-/tmp/out}
mkdir -p "$OUT"
steps=${*:-info tests sanitize corpus live bench}
log() { echo "== $* ($(date +%T))"; }
for s in $steps; do
case $s in
info)
	log info
	{ nvidia-smi; nproc; grep -m1 'model name' /proc/cpuinfo; echo "commit $GCAP_COMMIT"; } 2>&1 | tee "$OUT/info.log" ;;
tests)
	log "gpu tests"
	( cd /tmp && timeout 300 "$b/bin/test_gpu" ) >"$OUT/gpu-tests.log" 2>&1
	echo "test_gpu rc=$?" | tee -a "$OUT/gpu-tests.log"
	for t in "$b"/bin/test_kernels_gpu; do
		[ -x "$t" ] || continue
		( cd /tmp && timeout 200 "$t" ) >>"$OUT/gpu-tests.log" 2>&1
		echo "$(basename "$t") rc=$?" | tee -a "$OUT/gpu-tests.log"
	done
	tail -5 "$OUT/gpu-tests.log" ;;
sanitize)
	log compute-sanitizer
	cs=/usr/local/cuda/bin/compute-sanitizer
	for tool in memcheck racecheck; do
		( cd /tmp && GCAP_TEST_QUICK=1 CK_FORK=no timeout 240 $cs --tool $tool --error-exitcode 3 \
			"$b/bin/test_gpu" ) >"$OUT/sanitizer-$tool.log" 2>&1
		echo "$tool rc=$?" | tee -a "$OUT/sanitizer-$tool.log"
		tail -3 "$OUT/sanitizer-$tool.log"
	done ;;
corpus)
	log "offline corpus, gpu backend"
	for mode in compiled interp; do
		i=0; [ $mode = interp ] && i=1
		( cd /tmp && GCAP_TEST_BACKEND=gpu GCAP_TEST_GPU_INTERP=$i timeout 300 \
			"$b/bin/test_offline_corpus" ) >"$OUT/corpus-gpu-$mode.log" 2>&1
		echo "corpus gpu $mode rc=$?" | tee -a "$OUT/corpus-gpu-$mode.log"
		tail -3 "$OUT/corpus-gpu-$mode.log"
	done ;;
live)
	log "live equality, gpu backend"
	bash "$b/root/scripts/device/live-eq.sh" "$b" >"$OUT/live-gpu.log" 2>&1
	echo "live rc=$?" | tee -a "$OUT/live-gpu.log"; tail -12 "$OUT/live-gpu.log" ;;
bench)
	log "capture bench"
	GPU_CAPTURE=$b/bin/gpu-capture MIX_PCAP=$b/shared/data/bench/mix-en10mb.pcap \
		OUT_DIR=$OUT SECS=${SECS:-2} timeout 420 bash "$b/root/bench/gpu_capture.sh" 2>"$OUT/bench-stderr.log"
	echo "bench rc=$?" ;;
*)
	[ -x "$b/root/$s" ] && { log "$s"; timeout 300 "$b/root/$s" "$b" "$OUT"; } || echo "unknown step $s" ;;
esac
done
ls -la "$OUT"
