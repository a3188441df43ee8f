#!/bin/sh
# Inline kernel throughput: every example kernel on the
# GPU (packets in VRAM, and in pinned mapped host memory) against its CPU
# build on N threads (nproc, at most 16) and on 1 thread. See bench/README.md.
#
# The one command, on the GPU machine (device tool, from the source root;
# the pcap must travel, e.g. in a bundle made by scripts/device/bundle.sh):
#
#   run(command="MIX_PCAP=.devbundle/shared/data/bench/mix-en10mb.pcap OUT_DIR=$OUT GCAP_COMMIT=$(cat .devbundle/COMMIT) sh bench/kernel_bench.sh",
#       carry=[".devbundle"])
#
# Then commit $OUT/kernel-bench.md and .jsonl as
# bench/results/kernel-bench-h200-COMMIT.{md,jsonl}.
# Here (no GPU): sh bench/kernel_bench.sh --cpu-only [--packets 1048576]
#
# Arguments are handed to every bench/kernel_bench.cu binary: --cpu-only,
# --packets N (default 4 Mi), --snap N (default 1514) or --full, --reps R,
# --threads N.
# env: OUT_DIR (results, default /tmp/gcap-kernel-bench), MIX_PCAP (default
# $GCAP_SOURCE_ROOT/../shared/data/bench/mix-en10mb.pcap), GCAP_SOURCE_ROOT
# (default: this script's ..), GCAP_INCLUDE_DIR (default $GCAP_SOURCE_ROOT/
# include), GCAP_COMMIT (default: git), NVCC, GCAP_GPU_ARCH (sm_90),
# KB_BUILD (build dir, default /tmp/gcap-kernel-bench-build), EXAMPLES.
# Exit: 0, 1 (a report differed between modes, or a run failed), 77 (no
# GPU without --cpu-only; no pcap; no nvcc).
set -e
here=$(cd "$(dirname "$0")" && pwd)
ROOT=${GCAP_SOURCE_ROOT:-$(cd "$here/.." && pwd)}
ROOT=$(cd "$ROOT" && pwd)
INC=${GCAP_INCLUDE_DIR:-$ROOT/include}
MIX=${MIX_PCAP:-$ROOT/../shared/data/bench/mix-en10mb.pcap}
OUT=${OUT_DIR:-/tmp/gcap-kernel-bench}
B=${KB_BUILD:-/tmp/gcap-kernel-bench-build}
ARCH=${GCAP_GPU_ARCH:-sm_90}
NVCC=${NVCC:-$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)}
EXAMPLES=${EXAMPLES:-dns synflood sigmatch flowfirst}
if [ -z "$GCAP_COMMIT" ]; then
	GCAP_COMMIT=$(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null || echo unknown)
fi
export GCAP_COMMIT

[ -f "$MIX" ] || { echo "kernel_bench.sh: no packets at $MIX (set MIX_PCAP)" >&2; exit 77; }
[ -x "$NVCC" ] || { echo "kernel_bench.sh: no nvcc (set NVCC)" >&2; exit 77; }
mkdir -p "$B" "$OUT"

# the host side: gcap_khost (the cpu executor's loader), gcap_err, the cache
printf '#define GCAP_SOURCE_ROOT "%s"\n#define GCAP_BUILD_ROOT "%s/build"\n#define GCAP_HOST_CC "cc"\n' \
	"$ROOT" "$ROOT" > "$B/gcap_config.h"
for f in khost kfile kincdir; do
	cc -O2 -std=gnu11 -D_GNU_SOURCE -I"$INC" -I"$B" -c "$ROOT/kernels/lib/$f.c" -o "$B/$f.o"
done
cc -O2 -std=gnu11 -D_GNU_SOURCE -I"$INC" -c "$ROOT/base/outfile.c" -o "$B/outfile.o"
cc -O2 -std=gnu11 -D_GNU_SOURCE -I"$INC" -c "$ROOT/base/common.c" -o "$B/common.o"
cc -O2 -std=gnu11 -D_GNU_SOURCE -I"$INC" -c "$ROOT/base/cache.c" -o "$B/cache.o"
export GCAP_INCLUDE_DIR="$INC" GCAP_KERNEL_CACHE="$B/cache"

rc=0
: > "$B/all.out"
for ex in $EXAMPLES; do
	src=$ROOT/kernels/examples/$ex/$ex.c
	case $ex in
	dns) arg='example.com,evil.org,top=20' ;;            # its README
	synflood) arg='threshold=1000,top=20' ;;             # its README
	sigmatch) arg="file=$ROOT/kernels/examples/sigmatch/patterns.txt" ;;
	flowfirst) arg='n=20' ;;                             # its README
	*) arg='' ;;
	esac
	# an ordered kernel (gcap_kernel_order) runs ordered, as the gpu
	# executor runs it; kernel_bench checks this against the host build
	ord=
	grep -q '^GCAP_KERNEL uint64_t gcap_kernel_order' "$src" && ord=-DGCAP_KERNEL_ORDERED=1
	"$NVCC" -O2 -arch="$ARCH" $ord -I"$ROOT" -I"$INC" -DKFILE="\"$src\"" \
		"$here/kernel_bench.cu" "$B/khost.o" "$B/kfile.o" "$B/kincdir.o" "$B/outfile.o" "$B/common.o" "$B/cache.o" -ldl -lpthread \
		-o "$B/kb-$ex"
	set +e
	"$B/kb-$ex" --name "$ex" "$@" "$MIX" "$src" "$arg" > "$B/$ex.out"
	r=$?
	set -e
	cat "$B/$ex.out" >> "$B/all.out"
	if [ $r -eq 77 ]; then
		echo "kernel_bench.sh: no GPU here; run with --cpu-only for the CPU part" >&2
		exit 77
	fi
	[ $r -eq 0 ] || { echo "kernel_bench.sh: $ex: exit $r" >&2; rc=1; }
done

{
	echo "# Inline kernels: GPU vs CPU"
	echo
	grep -m1 '^Machine:' "$B/all.out" || true
	echo "Packets: $(basename "$MIX") replicated; args: $*"
	echo
	echo "| kernel | arg | packets | mean B | GPU VRAM Mpps | GPU pinned Mpps | CPU N Mpps | CPU 1 Mpps | VRAM / CPU N | pinned / CPU N | target | reports |"
	echo "|---|---|---|---|---|---|---|---|---|---|---|---|"
	grep '^| ' "$B/all.out" | sed "s#$ROOT/##g" || true
} > "$OUT/kernel-bench.md"
grep '^{' "$B/all.out" | sed "s#$ROOT/##g" > "$OUT/kernel-bench.jsonl" || true
cat "$OUT/kernel-bench.md"
echo
cat "$OUT/kernel-bench.jsonl"
exit $rc
