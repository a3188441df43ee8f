#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Offline (-r) speed, side by side in one run on one file, page cache warm:
#   the read limit (cat F > /dev/null; dd with 1 MB reads),
#   tcpdump -r F -w OUT EXPR,
#   gpu-capture -r F -w OUT EXPR, --backend cpu and (where a GPU is) gpu,
#   with 1, 8 and 64 filters (one pass, one output each) against tcpdump
#   run once per filter (the gpu backend's 64 filters timed from its
#   module cache, after a first run that has a row of its own);
#   one filter on the mix alone: what a run costs besides its input;
#   the same file as pcapng, and compressed (zstd, else lz4, else gzip),
#   with the decompressor's own rate as that input's limit.
# F is mix-en10mb.pcap's records repeated to SIZE_MB, in WORK (tmpfs).
# Every run's wall time is the least of REPS; outputs go to WORK too. The
# 1-filter outputs are checked against tcpdump's (pcap-cmp) when PCAP_CMP
# is given.
#
# env: GPU_CAPTURE  gpu-capture (default: ../build*/apps/gpu-capture)
#      PCAP_CMP     pcap-cmp (default: next to gpu-capture's build)
#      MIX_PCAP     the records (../../shared/data/bench/mix-en10mb.pcap)
#      WORK         tmpfs directory for the inputs and outputs (/dev/shm/gcap-offline)
#      SIZE_MB      input size (2000)
#      REPS         runs per point, the least kept (3)
#      BACKENDS     "cpu gpu" (default: gpu only where nvidia-smi sees one)
#      RESULTS_DIR  where the result goes (bench/results)
#      MACHINE      its name in the result's file name (dev, h200...)
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
G=${GPU_CAPTURE:-$(ls "$root"/build*/apps/gpu-capture 2>/dev/null | head -1)}
CMP=${PCAP_CMP:-$(ls "$root"/build*/tests/tools/pcap-cmp 2>/dev/null | head -1)}
MIX=${MIX_PCAP:-$root/../shared/data/bench/mix-en10mb.pcap}
W=${WORK:-/dev/shm/gcap-offline}
SIZE_MB=${SIZE_MB:-2000}
REPS=${REPS:-3}
RES=${RESULTS_DIR:-$here/results}
machine=${MACHINE:-$(hostname -s 2>/dev/null || echo host)}
if [ -z "${BACKENDS:-}" ]; then
	BACKENDS=cpu
	nvidia-smi -L >/dev/null 2>&1 && BACKENDS="cpu gpu"
fi
E='tcp port 80 or udp port 53'
[ -x "$G" ] || { echo "gpu-capture not found (set GPU_CAPTURE)" >&2; exit 1; }
[ -f "$MIX" ] || { echo "$MIX not found (set MIX_PCAP)" >&2; exit 1; }
command -v tcpdump >/dev/null || { echo "tcpdump not found" >&2; exit 1; }
mkdir -p "$W" "$RES" || exit 1
commit=${GCAP_COMMIT:-$(git -C "$root" rev-parse --short HEAD 2>/dev/null || echo unknown)}
commit=${commit:0:7}
md=$RES/offline-$machine-$commit.md
js=$RES/offline-$machine-$commit.json
F=$W/in.pcap

# the input, and 64 filters (ports, hosts, protocols and lengths), each
# selecting little of the mix, so that 64 outputs stay small in tmpfs
. "$here/offline_lib.sh"
offline_input "$MIX" "$F" "$SIZE_MB" || exit 1
"$G" -q --backend cpu -r "$F" -w "$W/in.pcapng" || exit 1
comp=
for c in zstd lz4 gzip; do
	command -v $c >/dev/null && { comp=$c; break; }
