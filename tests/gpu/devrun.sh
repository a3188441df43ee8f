#!/bin/bash
# The GPU suites on the GPU machine (device tool), from a devbundle:
#   source .devbundle/env.sh && bash tests/gpu/devrun.sh
# Logs go to $OUT. Everything has a timeout: a persistent kernel that
# missed its quit flag must not eat the session.
OUT=${OUT:-/tmp/gcap-out}
mkdir -p "$OUT"
B=.devbundle/bin
export GCAP_SOURCE_ROOT=$PWD
export GCAP_GPU_CORPUS=$PWD/.devbundle/data/mix-en10mb.pcap
export GCAP_CACHE_DIR=/tmp/gcap-cache
export CK_DEFAULT_TIMEOUT=300
L=$OUT/gpu-tests.log
ALL=test_truncation,test_corpus_host,test_corpus_copy,test_corpus_compiled
ALL=$ALL,test_copy_overflow,test_kernel_fault,test_quit_full_load,test_pools
ALL=$ALL,test_multi_gpu,test_copy_stress
{
	echo "commit: $(cat .devbundle/COMMIT 2>/dev/null)"
	nvidia-smi -L
	nvidia-smi --query-gpu=name,driver_version,pcie.link.gen.current --format=csv
	echo "== test_gpu_nodev"
	timeout 60 $B/test_gpu_nodev; echo "test_gpu_nodev rc=$?"
	echo "== test_gpu (all but the doorbell stress)"
	GCAP_GPU_TESTS=$ALL timeout 120 $B/test_gpu; echo "test_gpu rc=$?"
	echo "== test_kernels_gpu (inline kernels: gpu vs cpu executor)"
	timeout 300 $B/test_kernels_gpu; echo "test_kernels_gpu rc=$?"
	echo "== test_gpu doorbell stress"
	GCAP_GPU_TESTS=test_doorbell_stress \
	GCAP_GPU_STRESS_BATCHES=${STRESS:-2000000} timeout 130 $B/test_gpu
	echo "test_gpu stress rc=$?"
} > "$L" 2>&1
S=/usr/local/cuda/bin/compute-sanitizer
{
	echo "== memcheck"
	GCAP_GPU_TESTS=test_truncation,test_corpus_host,test_copy_overflow,test_quit_full_load \
	CK_FORK=no timeout 45 $S --tool memcheck --error-exitcode 9 $B/test_gpu
	echo "memcheck rc=$?"
	echo "== racecheck"
	GCAP_GPU_TESTS=test_truncation,test_corpus_copy \
	CK_FORK=no timeout 45 $S --tool racecheck --error-exitcode 9 $B/test_gpu
	echo "racecheck rc=$?"
} > "$OUT/gpu-sanitizer.log" 2>&1
tail -n 5 "$L" "$OUT/gpu-sanitizer.log"
