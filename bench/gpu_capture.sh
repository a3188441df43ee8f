#!/usr/bin/env bash
# Capture throughput and latency, cpu vs gpu (host, copy), in one run on one
# machine. For each source and 1..8 RX queues/lcores. Sources:
#   null     net_null 64-byte frames, copy=1: the RX lcore's CPU writes each
#            frame's bytes into its data room (as net_pcap's replay does);
#   null-nc  net_null 64-byte frames, copy=0 (net_null's default): nothing
#            writes the bytes, as with a NIC, whose DMA writes them and
#            leaves the CPU out. With --mem host the GPU reads the data
#            rooms, so a CPU write into one costs the lcore a cache miss
#            (docs/benchmarks.md); "null" pays it and "null-nc" does not;
#   pcap     net_pcap replay of mix-en10mb.pcap with infinite_rx;
#   gpunic   the emulated GPUDirect NIC (docs/gpu.md) looping over
#            mix-en10mb.pcap without its frames longer than a data room
#            holds (65,472 bytes: --mem gpu would drop them as chains, the
#            cpu backend copy them whole): the GPU writes every packet
#            into its data room, VRAM with backend gpu-gpu (--mem gpu);
#   gpunic64 the same over 64-byte UDP frames of 4096 flows; gpunicN over
#            N-byte ones (64 to 1514, e.g. gpunic256).
#   1. the lossless rate: --backpressure (a full pipeline stops the RX lcore,
#      so nothing is dropped inside the pipeline; the software source waits),
#      i.e. the most the pipeline sustains with zero pipeline drops;
#   2. RX-to-verdict latency p50/p99 with the source held (--rx-rate) at half
#      of that rate.
# Filter 'tcp port 80 or udp port 53', matches written to CAP_DIR
# (/dev/shm; a tmpfs mounted with huge=within_size takes the writer's
# bytes for less CPU: docs/tuning.md).
# NFILTERS=64: 64 outputs at once (-w FILE:EXPR), that filter and 63 others
# ('tcp port P or udp port P+1000', P = 1001..1063), every packet tested
# against all: the filtering work the gpu backend takes off the lcores.
#
# Backend "floor" (first by default) is not gpu-capture: bench/rx_floor on
# the same ports, lcores and pools, receiving and giving the mbufs back with
# nothing else. No executor can take that work off the RX lcores, so
# floor / cpu is the most any backend could beat the cpu backend by on that
# source, and gpu-host / floor is how near the gpu path comes to it.
#
# env: GPU_CAPTURE (binary), RX_FLOOR (binary), MIX_PCAP, OUT_DIR (results),
#      SECS (per run), QUEUES ("1 2 4 8"),
#      BACKENDS ("floor cpu gpu-host gpu-copy"; gpu-gpu: --mem gpu, and
#      floor-gpu: rx_floor --mem gpu, on gpunic sources; floor-nic and
#      floor-gpu-nic: the same with the NIC's default feeding threads,
#      those the capture rows get, instead of one a queue), SOURCES,
#      GPUNIC_ARGS (",feeders=N" ...), CAP_DIR (where the captures write),
#      GPU_BLOCKS (--gpu-blocks for the gpu backends), NFILTERS (1),
#      BATCH (--batch, default the program's), RX_BURST (--rx-burst of
#      gpu-capture and --burst of rx_floor; default each one's), HALF (0:
#      the lossless runs only), EXTRA (more gpu-capture arguments, e.g.
#      "--ring 32"), RUNS (1: lossless runs a row; with more, the row is
#      the run of the median rate, the others' range beside it)
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
G=${GPU_CAPTURE:-$here/../build/apps/gpu-capture}
F=${RX_FLOOR:-$(dirname "$G")/rx_floor}
[ -x "$F" ] || F=$here/../build/bench/rx_floor
MIX=${MIX_PCAP:-$here/../../shared/data/bench/mix-en10mb.pcap}
OUT=${OUT_DIR:-$here/results}
SECS=${SECS:-3}
QUEUES=${QUEUES:-1 2 4 8}
BACKENDS=${BACKENDS:-floor cpu gpu-host gpu-copy}
HALF=${HALF:-1}
SOURCES=${SOURCES:-null-nc null pcap}
FILTER='tcp port 80 or udp port 53'
NFILTERS=${NFILTERS:-1}
CAP=${CAP_DIR:-/dev/shm}
outputs=(-w "$CAP/gcap-bench.pcap" "$FILTER")
if [ "$NFILTERS" -gt 1 ]; then
	outputs=(-w "$CAP/gcap-bench.pcap:$FILTER")
	for ((f = 1; f < NFILTERS; f++)); do
		outputs+=(-w "$CAP/gcap-bench-$f.pcap:tcp port $((1000 + f)) or udp port $((2000 + f))")
	done