done
case $comp in
zstd) zstd -q -1 -T0 -f -o "$W/in.pcap.zst" "$F"; Z=$W/in.pcap.zst ;;
lz4) lz4 -q -1 -f "$F" "$W/in.pcap.lz4"; Z=$W/in.pcap.lz4 ;;
gzip) gzip -1 -c "$F" >"$W/in.pcap.gz"; Z=$W/in.pcap.gz ;;
*) Z= ;;
esac
bytes=$(stat -c %s "$F")
records=$("$G" -q --backend cpu -r "$F" -w /dev/null --summary-json "$W/s.json" >/dev/null 2>&1;
	python3 -c "import json; print(json.load(open('$W/s.json'))['received'])" 2>/dev/null || echo 0)
cat "$F" "$W/in.pcapng" ${Z:+"$Z"} >/dev/null # warm

# best NAME CMD...: the least wall time of REPS runs (seconds), also kept
# as a JSON line
: >"$js"
best() {
	local name=$1 reps=$REPS b= t0 t1 t i
	shift
	[ "$1" = once ] && { reps=1; shift; }
	for ((i = 0; i < reps; i++)); do
		t0=$(date +%s%N)
		"$@" >/dev/null 2>"$W/err.txt" ||
			{ echo "$name: failed (exit $?): $(tail -2 "$W/err.txt")" >&2; echo NA; return; }
		t1=$(date +%s%N)
		rm -f "$W"/o*.pcap "$W"/t*.pcap # the multi-output runs' files
		t=$(( (t1 - t0) / 1000000 ))
		[ -z "$b" ] || [ "$t" -lt "$b" ] && b=$t
	done
	printf '{"run":"%s","ms":%d,"bytes":%d,"commit":"%s","machine":"%s"}\n' \
		"$name" "$b" "$bytes" "$commit" "$machine" >>"$js"
	echo "$b"
}
outs() { # N: -w arguments for N outputs, one filter each
	local i
	for ((i = 0; i < $1; i++)); do printf -- '-w\0%s\0' "$W/o$i.pcap:${exprs[$i]}"; done
}
tdn() { # N: tcpdump once per filter
	local i
	for ((i = 0; i < $1; i++)); do
		tcpdump $TDZ -r "$2" -w "$W/t$i.pcap" "${exprs[$i]}" 2>/dev/null || return 1
	done
}
rate() { [ "$1" = NA ] && echo NA || awk -v b="$bytes" -v ms="$1" 'BEGIN { printf "%.0f", b / 1e6 / (ms / 1e3) }'; }
ratio() { [ "$1" = NA ] || [ "$2" = NA ] && echo NA || awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", a / b }'; }

# tcpdump -w drops to the user tcpdump, which a machine may lack (the GPU
# machines do): as root, stay root
TDZ=
[ "$(id -u)" = 0 ] && TDZ="-Z root"
declare -A T
T[cat]=$(best cat cat "$F")
T[dd]=$(best dd dd if="$F" of=/dev/null bs=1M)
T[td1]=$(best tcpdump-1 tcpdump $TDZ -r "$F" -w "$W/td.pcap" "$E")
T[tdng]=$(best tcpdump-pcapng tcpdump $TDZ -r "$W/in.pcapng" -w "$W/td.pcap" "$E")
T[td8]=$(best tcpdump-x8 once tdn 8 "$F")
T[td64]=$(best tcpdump-x64 once tdn 64 "$F")
[ -n "$Z" ] && T[zlimit]=$(best "$comp-d" "$comp" -dc "$Z")
for be in $BACKENDS; do
	T[$be-1]=$(best "$be-1" "$G" -q --backend "$be" -r "$F" -w "$W/gc.pcap" "$E")
	if [ -x "$CMP" ] && [ "${T[$be-1]}" != NA ]; then
		tcpdump $TDZ -r "$F" -w "$W/td.pcap" "$E" 2>/dev/null
		"$CMP" -q --usec "$W/gc.pcap" "$W/td.pcap" || echo "$be: output differs from tcpdump's" >&2
	fi
	T[$be-ng]=$(best "$be-pcapng" "$G" -q --backend "$be" -r "$W/in.pcapng" -w "$W/gc.pcap" "$E")
	[ -n "$Z" ] && T[$be-z]=$(best "$be-$comp" "$G" -q --backend "$be" -r "$Z" -w "$W/gc.pcap" "$E")
	mapfile -d '' o8 < <(outs 8)
	mapfile -d '' o64 < <(outs 64)
	T[$be-8]=$(best "$be-8" "$G" -q --backend "$be" -r "$F" "${o8[@]}")
	# the gpu backend compiles a new set of filters once (NVRTC), then
	# loads it from its cache: the first run, then one from the cache
	[ "$be" = gpu ] && T[$be-64c]=$(best "$be-64-first" once "$G" -q --backend "$be" -r "$F" "${o64[@]}")
	T[$be-64]=$(best "$be-64" once "$G" -q --backend "$be" -r "$F" "${o64[@]}")
	# what a run costs whatever its input: start, setup and exit, on
	# the mix itself (a few MB)
	T[$be-small]=$(best "$be-small" "$G" -q --backend "$be" -r "$MIX" -w "$W/gc.pcap" "$E")
done

{
	echo "# Offline read (-r): $machine at $commit"
	echo
	echo "bash bench/offline.sh (MACHINE=$machine SIZE_MB=$SIZE_MB REPS=$REPS)."
	echo "Input: mix-en10mb.pcap's records repeated, $((bytes / 1000000)) MB, $records records,"
	echo "in $W (tmpfs), page cache warm; the least wall time of $REPS runs"
	echo "(one run for the x8/x64 tcpdump loops and the 64-filter passes; the gpu"
	echo "backend's 64-filter pass after a first run that compiled its filters)."
	echo "One filter: '$E'. CPU: $(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -1), $(nproc) vCPUs."
	echo
	echo "| run | ms | MB/s | vs tcpdump | vs read limit (cat) |"
	echo "|---|---:|---:|---:|---:|"
	row() { echo "| $1 | $2 | $(rate "$2") | $(ratio "${T[$3]:-NA}" "$2") | $(ratio "${T[cat]}" "$2") |"; }
	row "cat (read limit)" "${T[cat]}" td1
	row "dd bs=1M" "${T[dd]}" td1
	row "tcpdump, 1 filter" "${T[td1]}" td1
	for be in $BACKENDS; do row "gpu-capture --backend $be, 1 filter" "${T[$be-1]}" td1; done
	row "tcpdump, pcapng input" "${T[tdng]}" tdng
	for be in $BACKENDS; do row "gpu-capture --backend $be, pcapng input" "${T[$be-ng]}" tdng; done
	if [ -n "$Z" ]; then
		row "$comp -dc (this input's limit)" "${T[zlimit]}" td1
		for be in $BACKENDS; do row "gpu-capture --backend $be, $comp input" "${T[$be-z]}" td1; done
	fi
	row "tcpdump run 8 times (8 filters)" "${T[td8]}" td8
	for be in $BACKENDS; do row "gpu-capture --backend $be, 8 filters, one pass" "${T[$be-8]}" td8; done
	row "tcpdump run 64 times (64 filters)" "${T[td64]}" td64
	for be in $BACKENDS; do row "gpu-capture --backend $be, 64 filters, one pass" "${T[$be-64]}" td64; done
	[ -n "${T[gpu-64c]:-}" ] && row "gpu-capture --backend gpu, 64 filters, first run (compiles them)" "${T[gpu-64c]}" td64
	echo
	echo "One filter on mix-en10mb.pcap alone ($(stat -c %s "$MIX") bytes): what a run costs besides its input."
	echo
	echo "| run | ms |"
	echo "|---|---:|"
	for be in $BACKENDS; do echo "| gpu-capture --backend $be, 1 filter, the mix alone | ${T[$be-small]} |"; done
	echo
	echo "MB/s: input bytes per second of wall time (for the x8/x64 rows, of the whole"
	echo "loop). vs tcpdump: tcpdump's time over this run's (above 1: faster than"
	echo "tcpdump; the pcapng rows against tcpdump on the pcapng, the filter-count rows"
	echo "against tcpdump run once per filter). vs read limit: cat's time over this"
	echo "run's (1: as fast as reading the file at all)."
} | tee "$md"
rm -rf "$W" # tmpfs is memory
