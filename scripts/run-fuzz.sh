#!/bin/sh
# Build the libFuzzer targets with clang (ASan + UBSan) and run them for a
# bounded time, failing on the first crash, leak or broken check.
# Usage: scripts/run-fuzz.sh [SECONDS in all, default 60] [TARGET...]
#   bpfc     the BPF translator and interpreter (fuzz/fuzz_bpfc.c)
#   capture  capture files through the pipeline's file path to pcap and
#            pcapng (fuzz/fuzz_capture.c)
#   kpkt     the inline kernel packet helpers (fuzz/fuzz_kpkt.c)
#   decoders compressed captures on one and on several decoding threads
#            (fuzz/fuzz_decoders.c)
#   finders  a pcap's or pcapng's records found by the reader alone and
#            with finders
#            (fuzz/fuzz_finders.c; chunks of 512 bytes)
# The time is split evenly among the targets. Crashes are written to
# build-fuzz/crashes/. Seeds: fuzz/corpus/bpfc/ (committed); for capture
# 200 files up to 64 KiB of ../shared/data/pcaps/tcpdump-tests (decoders:
# 100 of them, repeated past 96 KiB, each behind a layout and a damage),
# for kpkt the
# packets of ../shared/data/bench/mix-en10mb.pcap (GCAP_SHARED_DATA names
# another data directory), copied into build-fuzz/ at run time: new
# inputs go there, never into the repository.
set -eu
secs=${1:-60}
[ $# -gt 0 ] && shift
targets=${*:-bpfc capture kpkt decoders finders}
root=$(cd "$(dirname "$0")/.." && pwd)
out=${GCAP_FUZZ_BUILD:-$root/build-fuzz}
data=${GCAP_SHARED_DATA:-$root/../shared/data}
cc=${CLANG:-clang}
command -v "$cc" >/dev/null 2>&1 || { echo "run-fuzz: $cc not found" >&2; exit 1; }
n=$(echo $targets | wc -w)
each=$((secs / n))
[ "$each" -ge 1 ] || each=1
mkdir -p "$out/crashes" "$out/gen"
flags="-g -O1 -std=gnu11 -D_GNU_SOURCE -fsanitize=fuzzer,address,undefined
	-fno-sanitize-recover=undefined -I$root/include -I$out/gen"

# compiled directly from the sources, so that all of them are instrumented
# (every file of gcap_base and gcap_khost, the pipeline and the cpu
# executor of gcap_dataplane)
build() { # TARGET
	case $1 in
	bpfc)
		$cc $flags "$root/fuzz/fuzz_bpfc.c" "$root/gpu/bpfc/bpfc.c" \
			"$root/base/common.c" -lpcap -o "$out/fuzz_bpfc" ;;
	capture)
		# what meson's configure_file writes (kernels/lib/khost.c needs it)
		cat >"$out/gen/gcap_config.h" <<-EOF
		#define GCAP_VERSION "fuzz"
		#define GCAP_HAVE_CUDA 0
		#define GCAP_CUDA_HOME "/usr/local/cuda"
		#define GCAP_HOST_CC "cc"
		#define GCAP_SOURCE_ROOT "$root"
		#define GCAP_BUILD_ROOT "$root/build"
		EOF
		# the file path needs DPDK's headers and libraries, not its EAL
		$cc $flags $(pkg-config --cflags libdpdk libpcap zlib libzstd liblz4 libxxhash) \
			-DGCAP_KHOST_INSTALL_INCDIR="\"/usr/local/include\"" \
			"$root/fuzz/fuzz_capture.c" \
			"$root"/base/*.c "$root"/kernels/lib/*.c \
			"$root"/dataplane/exec_cpu.c "$root"/dataplane/pipeline*.c \
			$(pkg-config --libs libdpdk libpcap zlib libzstd liblz4 libxxhash) -lpthread -ldl -lm \
			-o "$out/fuzz_capture" ;;
	decoders)
		# the capture file reader alone (gcap_base's capfile sources)
		$cc $flags $(pkg-config --cflags libpcap zlib libzstd liblz4 libxxhash) \
			-I"$root" "$root/fuzz/fuzz_decoders.c" "$root"/base/capfile*.c "$root/base/common.c" "$root/base/thread.c" \
			$(pkg-config --libs libpcap zlib libzstd liblz4 libxxhash) -lpthread \
			-o "$out/fuzz_decoders" ;;
	finders)
		# small chunks, so that a fuzzed file has many
		$cc $flags -DGCAP_CF_FIND_SHIFT=9 $(pkg-config --cflags libpcap zlib libzstd liblz4 libxxhash) \
			-I"$root" "$root/fuzz/fuzz_finders.c" "$root"/base/capfile*.c "$root/base/common.c" "$root/base/thread.c" \
			$(pkg-config --libs libpcap zlib libzstd liblz4 libxxhash) -lpthread \
			-o "$out/fuzz_finders" ;;
	kpkt)
		$cc $flags "$root/fuzz/fuzz_kpkt.c" -o "$out/fuzz_kpkt" ;;
	*) echo "run-fuzz: unknown target '$1'" >&2; exit 2 ;;
	esac
}

# seeds into $work (scratch): the committed ones, or taken from the data
seed() { # TARGET WORK
	case $1 in
	bpfc) cp "$root/fuzz/corpus/bpfc"/* "$2/" 2>/dev/null || true ;;
	capture)
		[ -d "$data/pcaps/tcpdump-tests" ] || return 0
		python3 "$root/fuzz/seeds.py" capture "$data/pcaps/tcpdump-tests" "$2" 200 ;;
	decoders)
		[ -d "$data/pcaps/tcpdump-tests" ] || return 0
		python3 "$root/fuzz/seeds.py" decoders "$data/pcaps/tcpdump-tests" "$2" 100 ;;
	finders)
		[ -d "$data/pcaps/tcpdump-tests" ] || return 0
		python3 "$root/fuzz/seeds.py" capture "$data/pcaps/tcpdump-tests" "$2" 200 ;;
	kpkt)
		[ -f "$data/bench/mix-en10mb.pcap" ] || return 0
		python3 "$root/fuzz/seeds.py" kpkt "$data/bench/mix-en10mb.pcap" "$2" 300 ;;
	esac
}

for t in $targets; do
	build "$t"
	work="$out/corpus-$t"
	mkdir -p "$work"
	seed "$t" "$work"
	case $t in
	capture | finders) len=65536 ;; # the seeds are up to 64 KiB
	decoders) len=262144 ;; # past the reader's 64 KiB at open
	kpkt) len=16384 ;;    # jumbo frames
	*) len=4096 ;;
	esac
	echo "run-fuzz: fuzz_$t for ${each}s ($(ls "$work" | wc -l) inputs)"
	"$out/fuzz_$t" -max_total_time="$each" -timeout=10 -rss_limit_mb=2048 \
		-max_len=$len -artifact_prefix="$out/crashes/$t-" \
		-print_final_stats=1 "$work"
done
