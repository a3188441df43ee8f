#!/bin/sh
# GPU machine: every example on the GPU (nvcc build of the same source)
# against its CPU build, over a pcap (default: the shared corpus).
# Usage: tests/kernels/gpu_equiv.sh [FILE.pcap] [sanitize]
# Run from the source root. Needs nvcc, a C compiler and a GPU.
set -e
PCAP=${1:-../shared/data/bench/mix-en10mb.pcap}
B=${GCAP_EQUIV_BUILD:-/tmp/gpucap-equiv}
ARCH=${GCAP_GPU_ARCH:-sm_90}
NVCC=${NVCC:-$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)}
mkdir -p "$B"
printf '#define GCAP_SOURCE_ROOT "%s"\n#define GCAP_HOST_CC "cc"\n' "$PWD" > "$B/gcap_config.h"
cc -O2 -std=gnu11 -D_GNU_SOURCE -Iinclude -I"$B" -c kernels/lib/khost.c -o "$B/khost.o"
cc -O2 -std=gnu11 -D_GNU_SOURCE -Iinclude -c dataplane/common.c -o "$B/common.o"
cc -O2 -std=gnu11 -D_GNU_SOURCE -Iinclude -c dataplane/cache.c -o "$B/cache.o"
export GCAP_INCLUDE_DIR="$PWD/include" GCAP_KERNEL_CACHE="$B/cache"
rc=0
for ex in dns synflood sigmatch flowfirst; do
	"$NVCC" -O2 -arch="$ARCH" -I. -Iinclude -DKFILE="\"kernels/examples/$ex/$ex.c\"" \
		tests/kernels/gpu_equiv.cu "$B/khost.o" "$B/common.o" "$B/cache.o" -ldl -o "$B/equiv-$ex"
	case $ex in
	dns) arg='example.com,tcpdump.org' ;;
	synflood) arg='threshold=2' ;;
	sigmatch) arg='' ;;
	flowfirst) arg='n=3' ;;
	esac
	if [ "$2" = sanitize ]; then
		compute-sanitizer --tool memcheck --error-exitcode 3 \
			"$B/equiv-$ex" "$PCAP" "kernels/examples/$ex/$ex.c" $arg || rc=1
	else
		"$B/equiv-$ex" "$PCAP" "kernels/examples/$ex/$ex.c" $arg || rc=1
	fi
done
exit $rc
