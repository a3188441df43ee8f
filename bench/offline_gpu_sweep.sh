#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# The gpu backend's -r settings side by side, in one run on one file, page
# cache warm: batch size, ring slots, blocks per queue and memory mode
# (mapped host staging, or copied to VRAM), each with 1 and with 64
# filters (bench/offline.sh's filters), against cat and tcpdump on the
# same file, every variant once a round in turns. Every one-filter output
# is compared with tcpdump's, every 64-filter output with the first
# variant's that ran (cmp): the settings must not change a byte. A table
# on stdout and in $OUT_MD (markdown).
#
# env: GPU_CAPTURE (gpu-capture), MIX_PCAP (the records), WORK (tmpfs dir,
#      /dev/shm/gcap-sweep), SIZE_MB (1000), REPS (2 rounds: the least
#      kept; 64 filters run in the first round only),
#      OUT_MD (offline-gpu-sweep.md), VARIANTS (a file, one set of options
#      a line; default: the list below; each follows --backend gpu, so a
#      line "--backend cpu" runs the cpu backend beside the gpu one),
#      DIAG_LOG (a file: each variant then runs once more with -v, its
#      lines kept there)
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
	local n=$1 b='' t i
	shift
	for ((i = 0; i < n; i++)); do
		t=$(ms "$@")
		[ "$t" = NA ] && { echo "NA($(tail -1 "$W/err.txt"))"; return; }
		[ -z "$b" ] || [ "$t" -lt "$b" ] && b=$t
	done
	echo "$b"
}
# every variant once a round, in turns, REPS rounds: a slow spell of the
# machine then falls on all of them alike
declare -A best1 best64 same1 same64
keep() { # VAR VALUE: the least of the numbers, else the first failure
	local cur=${!1:-}
	case "$2" in NA*) [ -n "$cur" ] || printf -v "$1" %s "$2"; return ;; esac
	case "$cur" in '' | NA*) printf -v "$1" %s "$2" ;; *) [ "$2" -lt "$cur" ] && printf -v "$1" %s "$2" ;; esac
}
tcat='' ttd=''
for ((r = 0; r < REPS; r++)); do
	keep tcat "$(least 1 cat "$F")"
	keep ttd "$(least 1 tcpdump $TDZ -r "$F" -w "$W/td.pcap" "$E")"
	for k in "${!vars[@]}"; do
		v=${vars[$k]}
		# shellcheck disable=SC2086
		t=$(least 1 "$G" -q --backend gpu $v -r "$F" -w "$W/g1.pcap" "$E")
		keep "best1[$k]" "$t"
		# each run's output against tcpdump's; a failed run marks the
		# row, whatever the other rounds did
		s=yes
		if [ "${t#NA}" != "$t" ]; then s=failed; else cmp -s "$W/g1.pcap" "$W/td.pcap" || s=NO; fi
		case "${same1[$k]:-yes}" in yes) same1[$k]=$s ;; esac
		[ "$r" = 0 ] || continue # 64 filters: one run each
		rm -f "$W"/o*.pcap
		# shellcheck disable=SC2086
		t=$(least 1 "$G" -q --backend gpu $v -r "$F" "${o64[@]}")
		keep "best64[$k]" "$t"
		s=yes
		if [ "${t#NA}" != "$t" ]; then
			s=failed
		elif [ ! -d "$W/ref64" ]; then # the first variant that ran
			mkdir -p "$W/ref64" && mv "$W"/o*.pcap "$W/ref64/"
		else
			for i in $(seq 0 63); do cmp -s "$W/o$i.pcap" "$W/ref64/o$i.pcap" || s=NO; done
		fi
		same64[$k]=$s
	done
done
{
	echo "| options | 1 filter ms | same output | 64 filters ms | same outputs |"
	echo "|---|---:|---|---:|---|"
	echo "| cat | $tcat | | | |"
	echo "| tcpdump | $ttd | | | |"
	for k in "${!vars[@]}"; do
		echo "| ${vars[$k]:-(defaults)} | ${best1[$k]} | ${same1[$k]} | ${best64[$k]} | ${same64[$k]} |"
	done
	echo
	echo "same output: each run's one-filter file against tcpdump's (cmp);"
	echo "same outputs: the 64 files against the first variant that ran's."
} | tee "$MD"
if [ -n "${DIAG_LOG:-}" ]; then # each variant once more, its -v lines kept
	for v in "${vars[@]}"; do
		echo "== --backend gpu $v -v"
		# its -v lines (stderr) kept, its summary (stdout) dropped
		# shellcheck disable=SC2086,SC2069
		"$G" -v --backend gpu $v -r "$F" -w "$W/g1.pcap" "$E" 2>&1 >/dev/null
	done >"$DIAG_LOG"
fi
rm -rf "$W"
