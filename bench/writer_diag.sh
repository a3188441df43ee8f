#!/usr/bin/env bash
# Why the writer's rate on 64-byte frames differs from run to run (the
# emulated NIC's gpunic64 rows, bench/gpunic_bench.sh): the same capture
# in rounds, the output on tmpfs (/dev/shm) and on /dev/null in turns,
# and per run what the writer thread did for one second in the middle:
# records written per second, the CPU it took (and its I/O thread,
# gcap-writer-io, where the build has one), its page faults, its
# involuntary context switches, its voluntary ones (each a sleep: waiting
# for the I/O thread's ring or for records) and its I/O thread's (each a
# sleep: nothing to write, or in the kernel's write), the writer's waits
# for its I/O thread with every buffer full over the whole run (the
# summary's io_wait_seconds and io_waits), the CPUs it ran on
# (sampled every 50 ms) and, where perf is installed, where each thread's
# time went (software clock) and, with WAITS=1, where each went to sleep
# (the kernel stacks of its switches out, the scheduler's own frames left
# out).
# env: GPU_CAPTURE, BUILDS ("LABEL=PATH ...": several gpu-captures in
#      turns within each round; default "this=$GPU_CAPTURE"), ROUNDS (4), SECS (3), CASES ("gpu cpu": --mem gpu,
#      the cpu backend), OUTS ("shm null"; dir: into CAP_DIR, e.g. another
#      mount), FEEDERS (4), QUEUES (8),
#      PERF (1: profile the writer's threads when perf exists), WAITS (0;
#      1: where they sleep, perf's sched_switch tracepoint), GPUNIC_ARGS (more
#      port arguments, e.g. ",agent=cpu" where there is no GPU), ARGS
#      (more gpu-capture options, e.g. --no-time-order), PCAP (another
#      capture to loop instead of the 64-byte frames, e.g. the mixed one).
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
G=${GPU_CAPTURE:-$here/../build/apps/gpu-capture}
t=$(mktemp -d)
trap 'rm -rf "$t"; rm -f /dev/shm/gcap-wdiag.pcap ${CAP_DIR:+"$CAP_DIR/gcap-wdiag.pcap"}' EXIT
src=${PCAP:-$t/flows64.pcap}
[ -n "${PCAP:-}" ] || python3 "$here/flows64.py" "$src" || exit 1
perf=
[ "${PERF:-1}" = 1 ] && command -v perf >/dev/null && perf=perf
echo "## the writer on ${PCAP:+$(basename "$PCAP"), not }64-byte frames (gpunic64, ${QUEUES:-8} queues, feeders=${FEEDERS:-4}, ${SECS:-3} s a run${ARGS:+, $ARGS})"
echo
grep -H . /sys/kernel/mm/transparent_hugepage/enabled \
	/sys/kernel/mm/transparent_hugepage/shmem_enabled 2>/dev/null | sed 's/^/    /'
