#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Where the gpu backend overtakes the cpu backend on -r as the file grows:
# for each size and output count, the backends in turns on the CPUs given
# (taskset; 2 CPUs leave the cpu backend no workers), the filters of
# bench/offline_lib.sh. One line a run, with the program's own line on
# the backend it chose (auto says which).
#
# env: GPU_CAPTURE, MIX_PCAP, WORK (tmpfs dir, /dev/shm/gcap-cross),
#      SIZES_MB ("1000 4000"), OUTPUTS ("2 4 8"), CPUS (0-1), RUNS (2),
#      BACKENDS ("gpu cpu")
set -uo pipefail
G=${GPU_CAPTURE:?set GPU_CAPTURE}
MIX=${MIX_PCAP:?set MIX_PCAP}
W=${WORK:-/dev/shm/gcap-cross}
. "$(dirname "$0")/offline_lib.sh"
mkdir -p "$W" || exit 1
for mb in ${SIZES_MB:-1000 4000}; do
	offline_input "$MIX" "$W/in.pcap" "$mb" || exit 1
	cat "$W/in.pcap" >/dev/null
	for n in ${OUTPUTS:-2 4 8}; do
		o=()
		for i in $(seq 0 $((n - 1))); do o+=(-w "$W/o$i.pcap:${exprs[$i]}"); done
		for ((r = 1; r <= ${RUNS:-2}; r++)); do
			for be in ${BACKENDS:-gpu cpu}; do
				t0=$(date +%s%N)
				taskset -c "${CPUS:-0-1}" "$G" --backend "$be" -r "$W/in.pcap" "${o[@]}" 2>"$W/err"
				rc=$?
				t=$((($(date +%s%N) - t0) / 1000000))
				echo "$mb MB, CPUs ${CPUS:-0-1}, $n outputs, run $r, --backend $be: rc=$rc $t ms [$(grep -m1 '^gpu-capture: backend' "$W/err")]"
			done
		done
	done
done
rm -rf "$W"