fi
ncpu=$(nproc)
commit=${GCAP_COMMIT:-$(git -C "$here" rev-parse --short HEAD 2>/dev/null || echo unknown)}
mkdir -p "$OUT"
tag=$(hostname -s 2>/dev/null || echo host)
jsonl=$OUT/gpu-capture-bench.jsonl
md=$OUT/gpu-capture-bench.md
: >"$jsonl"
tmp=$(mktemp -d)
# gone however the bench ends (the captures' files too)
trap 'rm -rf "$tmp"; rm -f "$CAP"/gcap-bench*.pcap*' EXIT
trap 'exit 130' INT TERM
# net_pcap's infinite_rx refuses packets larger than one mbuf: replay the
# mix cut to 2,000 bytes (the original lengths stay in the records)
MIX_FULL=$MIX
python3 "$here/../scripts/pcap-snap.py" "$MIX" "$tmp/mix-snap.pcap" 2000 || exit 1
MIX=$tmp/mix-snap.pcap
# the emulated NIC's sources (gpunic, gpunicN), made once here
source "$here/gpunic_sources.sh"
for src in $SOURCES; do case $src in gpunic*)
	gpunic_pcap "$src" "$tmp" "$MIX_FULL" >/dev/null || exit 1 ;;
esac; done

ports_for() { # source queues [more gpunic arguments] -> -i arguments
	local src=$1 q=$2 i nic=${GPUNIC_ARGS:-}${3:-}
	if [ "$src" = null ]; then
		echo "-i net_null0,size=64,copy=1 --queues $q"
	elif [ "$src" = null-nc ]; then
		echo "-i net_null0,size=64,copy=0 --queues $q"
	elif [[ $src == gpunic* ]]; then
		echo "-i gpunic0,rx_pcap=$(gpunic_pcap "$src" "$tmp" "$MIX_FULL"),loop=1$nic --queues $q"
	else
		for ((i = 0; i < q; i++)); do
			printf -- "-i net_pcap%d,rx_pcap=%s,infinite_rx=1 " "$i" "$MIX"
		done
		echo "--mbufs 16384" # infinite_rx holds the whole file in mbufs
	fi
}

backend_args() {
	case $1 in
	cpu) echo "--backend cpu" ;;
	gpu-host) echo "--backend gpu --mem host ${GPU_BLOCKS:+--gpu-blocks $GPU_BLOCKS}" ;;
	gpu-copy) echo "--backend gpu --mem copy ${GPU_BLOCKS:+--gpu-blocks $GPU_BLOCKS}" ;;
	gpu-gpu) echo "--backend gpu --mem gpu ${GPU_BLOCKS:+--gpu-blocks $GPU_BLOCKS}" ;;
	esac
}

