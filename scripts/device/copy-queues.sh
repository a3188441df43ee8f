#!/usr/bin/env bash
# Copy mode with many queues on one GPU, where the blocks polling their
# doorbells and the copy streams compete for the copy engines: lossless
# runs at growing queue counts, per-queue packets, variants side by side.
# Args: the bundle directory, the output directory.
set -uo pipefail
b=$1 out=$2
G=$b/bin/gpu-capture
run() { # label env... -- gpu-capture args
	local label=$1; shift
	local envs=()
	while [ "$1" != -- ]; do envs+=("$1"); shift; done; shift
	( cd /tmp && env "${envs[@]}" timeout 60 "$G" -i net_null0,size=64,copy=1 --backend gpu --mem ${CQ_MEM:-copy} \
		--busy-poll --duration ${CQ_SECS:-3} --summary-json /tmp/cq.json -w /dev/shm/gcap-cq.pcap "$@" \
		'tcp port 80 or udp port 53' ) >/tmp/cq.log 2>&1
	echo "$label rc=$? $(python3 -c "
import json; d=json.load(open('/tmp/cq.json'))
print('%.2f Mpps, exec us/batch %.1f, batch %.1f, p50/p99 %s/%s us, drops %s, per queue Mpps %s' % (d['rx_mpps'], d['exec_us_mean'], d['batch_mean'], d['latency_us']['p50'], d['latency_us']['p99'], d['dropped']['pipeline_full'], [round(x['rx']/d['seconds']/1e6,2) for x in d['queues']]))" 2>&1) $(grep -v '^gpucap.gpu' /tmp/cq.log | tail -2 | tr '\n' ' ')"
	rm -f /tmp/cq.json /dev/shm/gcap-cq.pcap*
}
# CQ_VARIANTS: "label:ENV=V,ENV=V:extra args;label:..." (parts may be empty)
IFS=';' read -ra variants <<<"${CQ_VARIANTS:-default::}"
{
for q in ${CQ_QUEUES:-8 14 28}; do
	for v in "${variants[@]}"; do
		IFS=: read -r label envs extra <<<"$v"
		# shellcheck disable=SC2086
		run "${CQ_MEM:-copy} --gpu 0 --queues $q, $label" $(echo "$envs" | tr ',' ' ') -- --gpu 0 --queues $q --backpressure $extra
	done
done
} 2>&1 | tee -a "$out/copy-queues.log"
