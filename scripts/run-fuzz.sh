#!/bin/sh
# Build the libFuzzer targets with clang (ASan + UBSan) and run each for a
# bounded time. Usage: scripts/run-fuzz.sh [SECONDS per target, default 60]
# Crashes are written to build-fuzz/crashes/; the seed corpus is
# fuzz/corpus/<target>/ (new inputs go to a scratch copy, not the repo).
set -eu
secs=${1:-60}
root=$(cd "$(dirname "$0")/.." && pwd)
out=${GCAP_FUZZ_BUILD:-$root/build-fuzz}
cc=${CLANG:-clang}
command -v "$cc" >/dev/null 2>&1 || { echo "run-fuzz: $cc not found" >&2; exit 1; }
mkdir -p "$out/crashes"
# compiled directly (the targets need only the translator and libpcap)
"$cc" -g -O1 -std=gnu11 -D_GNU_SOURCE -fsanitize=fuzzer,address,undefined \
	-fno-sanitize-recover=undefined -I"$root/include" \
	"$root/fuzz/fuzz_bpfc.c" "$root/gpu/bpfc/bpfc.c" "$root/base/common.c" \
	-lpcap -o "$out/fuzz_bpfc"
for t in bpfc; do
	work="$out/corpus-$t"
	mkdir -p "$work"
	cp "$root/fuzz/corpus/$t"/* "$work/" 2>/dev/null || true
	echo "run-fuzz: fuzz_$t for ${secs}s"
	"$out/fuzz_$t" -max_total_time="$secs" -timeout=10 -rss_limit_mb=2048 \
		-artifact_prefix="$out/crashes/$t-" -print_final_stats=1 \
		"$work" "$root/fuzz/corpus/$t"
done