echo
echo "| round | build | backend | output | Mpps | written M/s | writer CPU | I/O thread CPU | minor faults/s | involuntary switches/s | voluntary switches/s | I/O thread's voluntary switches/s | storage waits, whole run: s (times) | writer's CPUs |"
echo "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"
# one thread's minflt, utime+stime (ticks), CPU now, from its stat
tstat() { awk '{ sub(/.*\) /, ""); print $8, $12 + $13, $37 }' "$1" 2>/dev/null; }
nvcs() { awk '/^nonvoluntary_ctxt_switches/ { print $2 }' "$1" 2>/dev/null; }
vcs() { awk '/^voluntary_ctxt_switches/ { print $2 }' "$1" 2>/dev/null; }
for r in $(seq "${ROUNDS:-4}"); do
	for bl in ${BUILDS:-this=$G}; do
	for be in ${CASES:-gpu cpu}; do
		for o in ${OUTS:-shm null}; do
			m=(--backend cpu)
			[ "$be" = gpu ] && m=(--backend gpu --mem gpu)
			w=/dev/null
			[ "$o" = shm ] && w=/dev/shm/gcap-wdiag.pcap
			[ "$o" = dir ] && w=${CAP_DIR:?OUTS dir needs CAP_DIR}/gcap-wdiag.pcap
			j=$t/s.json
			(cd /tmp && exec timeout 60 "${bl#*=}" -i "gpunic0,rx_pcap=$src,loop=1,feeders=${FEEDERS:-4}${GPUNIC_ARGS:-}" \
				--queues "${QUEUES:-8}" "${m[@]}" --busy-poll --backpressure \
				--duration "${SECS:-3}" --summary-json "$j" ${ARGS:-} -w "$w" 'tcp port 80 or udp port 53') \
				>"$t/log" 2>&1 &
			pid=$!
			tid='' cpid=''
			for _ in $(seq 300); do
				cpid=$(pgrep -P "$pid" | head -1)
				[ -n "$cpid" ] && tid=$(grep -lx 'gcap-writer' /proc/"$cpid"/task/*/comm 2>/dev/null |
					head -1 | sed 's,.*/task/\([0-9]*\)/comm,\1,')
				[ -n "$tid" ] && break
				sleep 0.02
			done
			row="| $r | ${bl%%=*} | $be | $o |"
			if [ -n "$tid" ]; then
				st=/proc/$cpid/task/$tid/stat
				iot=$(grep -lx 'gcap-writer-io' /proc/"$cpid"/task/*/comm 2>/dev/null |
					head -1 | sed 's,/comm$,/stat,')
				iotid=${iot%/stat}
				iotid=${iotid##*/}
				tids=$tid${iotid:+,$iotid}
				sleep 0.5
				read -r f0 c0 _ < <(tstat "$st")
				io0=0 io1=0
				[ -n "$iot" ] && read -r _ io0 _ < <(tstat "$iot")
				s0=$(nvcs "/proc/$cpid/task/$tid/status")
				v0=$(vcs "/proc/$cpid/task/$tid/status")
				iv0=0 iv1=0
				[ -n "$iot" ] && iv0=$(vcs "${iot%stat}status")
				ppid='' wpid=''
				if [ -n "$perf" ]; then
					$perf record -q -e cpu-clock -F 2999 -t "$tids" -o "$t/perf.data" \
						-- sleep 1 >/dev/null 2>&1 &
					ppid=$!
					if [ "${WAITS:-0}" = 1 ]; then
						$perf record -q -e sched:sched_switch -g -t "$tids" \
							-o "$t/waits.data" -- sleep 1 >/dev/null 2>&1 &
						wpid=$!
					fi
				fi
				cpus=
				for _ in $(seq 20); do
					read -r _ _ c < <(tstat "$st")
					cpus="$cpus $c"
					sleep 0.05
				done
				[ -n "$ppid" ] && wait "$ppid"
				[ -n "$wpid" ] && wait "$wpid"
				read -r f1 c1 _ < <(tstat "$st")
				[ -n "$iot" ] && read -r _ io1 _ < <(tstat "$iot")
				[ -n "$iot" ] && iv1=$(vcs "${iot%stat}status")
				s1=$(nvcs "/proc/$cpid/task/$tid/status")
				v1=$(vcs "/proc/$cpid/task/$tid/status")
				hz=$(getconf CLK_TCK)
				cpus=$(tr ' ' '\n' <<<"$cpus" | grep . | sort -n | uniq -c | awk '{ printf "%s%s:%s", s, $2, $1; s = " " }')
				extra=$(awk -v f="$((f1 - f0))" -v c="$((c1 - c0))" -v s="$((${s1:-0} - ${s0:-0}))" -v v="$((${v1:-0} - ${v0:-0}))" -v hz="$hz" \
					-v io="$((io1 - io0))" -v hasio="${iot:+1}" -v iv="$((${iv1:-0} - ${iv0:-0}))" \
					'BEGIN { printf "%.2f | %s | %.0f | %.0f | %.0f | %s", c / hz, hasio ? sprintf("%.2f", io / hz) : "-", f, s, v, hasio ? sprintf("%.0f", iv) : "-" }')
			else
				extra="? | ? | ? | ? | ? | ?" cpus='?'
			fi
			wait "$pid"
			rc=$?
			python3 - "$j" "$rc" "$row" "$extra" "$cpus" <<'PY'
import json, sys
j, rc, row, extra, cpus = sys.argv[1:]
try:
    d = json.load(open(j))
except Exception:
    print(f'{row} failed (rc {rc}) ||||||||||')
    sys.exit()
print(f'{row} {d["rx_mpps"]:.2f} | {d["written"] / d["seconds"] / 1e6:.2f} | {extra} | '
      f'{d["io_wait_seconds"]:.3f} ({d["io_waits"]}) | {cpus} |')
PY
			if [ -n "$perf" ] && [ -s "$t/perf.data" ]; then
				for th in "writer:$tid" "I/O thread:$iotid"; do
					[ -n "${th#*:}" ] || continue
					perf report -i "$t/perf.data" --tid "${th#*:}" --no-children --sort dso,sym --stdio 2>/dev/null |
						grep -v '^#' | grep '%' | head -8 >"$t/prof"
					echo "|  |  |  |  | ${th%:*} profile: $(awk '{ $1 = $1; printf "%s%s", s, $0; s = "; " }' "$t/prof") ||||||||||"
				done
			fi
			if [ -n "$perf" ] && [ -s "$t/waits.data" ]; then
				# per thread, the three innermost frames below the
				# scheduler's own of each switch out, most frequent first
				perf script -i "$t/waits.data" -F tid,ip,sym 2>/dev/null | awk -v w="$tid" '
					/^ *[0-9]+ *$/ { flush(); th = ($1 == w) ? "writer" : "I/O thread"; n = 0; key = ""; next }
					NF == 0 { next }
					{ f = $NF
					  if (f ~ /^(__)?schedule|^__traceiter|^__perf|^perf_|^trace_|^finish_task|^__switch_to|^\[unknown\]$/ && n == 0) next
					  if (n < 3) { key = key (n ? " < " : "") f; n++ } }
					function flush() { if (key != "") c[th ": " key]++ }
					END { flush(); for (k in c) print c[k], k }' |
					sort -rn | head -8 >"$t/waits"
				echo "|  |  |  |  | sleeps (switches out, 1 s): $(awk '{ n = $1; $1 = ""; printf "%s%s x%s", s, substr($0, 2), n; s = "; " }' "$t/waits") ||||||||||"
			fi
			rm -f "$j" "$t/perf.data" "$t/waits.data" /dev/shm/gcap-wdiag.pcap ${CAP_DIR:+"$CAP_DIR/gcap-wdiag.pcap"}
		done
	done
	done
done
