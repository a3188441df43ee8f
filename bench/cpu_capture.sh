#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# CPU executor capture rate: packets received and captured per
# second, per RX lcore, for
#   null: net_null 64-byte frames (all zero: the filter matches none, so
#         this is the RX + batch + filter path without the writer),
#   pcap: net_pcap infinite_rx=1 replay of mix-en10mb.pcap (matches are
#         written),
# with the filter 'tcp port 80 or udp port 53', matches written to a file on
# tmpfs, for 1, 2, 4, ... RX lcores (one port per lcore), --busy-poll.
# The counters come from gpu-capture --summary-json.
#
# env: GPU_CAPTURE  gpu-capture binary (default: the first of
#                   ../build*/apps/gpu-capture)
#      MIX_PCAP     the replayed capture (../../shared/data/bench/mix-en10mb.pcap)
#      OUT_DIR      where capture files go, on tmpfs (/dev/shm/gcap-bench)
#      RESULTS_DIR  where the result goes (bench/results)
#      SECS         seconds per run (5)
#      LCORES       RX lcore counts ("1 2 4 8 ..." up to nproc - 2, at least "1 2")
#      SOURCES      "null pcap"
#
# net_pcap's infinite_rx needs every packet in one mbuf (gpu-capture's data
# room is 2 KB) and mix-en10mb.pcap holds frames up to 80 KB: when the
# whole file is refused, the replay uses its frames of at most 1514 bytes
# (tcpdump 'len <= 1514'), and the result says so.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
G=${GPU_CAPTURE:-$(ls "$root"/build*/apps/gpu-capture 2>/dev/null | head -1)}
MIX=${MIX_PCAP:-$root/../shared/data/bench/mix-en10mb.pcap}
OUT=${OUT_DIR:-/dev/shm/gcap-bench}
RES=${RESULTS_DIR:-$here/results}
SECS=${SECS:-5}
SOURCES=${SOURCES:-null pcap}
FILTER='tcp port 80 or udp port 53'
# net_pcap infinite_rx keeps the whole file in mbufs: the pool (sized from
# --rxd) must hold all its packets (mix-en10mb.pcap: 8236)
PCAP_RXD=${PCAP_RXD:-8192}
ncpu=$(nproc)
if [ -z "${LCORES:-}" ]; then
	LCORES="1 2"
	for n in 4 8 16 32 64; do
		[ $((n + 2)) -le "$ncpu" ] && LCORES="$LCORES $n"
	done
fi
[ -x "$G" ] || { echo "gpu-capture not found (set GPU_CAPTURE)" >&2; exit 1; }
[ -f "$MIX" ] || { echo "$MIX not found (set MIX_PCAP)" >&2; exit 1; }
mkdir -p "$OUT" "$RES" || exit 1
commit=$(git -C "$root" rev-parse --short HEAD 2>/dev/null || echo "${GCAP_COMMIT:-unknown}")
cpu_model=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -1)
machine=${MACHINE:-$(hostname -s 2>/dev/null || echo host)}
md=$RES/cpu-capture-$machine-$commit.md
rows=$OUT/rows.txt
: >"$rows"
replay=$MIX
replay_note="the whole file"

# can net_pcap replay the file with infinite_rx? (it refuses multi-mbuf frames)
if ! "$G" -q -i "net_pcap0,rx_pcap=$MIX,infinite_rx=1" --rxd "$PCAP_RXD" -w "$OUT/probe.pcap" \
	--duration 1 "$FILTER" 2>"$OUT/probe.err"; then
	if grep -q "Multiseg" "$OUT/probe.err"; then
		replay=$OUT/mix-le1514.pcap
		tcpdump -r "$MIX" -w "$replay" 'len <= 1514' 2>/dev/null || exit 1
		replay_note="its frames of at most 1514 bytes (net_pcap infinite_rx refuses the 80 KB ones)"
	else
		cat "$OUT/probe.err" >&2
		exit 1
	fi
fi
rm -f "$OUT/probe.pcap"

run() { # source lcores
	local src=$1 n=$2 i args=() lc=()
	for ((i = 0; i < n; i++)); do
		if [ "$src" = null ]; then
			args+=(-i "net_null$i,size=64,copy=1")
		else
			args+=(-i "net_pcap$i,rx_pcap=$replay,infinite_rx=1")
		fi
	done
	# infinite_rx holds the whole file in mbufs: a larger pool (--rxd)
	[ "$src" = pcap ] && args+=(--rxd "$PCAP_RXD")
	# RX lcores on CPUs 1..n when there is room (CPU 0: main thread and
	# the writer), else the EAL's default placement (shared CPUs)
	[ $((n + 1)) -le "$ncpu" ] && lc=(--lcores "1-$n")
	# several ports: pcapng (gpu-capture refuses them in one pcap file)
	local cap=$OUT/cap.pcap
	[ "$n" -gt 1 ] && cap=$OUT/cap.pcapng
	rm -f "$cap"
	"$G" -q "${args[@]}" "${lc[@]}" --busy-poll --duration "$SECS" \
		-w "$cap" --summary-json "$OUT/sum.json" "$FILTER" \
		2>"$OUT/run.err" || { echo "FAILED: $src x$n: $(cat "$OUT/run.err")" >&2; return 1; }
	python3 - "$OUT/sum.json" "$src" "$n" "$ncpu" >>"$rows" <<'PY'
import json, sys
s = json.load(open(sys.argv[1]))
src, n, ncpu = sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
secs = s["seconds"]
rx, cap = s["received"], s["captured"]
drop = sum(s.get("dropped", {}).values()) if isinstance(s.get("dropped"), dict) else s.get("dropped", 0)
shared = "" if n + 1 <= ncpu else " (shared CPUs)"
print("| %s | %d%s | %.1f | %d | %d | %d | %.3f | %.3f | %.3f | %.2f |" % (
    src, n, shared, secs, rx, cap, drop, rx / secs / 1e6, rx / secs / 1e6 / n,
    cap / secs / 1e6, s.get("received_bytes", 0) * 8 / secs / 1e9))
PY
	echo "$src x$n: $(tail -1 "$rows")"
}

for src in $SOURCES; do
	for n in $LCORES; do
		run "$src" "$n"
	done
done

{
	echo "# CPU executor capture rate"
	echo
	echo "- machine: $machine, $ncpu CPUs, ${cpu_model:-unknown CPU}"
	echo "- commit: $commit ($(git -C "$root" rev-parse HEAD 2>/dev/null || echo unknown))"
	echo "- date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
	echo "- gpu-capture: $G, backend cpu, --busy-poll, $SECS s per run"
	echo "- filter: '$FILTER'; matches written to $OUT (tmpfs)"
	echo "- null: net_null0..N-1, size=64, copy=1 (all-zero frames: nothing matches)"
	echo "- pcap: net_pcap infinite_rx=1 replay of $(basename "$MIX"), $replay_note"
	echo
	echo "| source | RX lcores | s | received | captured | dropped | rx Mpps | rx Mpps/lcore | captured Mpps | rx Gbit/s |"
	echo "|---|---|---|---|---|---|---|---|---|---|"
	cat "$rows"
	echo
	if [ "$ncpu" -le 2 ]; then
		echo "On $ncpu CPUs the RX lcores share CPUs with the main thread and"
		echo "the writer thread: rates with 2 lcores measure contention, not scaling."
	fi
} >"$md"
rm -f "$OUT/cap.pcap" "$OUT/sum.json"
echo "wrote $md"
