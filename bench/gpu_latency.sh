#!/usr/bin/env bash
# RX-to-verdict latency against offered load: net_null 64-byte
# frames held at given rates per queue (--rx-rate, packets spread evenly as
# a NIC delivers them), for each backend. Per run: latency p50/p99/p99.9
# (per packet, from the poll that received it), the mean batch
# the load made, the executor's own time per batch (GPU: doorbell seen to
# DONE by the GPU's clock), the time from submit to the verdicts seen by the
# RX lcore, drops and CPU cores used. Submit-to-done minus executor time is
# the doorbell in both directions, split into "in" (submit to the GPU seeing
# READY, above its quickest of the last 0.1-0.2 s) and "back" (the rest);
# latency minus submit-to-done is the wait in the open batch for a free
# lane. Poll gaps: how often a busy RX lcore's next poll came >= 10 or
# 50 us late (its CPU taken away, docs/tuning.md), and the share of time;
# "no-gap": the latency of the packets whose batch no gap (>= 5 us)
# reached, and their share of all: the tail where the lcores kept their
# CPUs (a diagnostic beside p50/p99, which count every packet).
#
# env: GPU_CAPTURE, OUT_DIR, SECS (2), QUEUES ("1 8"), RATES (Mpps per
#      queue, "0.1 1 5 10 15"), BACKENDS ("cpu gpu-host"), GPU_BLOCKS,
#      BATCH, FILTER, EXTRA (more gpu-capture arguments, e.g. "--ring 32"),
#      NULL_COPY (net_null's copy=: 1, the RX lcore writes each frame's
#      bytes; 0, nothing does, as with a NIC's DMA; see gpu_capture.sh)
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
G=${GPU_CAPTURE:-$here/../build/apps/gpu-capture}
OUT=${OUT_DIR:-$here/results}
SECS=${SECS:-2}
QUEUES=${QUEUES:-1 8}
RATES=${RATES:-0.1 1 5 10 15}
BACKENDS=${BACKENDS:-cpu gpu-host}
FILTER=${FILTER:-tcp port 80 or udp port 53}
NULL_COPY=${NULL_COPY:-1}
commit=${GCAP_COMMIT:-$(git -C "$here" rev-parse --short HEAD 2>/dev/null || echo unknown)}
mkdir -p "$OUT"
md=$OUT/gpu-latency.md
jsonl=$OUT/gpu-latency.jsonl
: >"$jsonl"
tmp=$(mktemp -d)
{
	echo "# gpu-capture: latency against load"
	echo
	echo "machine: $(nproc) CPUs, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')"
	command -v nvidia-smi >/dev/null && echo "gpu: $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | head -1)"
	echo "commit: $commit, $SECS s per run, net_null 64 B copy=$NULL_COPY, filter '$FILTER', busy polling${GPU_BLOCKS:+, --gpu-blocks $GPU_BLOCKS}${BATCH:+, --batch $BATCH}${EXTRA:+, $EXTRA}"
	echo
	echo "| RX lcores | backend | offered Mpps/queue | received Mpps | p50 us | p99 us | p99.9 us | mean batch | executor us/batch | submit-to-done us/batch | submit-to-done p50 / p99 us | executor p50 / p99 us | in p50 / p99 us | back p50 / p99 us | packets per poll | poll gaps >= 10 / 50 us per s per queue, time lost % | no-gap p50 / p99 us (share) | drops | CPU cores |"
	echo "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"
} >"$md"
for q in $QUEUES; do
	for be in $BACKENDS; do
		case $be in
		cpu) args="--backend cpu" ;;
		gpu-host) args="--backend gpu --mem host ${GPU_BLOCKS:+--gpu-blocks $GPU_BLOCKS}" ;;
		gpu-copy) args="--backend gpu --mem copy ${GPU_BLOCKS:+--gpu-blocks $GPU_BLOCKS}" ;;
		*) echo "unknown backend $be" >&2; exit 1 ;;
		esac
		for r in $RATES; do
			pps=$(python3 -c "print(int($r * 1e6))")
			j=$tmp/$q-$be-$r.json
			# shellcheck disable=SC2086
			if ! timeout $((SECS + 60)) "$G" -q -i net_null0,size=64,copy=$NULL_COPY --queues "$q" $args \
				--busy-poll --duration "$SECS" --rx-rate "$pps" ${BATCH:+--batch $BATCH} ${EXTRA:-} \
				--summary-json "$j" -w /dev/shm/gcap-lat.pcap "$FILTER" >"$tmp/log" 2>&1; then
				{ echo "run failed: q=$q $be $r Mpps"; cat "$tmp/log"; } >&2
				continue
			fi
			rm -f /dev/shm/gcap-lat.pcap
			python3 - "$j" "$q" "$be" "$r" "$commit" "$md" >>"$jsonl" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
q, be, r = int(sys.argv[2]), sys.argv[3], sys.argv[4]
lat, dr, pt, gp = d['latency_us'], d['dropped'], d['latency_parts_us'], d['poll_gaps']
ng = d['latency_no_gap_us']
drops = dr['pipeline_full'] + dr['writer_behind']
with open(sys.argv[6], 'a') as md:
    md.write(f"| {q} | {be} | {r} | {d['rx_mpps']:.2f} | {lat['p50']} | {lat['p99']} | "
             f"{lat['p999']} | {d['batch_mean']} | {d['exec_us_mean']} | {d['cycle_us_mean']} | "
             f"{pt['cycle_p50']} / {pt['cycle_p99']} | {pt['exec_p50']} / {pt['exec_p99']} | "
             f"{pt['in_p50']} / {pt['in_p99']} | {pt['back_p50']} / {pt['back_p99']} | "
             f"{d['pkts_per_poll']} | {gp['ge10us_per_s']} / {gp['ge50us_per_s']}, {gp['time_pct']} | "
             f"{ng['p50']} / {ng['p99']} ({100 * ng['share']:.1f}%) | "
             f"{drops} | {d['cores_used']} |\n")
d.update(lcores=q, config=be, offered_mpps_per_queue=float(r), commit=sys.argv[5])
print(json.dumps(d))
PY
		done
	done
done
rm -rf "$tmp"
cat "$md"
