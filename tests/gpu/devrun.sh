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
source "$(dirname "$0")/suite.sh"
ALL=$GCAP_GPU_SUITE
{
	echo "commit: $(cat .devbundle/COMMIT 2>/dev/null)"
	nvidia-smi -L
	nvidia-smi --query-gpu=name,driver_version,pcie.link.gen.current --format=csv
	echo "== test_gpu_nodev"
	timeout 60 $B/test_gpu_nodev; echo "test_gpu_nodev rc=$?"
	echo "== test_gpu (all but the doorbell stress)"
	GCAP_GPU_TESTS=$ALL timeout 120 $B/test_gpu; echo "test_gpu rc=$?"
	echo "== test_kernels_gpu (inline kernels: gpu vs cpu executor)"
	GCAP_INCLUDE_DIR=${GCAP_INCLUDE_DIR:-$PWD/include} \
	timeout 300 $B/test_kernels_gpu; echo "test_kernels_gpu rc=$?"
	echo "== kernel_fault_gpu (endless and faulting inline kernels, gpu backend)"
	GCAP_INCLUDE_DIR=${GCAP_INCLUDE_DIR:-$PWD/include} \
	timeout 400 bash tests/gpu/kernel_fault_gpu.sh $B/gpu-capture $B/pcap-cmp "$PWD"
	echo "kernel_fault_gpu rc=$?"
	echo "== test_gpu doorbell stress"
	GCAP_GPU_TESTS=test_doorbell_stress \
	GCAP_GPU_STRESS_BATCHES=${STRESS:-2000000} timeout 130 $B/test_gpu
	echo "test_gpu stress rc=$?"
	echo "== test_gpu doorbell stress, 4 blocks per queue (--gpu-blocks)"
	GCAP_GPU_TESTS=test_doorbell_stress GCAP_GPU_BLOCKS=4 \
	GCAP_GPU_STRESS_BATCHES=${STRESS_BLOCKS:-500000} timeout 100 $B/test_gpu
	echo "test_gpu stress blocks=4 rc=$?"
} > "$L" 2>&1
S=/usr/local/cuda/bin/compute-sanitizer
{
	echo "== memcheck"
	GCAP_GPU_TESTS=test_truncation,test_corpus_host,test_copy_overflow,test_quit_full_load \
	CK_FORK=no timeout 45 $S --tool memcheck --error-exitcode 9 $B/test_gpu
	echo "memcheck rc=$?"
	# the inline kernels (test_kernels_gpu: four examples, unordered ones
	# on four blocks a queue, ordered on one; batches of 1, 256, 512):
	# about 30 s under memcheck on the H200. No state snapshot while the
	# kernel runs: compute-sanitizer serializes launches, so the
	# snapshot's copy kernel would wait for the persistent one forever
	# (whatever the block count).
	# KMEMCHECK_KERNELS=dns,...: those examples, batches of 256 only.
	kk=${KMEMCHECK_KERNELS:-all}
	echo "== memcheck: inline kernels on the gpu executor (test_kernels_gpu: $kk)"
	if [ "${KMEMCHECK:-1}" = 0 ]; then
		echo "memcheck kernels: not run (KMEMCHECK=0)"
	else
		[ "$kk" = all ] && kk=
		GCAP_INCLUDE_DIR=${GCAP_INCLUDE_DIR:-$PWD/include} \
		GCAP_GPU_KERNELS=$kk GCAP_GPU_TESTS=${kk:+test_kernel_batch} GCAP_GPU_NO_LIVE_SNAPSHOT=1 \
		CK_FORK=no timeout ${KMEMCHECK_TIMEOUT:-240} $S --tool memcheck --error-exitcode 9 \
			$B/test_kernels_gpu
		echo "memcheck kernels rc=$?"
		echo "== racecheck: inline kernels (test_kernel_batch, four examples)"
		GCAP_INCLUDE_DIR=${GCAP_INCLUDE_DIR:-$PWD/include} \
		GCAP_GPU_TESTS=test_kernel_batch GCAP_GPU_NO_LIVE_SNAPSHOT=1 \
		CK_FORK=no timeout 150 $S --tool racecheck --error-exitcode 9 $B/test_kernels_gpu
		echo "racecheck kernels rc=$?"
	fi
	echo "== racecheck"
	GCAP_GPU_TESTS=test_truncation,test_corpus_copy \
	CK_FORK=no timeout 45 $S --tool racecheck --error-exitcode 9 $B/test_gpu
	echo "racecheck rc=$?"
} > "$OUT/gpu-sanitizer.log" 2>&1
tail -n 5 "$L" "$OUT/gpu-sanitizer.log"
# The BPF differential through the persistent kernel: random
# programs and the tcpdump expressions, NVRTC-compiled and interpreted, vs
# bpf_filter(); host mode with more programs, then copy mode. Its corpus is
# the bundle's (.devbundle/root/../shared/data).
{
	echo "== test_gpu_bpf (needs build/tests/gpu/test_gpu_bpf in the bundle)"
	if [ -x $B/test_gpu_bpf ]; then
		GCAP_SOURCE_ROOT=$PWD/.devbundle/root GCAP_GPU_BPF_VERBOSE=1 \
		GCAP_GPU_BPF_PROGS=${BPF_PROGS:-1024} GCAP_GPU_BPF_RANDOM_PKTS=10000 \
		timeout 180 $B/test_gpu_bpf; echo "test_gpu_bpf host rc=$?"
		GCAP_SOURCE_ROOT=$PWD/.devbundle/root GCAP_GPU_BPF_MEM=copy \
		timeout 90 $B/test_gpu_bpf; echo "test_gpu_bpf copy rc=$?"
		# batches larger than a block: the kernel filters them in chunks
		GCAP_SOURCE_ROOT=$PWD/.devbundle/root GCAP_GPU_BPF_BATCH=4096 \
		timeout 90 $B/test_gpu_bpf; echo "test_gpu_bpf batch 4096 rc=$?"
	else
		echo "test_gpu_bpf: not in the bundle"
	fi
} > "$OUT/gpu-bpf.log" 2>&1
tail -n 8 "$OUT/gpu-bpf.log"
