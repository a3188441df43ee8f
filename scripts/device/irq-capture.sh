#!/usr/bin/env bash
# What the guest kernel does to the RX lcores' CPUs while gpu-capture runs
# (beside bench/lcore_jitter's idle probe): interrupts, softirqs and steal
# time per CPU over a busy-poll capture held at a rate, for each backend,
# with the capture's own poll gaps. Are the extra gaps under load (more
# than lcore_jitter sees) interrupts that the capture itself causes (TLB
# shootdowns, function calls, the GPU's)?
# Args: the bundle directory, the output directory. env: IRQ_QUEUES (8),
# IRQ_RATE (Mpps per queue, 15), IRQ_SECS (3), IRQ_BACKENDS.
set -uo pipefail
b=$(cd "$1" && pwd) out=$2
source "$b/env.sh"
G=$b/bin/gpu-capture
q=${IRQ_QUEUES:-8} secs=${IRQ_SECS:-3}
pps=$(python3 -c "print(int(${IRQ_RATE:-15} * 1e6))")
{
echo "# interrupts on the CPUs during a capture ($q queues, ${IRQ_RATE:-15} Mpps each, $secs s, commit $(cat "$b/COMMIT"))"
for be in ${IRQ_BACKENDS:-cpu gpu-host idle}; do
	case $be in
	cpu) args="--backend cpu" ;;
	gpu-host) args="--backend gpu --mem host" ;;
	idle) args= ;;
	esac
	echo; echo "## $be"; echo
	cat /proc/interrupts >/tmp/irq0; cat /proc/softirqs >/tmp/sirq0; grep '^cpu[0-9]' /proc/stat >/tmp/stat0
	if [ "$be" = idle ]; then
		sleep "$secs"
	else
		# shellcheck disable=SC2086
		( cd /tmp && timeout 60 "$G" -v -i net_null0,size=64,copy=1 --queues "$q" $args --busy-poll \
			--rx-rate "$pps" --duration "$secs" --summary-json /tmp/irq.json \
			-w /dev/shm/gcap-irq.pcap 'tcp port 80 or udp port 53' ) >/tmp/irq.log 2>&1
		echo "rc=$? $(grep -iE 'lcore|cpu' /tmp/irq.log | head -3 | tr '\n' ' ')"
		python3 -c "import json; d=json.load(open('/tmp/irq.json')); print('rx %.2f Mpps, p50/p99 %s/%s us, poll gaps %s, RX lcore threads %s' % (d['rx_mpps'], d['latency_us']['p50'], d['latency_us']['p99'], d['poll_gaps'], d['rx_lcores']))"
		rm -f /tmp/irq.json /dev/shm/gcap-irq.pcap
	fi
	cat /proc/interrupts >/tmp/irq1; cat /proc/softirqs >/tmp/sirq1; grep '^cpu[0-9]' /proc/stat >/tmp/stat1
	echo
	python3 "$b/root/scripts/device/irqdiff.py" "$secs" 0,1,2,3,4,5,6,7,8,9
done
} 2>&1 | tee "$out/irq-capture.md"
