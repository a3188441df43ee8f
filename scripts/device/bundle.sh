#!/usr/bin/env bash
# Here (no GPU): build, then pack what the GPU machine runs into .devbundle/
# (executables with their libraries, DPDK drivers, test data, the corpus,
# the kernels' sources and headers, the scripts). See ../shared/DEVICE.md.
set -euo pipefail
cd "$(dirname "$0")/../.."
root=$(pwd)
ninja -C build -j"$(nproc)" >/dev/null
exes=(build/apps/gpu-capture build/tests/tools/pcap-cmp)
for t in build/tests/gpu/test_gpu build/tests/gpu/test_gpu_nodev build/tests/gpu/test_gpu_bpf \
	build/tests/gpu/test_gpu_kernels build/tests/pipeline/test_offline_corpus \
	build/tests/bpfc/test_bpfc build/tests/kernels/test_* build/bench/bpf_bench \
	build/bench/kernel_bench build/bench/lcore_jitter build/bench/rx_floor build/tests/gpu/test_kernels_gpu; do
	[ -x "$t" ] && [ -f "$t" ] && exes+=("$t")
done
# perf (when installed here): the profile step's RX lcore profiles
tools=(/usr/bin/tcpdump)
[ -x /usr/bin/perf ] && tools+=(/usr/bin/perf)
../shared/bin/devbundle -o .devbundle -p "${exes[@]}" "${tools[@]}"
b=.devbundle
mkdir -p $b/root $b/shared/data
# GCAP_SOURCE_ROOT there is $b/root, so tests find ../shared/data
cp -r tests include kernels dataplane data bench scripts $b/root/
rm -rf $b/root/bench/results
cp -r ../shared/data/bench ../shared/data/pcaps $b/shared/data/
mkdir -p $b/data && ln -sf ../shared/data/bench/mix-en10mb.pcap $b/data/mix-en10mb.pcap
git rev-parse HEAD >$b/COMMIT
mkdir -p .git/info && touch .git/info/exclude
grep -q '^/.devbundle/' .git/info/exclude || echo /.devbundle/ >>.git/info/exclude
du -sh $b
