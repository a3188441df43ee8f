#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# The gpu backend's -r settings side by side, in one run on one file, page
# cache warm: batch size, ring slots, blocks per queue and memory mode
# (mapped host staging, or copied to VRAM), each with 1 and with 64
# filters (bench/offline.sh's filters), against cat and tcpdump on the
# same file. Every output is compared with the first variant's (cmp): the
# settings must not change a byte. One line per run on stdout and in
# $OUT_MD (markdown).
#
# env: GPU_CAPTURE (gpu-capture), MIX_PCAP (the records), WORK (tmpfs dir,
#      /dev/shm/gcap-sweep), SIZE_MB (1000), REPS (2: the least kept),
#      OUT_MD (offline-gpu-sweep.md), VARIANTS (a file, one set of options
#      a line; default: the list below; each follows --backend gpu, so a
#      line "--backend cpu" runs the cpu backend beside the gpu one)
set -uo pipefail
G=${GPU_CAPTURE:?set GPU_CAPTURE}
MIX=${MIX_PCAP:?set MIX_PCAP}
W=${WORK:-/dev/shm/gcap-sweep}
SIZE_MB=${SIZE_MB:-1000}
REPS=${REPS:-2}
MD=${OUT_MD:-offline-gpu-sweep.md}
E='tcp port 80 or udp port 53'
mkdir -p "$W" || exit 1
F=$W/in.pcap
. "$(dirname "$0")/offline_lib.sh"
offline_input "$MIX" "$F" "$SIZE_MB" || exit 1
o64=()
for i in $(seq 0 63); do o64+=(-w "$W/o$i.pcap:${exprs[$i]}"); done
if [ -n "${VARIANTS:-}" ]; then
	mapfile -t vars <"$VARIANTS"
else
	vars=(
		""
		"--batch 512"
		"--batch 512 --ring 64 --gpu-blocks 16"
		"--batch 512 --ring 128 --gpu-blocks 32"
		"--batch 512 --ring 256 --gpu-blocks 64"
		"--mem copy"
		"--mem copy --batch 512 --ring 64 --gpu-blocks 8"
		"--mem copy --batch 512 --ring 128 --gpu-blocks 32"
	)
fi
TDZ=
[ "$(id -u)" = 0 ] && TDZ="-Z root"
cat "$F" >/dev/null
ms() { local t0 t1; t0=$(date +%s%N); "$@" >/dev/null 2>"$W/err.txt" || { echo NA; return; }; t1=$(date +%s%N); echo $(((t1 - t0) / 1000000)); }
least() { # N CMD...: least of N runs, NA when one fails
	local n=$1 b= t i
	shift
	for ((i = 0; i < n; i++)); do
		t=$(ms "$@")
		[ "$t" = NA ] && { echo "NA($(tail -1 "$W/err.txt"))"; return; }
		[ -z "$b" ] || [ "$t" -lt "$b" ] && b=$t
	done
	echo "$b"
}
{
	echo "| options | 1 filter ms | same output | 64 filters ms | same outputs |"
	echo "|---|---:|---|---:|---|"
	echo "| cat | $(least "$REPS" cat "$F") | | | |"
	echo "| tcpdump | $(least "$REPS" tcpdump $TDZ -r "$F" -w "$W/td.pcap" "$E") | | | |"
	first=1
	for v in "${vars[@]}"; do
		# shellcheck disable=SC2086
		t1=$(least "$REPS" "$G" -q --backend gpu $v -r "$F" -w "$W/g1.pcap" "$E")
		s1=yes
		if [ $first = 1 ]; then cp "$W/g1.pcap" "$W/ref1.pcap"; else cmp -s "$W/g1.pcap" "$W/ref1.pcap" || s1=NO; fi
		rm -f "$W"/o*.pcap
		# shellcheck disable=SC2086
		t64=$(least 1 "$G" -q --backend gpu $v -r "$F" "${o64[@]}")
		s64=yes
		if [ $first = 1 ]; then
			mkdir -p "$W/ref64" && mv "$W"/o*.pcap "$W/ref64/"
		else
			for i in $(seq 0 63); do cmp -s "$W/o$i.pcap" "$W/ref64/o$i.pcap" || s64=NO; done
		fi
		first=0
		echo "| ${v:-(defaults)} | $t1 | $s1 | $t64 | $s64 |"
	done
} | tee "$MD"
rm -rf "$W"
