#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# A plain -r input's records found ahead of the reader (--find-threads),
# side by side in one run, page cache warm: mix-en10mb.pcap's records
# repeated to SIZE_MB in tmpfs, one filter; cat (the read limit) and
# tcpdump, then gpu-capture on each backend of BACKENDS with each count of
# FINDERS (0: the reader finds every record), in turns. Every time is the
# least of REPS; each row also gives the reader's own time and CPU time
# (-v) and how many megabytes' lists it took whole; every output is
# compared with tcpdump's. FORMATS "pcap pcapng" reads the same records
# as pcapng too (written by gpu-capture), each against tcpdump on it.
#
# env: GPU_CAPTURE, PCAP_CMP, TCPDUMP, MIX_PCAP, WORK, SIZE_MB (2000),
#      REPS (3), FINDERS ("0 2 4 8"), BACKENDS ("cpu gpu"), FORMATS
#      ("pcap"), RESULTS_DIR, MACHINE
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
G=${GPU_CAPTURE:-$(ls "$root"/build*/apps/gpu-capture 2>/dev/null | head -1)}
CMP=${PCAP_CMP:-$(ls "$root"/build*/tests/tools/pcap-cmp 2>/dev/null | head -1)}
TD=${TCPDUMP:-tcpdump}
MIX=${MIX_PCAP:-$root/../shared/data/bench/mix-en10mb.pcap}
W=${WORK:-/dev/shm/gcap-offfind}
SIZE_MB=${SIZE_MB:-2000}
REPS=${REPS:-3}
FINDERS=${FINDERS:-0 2 4 8}
BACKENDS=${BACKENDS:-cpu gpu}
FORMATS=${FORMATS:-pcap}
RES=${RESULTS_DIR:-$here/results}
machine=${MACHINE:-$(hostname -s 2>/dev/null || echo host)}
E='tcp port 80 or udp port 53'
[ -x "$G" ] || { echo "gpu-capture not found (set GPU_CAPTURE)" >&2; exit 1; }
[ -x "$CMP" ] || { echo "pcap-cmp not found (set PCAP_CMP)" >&2; exit 1; }
mkdir -p "$W" "$RES" || exit 1
commit=${GCAP_COMMIT:-$(git -C "$root" rev-parse --short HEAD 2>/dev/null || echo unknown)}
commit=${commit:0:7}
md=$RES/offline-finders-$machine-$commit.md
F=$W/in.pcap
. "$here/offline_lib.sh"
offline_input "$MIX" "$F" "$SIZE_MB" || exit 1
bytes=$(stat -c %s "$F")
for f in $FORMATS; do
	case $f in
	pcap) ;;
	pcapng) "$G" -q --backend cpu -r "$F" -w "$W/in.pcapng" || exit 1 ;;
	*) echo "FORMATS: pcap or pcapng, not $f" >&2; exit 1 ;;
	esac
	cat "$W/in.$f" >/dev/null
done

# ms CMD...: one run's wall time in ms (NA on failure), stderr in $W/err.txt
ms() {
	local t0 t1
	t0=$(date +%s%N)
	"$@" >/dev/null 2>"$W/err.txt" || { echo NA; return; }
	t1=$(date +%s%N)
	echo $(((t1 - t0) / 1000000))
}
least() { printf '%s\n' "$@" | grep -v NA | sort -n | head -1; }

# tcpdump -w drops to the user tcpdump, which a machine may lack (the GPU
# machines do): as root, stay root
TDZ=()
[ "$(id -u)" = 0 ] && TDZ=(-Z root)
for f in $FORMATS; do
	"$TD" "${TDZ[@]}" -r "$W/in.$f" -w "$W/ref-$f.pcap" "$E" 2>"$W/err.txt" ||
		{ echo "tcpdump failed: $(tail -1 "$W/err.txt")" >&2; exit 1; }
done
declare -A t rd cpu took tdf
cats=()
for ((i = 0; i < REPS; i++)); do
	cats+=("$(ms cat "$F")")
	for f in $FORMATS; do
		tdf[$f]="${tdf[$f]:-} $(ms "$TD" "${TDZ[@]}" -r "$W/in.$f" -w "$W/td.pcap" "$E")"
		for b in $BACKENDS; do
			for n in $FINDERS; do
				k=$f-$b-$n
				v=$(ms "$G" -v --backend "$b" --find-threads "$n" -r "$W/in.$f" -w "$W/$k.pcap" "$E")
				t[$k]="${t[$k]:-} $v"
				# the reader's line and the finders' of the fastest run so far
				if [ "$v" != NA ] && [ "$v" = "$(least ${t[$k]})" ]; then
					rd[$k]=$(sed -n 's/.*file reader: \([0-9]*\) ms, \([0-9]*\) ms of CPU.*/\1/p' "$W/err.txt")
					cpu[$k]=$(sed -n 's/.*file reader: \([0-9]*\) ms, \([0-9]*\) ms of CPU.*/\2/p' "$W/err.txt")
					took[$k]=$(sed -n 's/.*on [0-9]* threads, \([0-9]* of [0-9]*\) megabytes.*/\1/p' "$W/err.txt")
				fi
			done
		done
	done
done
cat_ms=$(least "${cats[@]}")
{
	echo "# Records found ahead of the reader: $machine at $commit"
	echo
	echo "Input: mix-en10mb.pcap's records repeated, $((bytes / 1000000)) MB of pcap in tmpfs"
	echo "(formats: $FORMATS), page cache warm; filter \`$E\`; least of $REPS runs, in"
	echo "turns; $(nproc) CPUs. Command: \`SIZE_MB=$SIZE_MB REPS=$REPS FINDERS=\"$FINDERS\""
	echo "FORMATS=\"$FORMATS\" bash bench/offline_finders.sh\`."
	echo
	echo "| input | run | ms | vs tcpdump | reader ms (CPU ms) | lists taken whole | output |"
	echo "|---|---|---:|---:|---:|---|---|"
	echo "| pcap | cat (read limit) | $cat_ms | | | | |"
	for f in $FORMATS; do
		td_ms=$(least ${tdf[$f]})
		echo "| $f | tcpdump | $td_ms | 1.00 | | | |"
		for b in $BACKENDS; do
			for n in $FINDERS; do
				k=$f-$b-$n
				v=$(least ${t[$k]})
				if "$CMP" -q "$W/$k.pcap" "$W/ref-$f.pcap" 2>/dev/null; then same=same; else same=DIFFERS; fi
				r=NA
				[ -n "$v" ] && r=$(awk -v a="$td_ms" -v b="$v" 'BEGIN { printf "%.2f", a / b }')
				echo "| $f | --backend $b --find-threads $n | ${v:-NA} | $r | ${rd[$k]:-} (${cpu[$k]:-}) | ${took[$k]:-none} | $same |"
			done
		done
	done
} | tee "$md"
rm -rf "$W"
