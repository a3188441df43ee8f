#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Compressed -r inputs, side by side in one run, page cache warm: the same
# file (mix-en10mb.pcap's records repeated to SIZE_MB, in tmpfs) stored as
#   zstd, one frame (zstd -1 -T0: what zstd writes),
#   zstd, many frames (pzstd -1: each frame independent),
#   lz4, independent blocks (lz4 -1: lz4's default),
#   lz4, linked blocks (lz4 -1 -BD),
#   gzip, one member (gzip -1), and BGZF's members (bgzip -l 1, where
#   bgzip is installed),
# and for each: its decompressor's own rate to /dev/null (zstd -dc, pzstd
# -dc on the CPUs given, lz4 -dc, gzip -dc, bgzip -dc on the CPUs given),
# then gpu-capture -r with one filter
# (--backend cpu), on each CPU set of CPUS (taskset). Layouts that split
# are decompressed on several threads; the others on one, beside the
# reader. Every time is the least of REPS; the output is compared with
# the plain file's once per layout.
#
# env: GPU_CAPTURE, PCAP_CMP, MIX_PCAP, WORK, SIZE_MB (2000), REPS (3),
#      CPUS ("all", or taskset lists: "0-15 0-3 0-1"), RESULTS_DIR, MACHINE
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
G=${GPU_CAPTURE:-$(ls "$root"/build*/apps/gpu-capture 2>/dev/null | head -1)}
CMP=${PCAP_CMP:-$(ls "$root"/build*/tests/tools/pcap-cmp 2>/dev/null | head -1)}
MIX=${MIX_PCAP:-$root/../shared/data/bench/mix-en10mb.pcap}
W=${WORK:-/dev/shm/gcap-offz}
SIZE_MB=${SIZE_MB:-2000}
REPS=${REPS:-3}
CPUS=${CPUS:-all}
RES=${RESULTS_DIR:-$here/results}
machine=${MACHINE:-$(hostname -s 2>/dev/null || echo host)}
E='tcp port 80 or udp port 53'
[ -x "$G" ] || { echo "gpu-capture not found (set GPU_CAPTURE)" >&2; exit 1; }
for t in zstd pzstd lz4; do
	command -v $t >/dev/null || { echo "$t not found" >&2; exit 1; }
done
mkdir -p "$W" "$RES" || exit 1
commit=${GCAP_COMMIT:-$(git -C "$root" rev-parse --short HEAD 2>/dev/null || echo unknown)}
commit=${commit:0:7}
md=$RES/offline-compressed-$machine-$commit.md
F=$W/in.pcap
. "$here/offline_lib.sh"
offline_input "$MIX" "$F" "$SIZE_MB" || exit 1
zstd -q -1 -T0 -f -o "$W/one.zst" "$F"
pzstd -q -1 -f -o "$W/frames.zst" "$F"
lz4 -q -1 -f "$F" "$W/indep.lz4"
lz4 -q -1 -BD -f "$F" "$W/linked.lz4"
gzip -1 -c "$F" >"$W/one.gz"
layouts="one.zst frames.zst indep.lz4 linked.lz4 one.gz"
if command -v bgzip >/dev/null; then
	bgzip -l 1 -@ "$(nproc)" -c "$F" >"$W/bgzf.gz"
	layouts="$layouts bgzf.gz"
fi
"$G" -q --backend cpu -r "$F" -w "$W/ref.pcap" "$E" || exit 1
bytes=$(stat -c %s "$F")
cat "$F" "$W"/*.zst "$W"/*.lz4 "$W"/*.gz >/dev/null

best() { # CMD...: the least wall time of REPS runs, in ms
	local b= t0 t1 t i
	for ((i = 0; i < REPS; i++)); do
		t0=$(date +%s%N)
		"$@" >/dev/null 2>"$W/err.txt" || { echo "failed: $* $(tail -1 "$W/err.txt")" >&2; echo NA; return; }
		t1=$(date +%s%N)
		t=$(( (t1 - t0) / 1000000 ))
		[ -z "$b" ] || [ "$t" -lt "$b" ] && b=$t
	done
	echo "$b"
}
on() { # CPUSET CMD...
	local c=$1
	shift
	if [ "$c" = all ]; then "$@"; else taskset -c "$c" "$@"; fi
}
ncpu() { [ "$1" = all ] && nproc || taskset -c "$1" nproc; }

{
	echo "# Compressed -r inputs: $machine at $commit"
	echo
	echo "Input: mix-en10mb.pcap's records repeated, $((bytes / 1000000)) MB, in tmpfs;"
	echo "filter \`$E\`; least of $REPS runs, ms. Command:"
	echo "\`SIZE_MB=$SIZE_MB REPS=$REPS CPUS=\"$CPUS\" bash bench/offline_compressed.sh\`."
	echo
	echo "plain: cat $(best cat "$F") ms; gpu-capture --backend cpu $(best "$G" -q --backend cpu -r "$F" -w "$W/o.pcap" "$E") ms."
	echo
	printf '| layout | size MB |'
	for c in $CPUS; do printf ' decompressor, %s CPUs | gpu-capture, %s CPUs | threads |' "$(ncpu "$c")" "$(ncpu "$c")"; done
	echo
	printf '|---|---:|'
	for c in $CPUS; do printf -- '---:|---:|---|'; done
	echo
	for l in $layouts; do
		z=$W/$l
		printf '| %s | %d |' "$l" $(( $(stat -c %s "$z") / 1000000 ))
		for c in $CPUS; do
			case $l in
			one.zst) dt=$(best on "$c" zstd -dc "$z") ;;
			frames.zst) dt=$(best on "$c" pzstd -dc -p "$(ncpu "$c")" "$z") ;;
			one.gz) dt=$(best on "$c" gzip -dc "$z") ;;
			bgzf.gz) dt=$(best on "$c" bgzip -dc -@ "$(ncpu "$c")" "$z") ;;
			*) dt=$(best on "$c" lz4 -dc "$z") ;;
			esac
			gt=$(best on "$c" "$G" -q --backend cpu -r "$z" -w "$W/o.pcap" "$E")
			on "$c" "$G" -v -q --backend cpu -r "$z" -w "$W/o.pcap" "$E" 2>"$W/v.txt" >/dev/null
			how=$(grep -o 'decompressed on .*' "$W/v.txt" | sed 's/decompressed //')
			if [ -x "$CMP" ] && ! "$CMP" -q "$W/o.pcap" "$W/ref.pcap"; then how="$how; OUTPUT DIFFERS"; fi
			printf ' %s | %s | %s |' "$dt" "$gt" "$how"
		done
		echo
	done
} | tee "$md"
rm -rf "$W"
