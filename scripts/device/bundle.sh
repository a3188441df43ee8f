#!/usr/bin/env bash
# Here (no GPU): build, then pack what the GPU machine runs into .devbundle/
# (executables with their libraries, DPDK drivers, test data, the corpus,
# the kernels' sources and headers, the scripts). See ../shared/DEVICE.md.
# GCAP_BUILD: the build directory whose programs go (default build; e.g. a
# sanitizer build: meson setup /tmp/build-asan -Db_sanitize=address,undefined
# -Db_lundef=false). GCAP_BUNDLE_MIN=1: gpu-capture, pcap-cmp, tcpdump and
# the GPU test programs only (a sanitizer build's programs are large; what
# the device tool carries is at most 64 MiB). GCAP_BUNDLE_PERF=0: no perf
# (8.7 MiB; only the profile step uses it), so that the whole bundle and
# the tree fit in those 64 MiB.
set -euo pipefail
cd "$(dirname "$0")/../.."
root=$(pwd)
B=${GCAP_BUILD:-build}
ninja -C "$B" -j"$(nproc)" >/dev/null
exes=("$B"/apps/gpu-capture "$B"/tests/tools/pcap-cmp)
for t in "$B"/tests/gpu/test_gpu "$B"/tests/gpu/test_gpu_nodev "$B"/tests/gpu/test_gpu_bpf \
	"$B"/tests/gpu/test_gpu_kernels "$B"/tests/pipeline/test_offline_corpus \
	"$B"/tests/pipeline/test_cpu_workers \
	"$B"/tests/bpfc/test_bpfc "$B"/tests/kernels/test_* "$B"/bench/bpf_bench \
	"$B"/bench/kernel_bench "$B"/bench/lcore_jitter "$B"/bench/rx_floor "$B"/bench/writer_bench "$B"/bench/file_bench \
	"$B"/bench/order_bench "$B"/bench/pcap_order \
	"$B"/tests/gpu/test_kernels_gpu; do
	if [ "${GCAP_BUNDLE_MIN:-0}" = 1 ]; then
		case $t in */tests/gpu/*) ;; *) continue ;; esac
	fi
	[ -x "$t" ] && [ -f "$t" ] && exes+=("$t")
done
# perf (when installed here): the profile step's RX lcore profiles
tools=(/usr/bin/tcpdump)
# the compressed inputs of bench/offline.sh and bench/offline_compressed.sh
for t in zstd pzstd lz4 bgzip; do
	[ -x /usr/bin/$t ] && tools+=(/usr/bin/$t)
done
[ -x /usr/bin/perf ] && [ "${GCAP_BUNDLE_MIN:-0}" != 1 ] && [ "${GCAP_BUNDLE_PERF:-1}" = 1 ] &&
	tools+=(/usr/bin/perf)
../shared/bin/devbundle -o .devbundle -p "${exes[@]}" "${tools[@]}"
b=.devbundle
mkdir -p $b/root $b/shared/data
# GCAP_SOURCE_ROOT there is $b/root, so tests find ../shared/data
cp -r tests include base kernels dataplane data bench scripts $b/root/
rm -rf $b/root/bench/results
cp -r ../shared/data/bench ../shared/data/pcaps $b/shared/data/
mkdir -p $b/data && ln -sf ../shared/data/bench/mix-en10mb.pcap $b/data/mix-en10mb.pcap
git rev-parse HEAD >$b/COMMIT
mkdir -p .git/info && touch .git/info/exclude
grep -q '^/.devbundle/' .git/info/exclude || echo /.devbundle/ >>.git/info/exclude
du -sh $b