median_run() { # src q backend -> "json lo hi": of RUNS lossless runs, the
	# one of the median rate (the lower of two middles) and the range
	local r j js=()
	for ((r = 0; r < ${RUNS:-1}; r++)); do
		j=$(run_one "$@" --backpressure) && js+=("$j")
	done
	[ ${#js[@]} -gt 0 ] || return 1
	python3 - "${js[@]}" <<'PY'
import json, sys
runs = sorted((json.load(open(p))['rx_mpps'], p) for p in sys.argv[1:])
print(runs[(len(runs) - 1) // 2][1], runs[0][0], runs[-1][0])
PY
}

field() { # json file, python expression over d
	python3 -c "import json,sys; d=json.load(open('$1')); print($2)" 2>/dev/null
}

# the run in progress: timeout puts it in a process group of its own, out
# of a Ctrl-C's reach, so run_one's subshell (each call is one, in $(...))
# stops it as it exits (timeout passes the SIGINT on)
CAP_PID=
run_one() { # src q backend extra... -> json path (or empty)
	local src=$1 q=$2 be=$3
	shift 3
	trap '[ -n "$CAP_PID" ] && kill -INT "$CAP_PID" 2>/dev/null && wait "$CAP_PID" 2>/dev/null' EXIT
	trap 'exit 130' INT TERM
	local j=$tmp/$src-$q-$be-$RANDOM.json
	if [ "${be#floor}" != "$be" ]; then
		local fm=() fd=",feeders=$q"
		case $be in floor-gpu*) fm=(--mem gpu) ;; esac
		# the emulated NIC's floor: one feeding thread a queue (the
		# most it delivers, where gpu-capture's default may give
		# fewer), whatever GPUNIC_ARGS says; *-nic: the NIC's default,
		# as the capture rows have it
		case $be in *-nic) fd= ;; esac
		# shellcheck disable=SC2046
		timeout $((SECS + 60)) "$F" -t "$SECS" $(ports_for "$src" "$q" "$fd") \
			"${fm[@]}" ${RX_BURST:+--burst $RX_BURST} --json "$j" >"$tmp/log" 2>&1 &
		CAP_PID=$!
		wait "$CAP_PID"
		local rc=$?
		CAP_PID=
		if [ $rc -ne 0 ] || [ ! -s "$j" ]; then
			{ echo "  run failed (rc $rc): $src q=$q $be"; sed 's/^/    /' "$tmp/log"; } |
				tee -a "$OUT/failed-runs.log" >&2
			return 1
		fi
		echo "$j"
		return 0
	fi
	# the pcap source is q ports: pcapng outputs (one pcap file holds one)
	local outs=("${outputs[@]}")
	[ "$src" = pcap ] && [ "$q" -gt 1 ] && outs=("${outputs[@]//.pcap/.pcapng}")
	# shellcheck disable=SC2046
	timeout $((SECS + 60)) "$G" -q $(ports_for "$src" "$q") $(backend_args "$be") \
		--busy-poll --duration "$SECS" --summary-json "$j" ${BATCH:+--batch $BATCH} ${RX_BURST:+--rx-burst $RX_BURST} ${EXTRA:-} "$@" \
		"${outs[@]}" >"$tmp/log" 2>&1 &
	CAP_PID=$!
	wait "$CAP_PID"
	local rc=$?
	CAP_PID=
	rm -f "$CAP"/gcap-bench*.pcap*
	if [ $rc -ne 0 ] || [ ! -s "$j" ]; then
		{
			echo "  run failed (rc $rc): $src q=$q $be $*"
			sed 's/^/    /' "$tmp/log"
		} | tee -a "$OUT/failed-runs.log" >&2
		return 1
	fi
	echo "$j"
}

{
	echo "# gpu-capture: cpu vs gpu backends"
	echo
	echo "machine: $tag, $ncpu CPUs, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')"
	command -v nvidia-smi >/dev/null && echo "gpu: $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | head -1)"
	echo "commit: $commit, $SECS s per run, filter '$FILTER'$([ "$NFILTERS" -gt 1 ] && echo " and $((NFILTERS - 1)) more (NFILTERS=$NFILTERS outputs)"), ${GPU_BLOCKS:+--gpu-blocks $GPU_BLOCKS, }${BATCH:+--batch $BATCH, }${RX_BURST:+--rx-burst $RX_BURST, }${EXTRA:+$EXTRA, }busy polling; pcap source: mix-en10mb.pcap cut to 2000 bytes$(case " $SOURCES " in *" gpunic "*) echo "; gpunic: its records of up to 65,472 bytes as the file holds them, their Gb/s counting the lengths on the wire the records give, past the bytes they hold where the file cut them" ;; esac)"
	echo
	echo "| source | RX lcores | backend | lossless Mpps | Gb/s | captured | pipeline drops | CPU cores used | latency p50 us | p99 us (at half rate) | mean batch | executor us/batch (at half rate) | p99 us of the batch's parts: submit-to-done / notice (in) / executor / back (at half rate) | poll gaps >= 10 us per s per queue; p99 us of the packets no gap reached (their share) (at half rate) |"
	echo "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"
} >"$md"

for src in $SOURCES; do
	for q in $QUEUES; do
		[ $((q + 1)) -le "$ncpu" ] || { echo "skip q=$q: $ncpu CPUs" >&2; continue; }
		for be in $BACKENDS; do
			read -r j lo hi < <(median_run "$src" "$q" "$be") || continue
			mpps=$(field "$j" "d['rx_mpps']")
			mcol=$mpps
			[ "${RUNS:-1}" -gt 1 ] && mcol="$mpps ($lo-$hi)"
			gbps=$(field "$j" "d['rx_gbps']")
			if [ "${be#floor}" != "$be" ]; then
				# receive and give back: no filter, no pipeline, no latency
				case $be in
				floor) lbl="floor (rx_floor)" ;;
				floor-gpu) lbl="floor, --mem gpu (rx_floor)" ;;
				floor-nic) lbl="floor, the NIC's default feeders (rx_floor)" ;;
				floor-gpu-nic) lbl="floor, --mem gpu, the NIC's default feeders (rx_floor)" ;;
				esac
				echo "| $src | $q | $lbl | $mcol | $gbps | - | - | $q | - | - | - | - | - | - |" >>"$md"
				python3 -c "import json,sys; d=json.load(open(sys.argv[1])); d.update(source=sys.argv[2], lcores=int(sys.argv[3]), config=sys.argv[5], commit=sys.argv[4]); print(json.dumps(d))" \
					"$j" "$src" "$q" "$commit" "$be" >>"$jsonl"
				echo "$src q=$q $be: $mpps Mpps" >&2
				continue
			fi
			cap=$(field "$j" "d['captured']")
			pdrop=$(field "$j" "d['dropped']['pipeline_full']")
			cores=$(field "$j" "d['cores_used']")
			half=$(python3 -c "print(max(1, int($mpps * 1e6 / 2 / $q)))")
			j2=
			[ "$HALF" = 0 ] || j2=$(run_one "$src" "$q" "$be" --rx-rate "$half") || j2=
			p50=NA p99=NA bm=NA ex=NA parts=NA gaps=NA
			if [ -n "$j2" ]; then
				p50=$(field "$j2" "d['latency_us']['p50']")
				p99=$(field "$j2" "d['latency_us']['p99']")
				bm=$(field "$j2" "d['batch_mean']")
				ex=$(field "$j2" "d['exec_us_mean']")
				parts=$(field "$j2" "' / '.join(str(d['latency_parts_us'][k + '_p99']) for k in ('cycle', 'in', 'exec', 'back'))")
				gaps=$(field "$j2" "'%s; %s (%.1f%%)' % (d['poll_gaps']['ge10us_per_s'], d['latency_no_gap_us']['p99'], 100 * d['latency_no_gap_us']['share'])")
			fi
			echo "| $src | $q | $be | $mcol | $gbps | $cap | $pdrop | $cores | $p50 | $p99 | $bm | $ex | $parts | $gaps |" >>"$md"
			# the lossless run's summary, the half-rate run's under half_rate
			python3 - "$j" "$src" "$q" "$be" "$p50" "$p99" "$commit" "$bm" "$ex" "${j2:-}" >>"$jsonl" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
d.update(source=sys.argv[2], lcores=int(sys.argv[3]), config=sys.argv[4],
         half_rate_p50_us=sys.argv[5], half_rate_p99_us=sys.argv[6], commit=sys.argv[7],
         half_rate_batch_mean=sys.argv[8], half_rate_exec_us_mean=sys.argv[9])
if sys.argv[10]:
    d['half_rate'] = json.load(open(sys.argv[10]))
print(json.dumps(d))
PY
			echo "$src q=$q $be: $mpps Mpps lossless, p50 $p50 us p99 $p99 us at half rate" >&2
		done
	done
done
rm -rf "$tmp"
cat "$md"
