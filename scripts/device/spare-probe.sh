#!/usr/bin/env bash
# Are the extra poll gaps under load (more than bench/lcore_jitter sees on
# an idle machine) the RX lcores' own long iterations, or does the
# platform stall every CPU more while a capture runs? bench/lcore_jitter
# probes the CPUs the capture does not use (SPARE_CPUS) while nothing
# runs, then while a busy-poll capture held at a rate runs on the others
# (taskset PROBE_CAPTURE_CPUS: main lcore, RX lcores, writer), for each
# backend. If the spare CPUs stall as often with the capture as without,
# the extra gaps on the RX lcores come from the lcores' own work; if they
# stall more, from the machine under load. A backend with -huge (cpu-huge,
# gpu-host-huge) runs with 2 GiB of 2 MiB huge pages reserved, so that
# the mempools lie in huge pages (without, gpu-capture falls back to
# ordinary pages, EAL --no-huge).
# Args: the bundle directory, the output directory. env: PROBE_QUEUES (8),
# PROBE_RATE (Mpps per queue, 15), PROBE_SECS (4), PROBE_BACKENDS,
# SPARE_CPUS (10-15), PROBE_CAPTURE_CPUS (0-9).
set -uo pipefail
b=$(cd "$1" && pwd) out=$2
source "$b/env.sh"
G=$b/bin/gpu-capture J=$b/bin/lcore_jitter
q=${PROBE_QUEUES:-8} secs=${PROBE_SECS:-4}
spare=${SPARE_CPUS:-10,11,12,13,14,15} ccpus=${PROBE_CAPTURE_CPUS:-0-9}
pps=$(python3 -c "print(int(${PROBE_RATE:-15} * 1e6))")
hdr='| CPU | loops (M/s) | stalls >= 2 us /s | >= 5 us /s | >= 10 us /s | >= 20 us /s | >= 50 us /s | longest (us) | time lost (%) |'
{
echo "# spare CPUs' stalls with and without a capture ($q queues, ${PROBE_RATE:-15} Mpps each, capture on CPUs $ccpus, probe on $spare, $secs s, commit $(cat "$b/COMMIT"))"
for be in ${PROBE_BACKENDS:-idle gpu-host cpu idle}; do
	case ${be%-huge} in
	cpu) args="--backend cpu" ;;
	gpu-host) args="--backend gpu --mem host" ;;
	idle) args= ;;
	esac
	hp0=$(cat /proc/sys/vm/nr_hugepages)
	case $be in *-huge) echo $((hp0 + 1024)) >/proc/sys/vm/nr_hugepages ;; esac
	echo; echo "## $be (huge pages: $(cat /proc/sys/vm/nr_hugepages) reserved)"; echo
	if [ "$be" != idle ]; then
		# shellcheck disable=SC2086
		( cd /tmp && timeout 60 taskset -c "$ccpus" "$G" -v -i net_null0,size=64,copy=1 --queues "$q" $args \
			--busy-poll --rx-rate "$pps" --duration $((secs + 3)) --summary-json /tmp/probe.json \
			-w /dev/shm/gcap-probe.pcap 'tcp port 80 or udp port 53' ) >/tmp/probe.log 2>&1 &
		cap=$!
		sleep 1.5 # EAL, the GPU context and the kernel's start
		grep HugePages_Free /proc/meminfo >/tmp/probe-hp.txt
	fi
	echo "$hdr"; echo '|---|---:|---:|---:|---:|---:|---:|---:|---:|'
	"$J" "$secs" "$spare" | grep -E '^\| [0-9m]'
	if [ "$be" != idle ]; then
		wait $cap; rc=$?
		echo; echo "capture rc=$rc; huge pages free during the run: $(grep -m1 HugePages_Free /tmp/probe-hp.txt 2>/dev/null)"
		python3 -c "import json; d=json.load(open('/tmp/probe.json')); print('capture: rx %.2f Mpps, p50/p99 %s/%s us, RX lcores poll gaps %s' % (d['rx_mpps'], d['latency_us']['p50'], d['latency_us']['p99'], d['poll_gaps']))" ||
			tail -5 /tmp/probe.log
		rm -f /tmp/probe.json /dev/shm/gcap-probe.pcap
	fi
	echo "$hp0" >/proc/sys/vm/nr_hugepages
done
} 2>&1 | tee "$out/spare-probe.md"
