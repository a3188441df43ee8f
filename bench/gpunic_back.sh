#!/usr/bin/env bash
# Where the mixed capture's p99 goes on the way back (submit-to-done less
# the GPU's notice and the executor's time: the batch's stores to host
# memory released with DONE, and the RX lcore seeing it): the emulated
# NIC looping mix-en10mb.pcap, 8 queues, --mem gpu, busy polling, held at
# a fixed rate per queue, with filters that write large records, small
# ones and none; per run the rate, records and file bytes written per
# second, the p99 and its parts, and the mean batch.
# env: GPU_CAPTURE, MIX_PCAP, RATE (3400000 a queue: about half the
#      lossless rate of that capture on the H200), SECS (3), QUEUES (8),
#      ROUNDS (2)
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
G=$(realpath "${GPU_CAPTURE:-$here/../build/apps/gpu-capture}")
MIX=$(realpath "${MIX_PCAP:-$here/../../shared/data/bench/mix-en10mb.pcap}")
t=$(mktemp -d)
trap 'rm -rf "$t"; rm -f /dev/shm/gcap-back.pcap' EXIT
echo "| filter | Mpps | written M/s | file MB/s | p99 us | p99: submit-to-done / in / exec / back | back p50 | mean batch |"
echo "|---|---|---|---|---|---|---|---|"
for r in $(seq "${ROUNDS:-2}"); do
	for f in 'tcp port 80 or udp port 53' 'udp port 53' 'tcp port 80' 'ip proto 253' 'greater 1600' 'less 200'; do
		(cd /tmp && exec timeout 60 "$G" -i "gpunic0,rx_pcap=$MIX,loop=1" --queues "${QUEUES:-8}" \
			--backend gpu --mem gpu --busy-poll --rx-rate "${RATE:-3400000}" --duration "${SECS:-3}" \
			--summary-json "$t/s.json" -w /dev/shm/gcap-back.pcap "$f") >"$t/log" 2>&1 ||
			{ echo "| $f | failed: $(tail -1 "$t/log") |||||||"; continue; }
		fb=$(stat -c %s /dev/shm/gcap-back.pcap 2>/dev/null || echo 0)
		python3 - "$t/s.json" "$f" "$fb" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
p = d['latency_parts_us']
print(f"| {sys.argv[2]} | {d['rx_mpps']:.2f} | {d['written'] / d['seconds'] / 1e6:.3f} | "
      f"{int(sys.argv[3]) / d['seconds'] / 1e6:.0f} | {d['latency_us']['p99']} | "
      f"{p['cycle_p99']} / {p['in_p99']} / {p['exec_p99']} / {p['back_p99']} | {p['back_p50']} | {d['batch_mean']} |")
PY
		rm -f /dev/shm/gcap-back.pcap
	done
done
