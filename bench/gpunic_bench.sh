#!/usr/bin/env bash
# The emulated GPUDirect NIC (docs/gpu.md) on one machine, in one call, on
# the same lcores: the NIC's own floor (bench/rx_floor: receive, the
# driver's work on the RX lcore included, and free),
# with the cpu backend's host pools and with --mem gpu's VRAM pools (whose
# rooms hold any frame whole), each with one feeding thread a queue (the
# most the NIC delivers), and --mem gpu's again with the NIC's default
# feeding threads (those the capture rows get), the cpu backend, the gpu backend with --mem host and with --mem gpu
# (data rooms in VRAM); 1 and 8 RX lcores; 64-byte frames (gpunic64) and
# the mixed sizes of mix-en10mb.pcap whose frames fit a data room (gpunic,
# as gpu_capture.sh has it); one filter, then 64
# (8 lcores); lossless rate and p99 RX-to-verdict at half that rate
# (bench/gpu_capture.sh). Then one lcore of --mem gpu with and without
# cuFlushGPUDirectRDMAWrites before each doorbell (GCAP_GPU_WMB).
# Last, what bounds the rows (diag() below).
# env: as bench/gpu_capture.sh (GPU_CAPTURE, RX_FLOOR, MIX_PCAP, SECS),
#      OUT_DIR (results), QUEUES ("1 8"), SOURCES ("gpunic64 gpunic";
#      gpunicN: N-byte frames, as gpu_capture.sh's),
#      ONLY=diag (the last part alone), PARTS (the parts to run, of "one
#      sixtyfour wmb diag": one filter, 64 filters, GCAP_GPU_WMB, what
#      bounds the rows; default all),
#      DIAG_RUNS, DIAG_SECS (2; at least 2: threads are sampled for 1 s), GPUNIC_ARGS and
#      CAP_DIR (as gpu_capture.sh's: where the captures write), ALT_CAP_DIR
#      (where diag's alt variant writes)
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
OUT=${OUT_DIR:-$here/results}
mkdir -p "$OUT"
md=$OUT/gpunic-bench.md
Q=${QUEUES:-1 8}
S=${SOURCES:-gpunic64 gpunic}
G=${GPU_CAPTURE:-$here/../build/apps/gpu-capture}
F=${RX_FLOOR:-$(dirname "$G")/rx_floor}
[ -x "$F" ] || F=$here/../build/bench/rx_floor
W=${WRITER_BENCH:-$(dirname "$G")/writer_bench}
[ -x "$W" ] || W=$here/../build/bench/writer_bench
O=${PCAP_ORDER:-$(dirname "$G")/pcap_order}
[ -x "$O" ] || O=$here/../build/bench/pcap_order
MIX=${MIX_PCAP:-$here/../../shared/data/bench/mix-en10mb.pcap}
source "$here/gpunic_sources.sh"
: >"$md"
# What bounds a row: the same capture (8 lcores by default) as the bench
# (--backpressure), then with one thing changed: --no-time-order (the
# writer's merge), without --backpressure (what falls behind drops and is
# counted by cause: pipeline_full the executor, writer_behind the writer),
# a filter that matches nothing (no writer), fN: feeders=N, sN: -s N, alt: the capture
# written into ALT_CAP_DIR instead of CAP_DIR (another mount), wload: a
# writer_bench beside the capture from before its start to after its end,
# writing 64-byte records with its I/O thread into the capture's directory
# (CAP_DIR, or ALT_CAP_DIR with alt): a writer's two threads and its memory
# traffic without the capture's writer (none+wload); its rate is the median
# of its runs over that whole time, start and exit included; spin: two
# busy threads beside it instead (CPUs taken, no memory traffic); one of
# wload and spin a run (the last named); devnull: the capture written to
# /dev/null (the writer thread at its work, its I/O thread's writes costing
# nothing, no file's pages filled: no file, so no order or bytes); several joined
# by + (none+f8: no writer and 8 feeding threads); floor: rx_floor -v
# instead of a capture, on the backend's pools (the NIC's counters of a
# port that only receives and frees, beside the captures'). Per run: the rate,
# records and bytes written per second, drops, cores, batch and burst sizes, the CPU
# each kind of thread took (bench/thread_cpu.py: RX lcores, feeding
# threads, the writer), the file's time order (order_forced: records the
# merge wrote without waiting for every queue; bench/pcap_order: records
# below a time written before them, and the most any is), the writer's
# waits for its I/O thread with every buffer full (io_wait_seconds,
# io_waits), the time the ports waited under --backpressure for the
# writer's export room and for the executor's slots (summed over the
# queues) and the NIC's counters summed over the queues
# (-v: launches, mean packets a launch, waits for buffers handed out, RX ring room, a
# free slot). DIAG_RUNS: "SOURCE:LCORES:BACKEND:VARIANT ..." (BACKEND cpu,
# gpu: --mem gpu, host: --mem host; VARIANT base noorder nobp none fN
# sN (-s N: records cut to N bytes) alt wload spin devnull floor, or several joined
# by +). WRITER_BENCH: writer_bench (next to GPU_CAPTURE by default).
# the loads beside the current run (wload, spin) and writer_bench's file:
# gone however the run ends, or they would outlive it
LOADS=() LOAD_FILE=
stop_loads() {
	[ ${#LOADS[@]} -gt 0 ] && kill "${LOADS[@]}" 2>/dev/null && wait "${LOADS[@]}" 2>/dev/null
	LOADS=()
	[ -n "$LOAD_FILE" ] && rm -f "$LOAD_FILE"
	LOAD_FILE=
}
# the capture (or rx_floor) running now: timeout puts it in a process
# group of its own, out of a Ctrl-C's reach, so the script's exit stops
# it (timeout passes the SIGINT on: it ends as on a Ctrl-C of its own);
# it runs in the background so that the trap runs at once
CAP_PID=
stop_capture() {
	[ -n "$CAP_PID" ] && kill -INT "$CAP_PID" 2>/dev/null && wait "$CAP_PID" 2>/dev/null
	CAP_PID=
}
diag() {
	local t j log src q be v m x f flt nic
	# set here: diag may run in a pipeline's subshell, which has no traps
	trap 'stop_capture; stop_loads; rm -rf "$t"; rm -f "${CAP_DIR:-/dev/shm}/gpunic-diag.pcap" ${ALT_CAP_DIR:+"$ALT_CAP_DIR/gpunic-diag.pcap"}' EXIT
	trap 'exit 130' INT TERM
	t=$(mktemp -d)
	echo "## what bounds the rows (gpu-capture -v, the floor rx_floor -v, ${DIAG_SECS:-2} s a run; threads: CPUs used over 1 s)"
	echo
	echo "| source | lcores | backend | variant | Mpps | written M/s | written MB/s | drops pipeline / writer / chained | cores | batch | pkts a poll | forced | out of order | most ms back | storage waits: s (times) | ports waited for the writer / executor: s | NIC: pkts a launch, us to completion, waits buffers / ring / slot |"
	echo "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"
	for run in ${DIAG_RUNS:-gpunic64:8:gpu:floor gpunic64:8:cpu:base gpunic64:8:cpu:noorder gpunic64:8:cpu:nobp gpunic64:8:cpu:none gpunic64:8:gpu:base gpunic64:8:gpu:noorder gpunic64:8:gpu:nobp gpunic64:8:gpu:none gpunic64:8:gpu:f8 gpunic64:8:cpu:none+f8 gpunic64:8:gpu:none+f8 gpunic:8:cpu:base gpunic:8:cpu:f8 gpunic:8:cpu:noorder gpunic:8:gpu:base gpunic:8:gpu:noorder gpunic:8:gpu:nobp gpunic:8:gpu:none gpunic:8:gpu:f8}; do
		IFS=: read -r src q be v <<<"$run"
		f=$(gpunic_pcap "$src" "$t" "$MIX") || return 1
		m=(--backend cpu)
		[ "$be" = gpu ] && m=(--backend gpu --mem gpu)
		[ "$be" = host ] && m=(--backend gpu --mem host)
		x=() flt='tcp port 80 or udp port 53' nic=
		local one bp=1 floor=0 dir=${CAP_DIR:-/dev/shm} load='' out=''
		for one in ${v//+/ }; do
			case $one in
			floor) floor=1 ;;
			noorder) x+=(--no-time-order) ;;
			nobp) bp=0 ;;
			none) flt='ip proto 253' ;;
			f[0-9]*) nic=,feeders=${one#f} ;;
			s[0-9]*) x+=(-s "${one#s}") ;;
			alt) dir=${ALT_CAP_DIR:?ALT_CAP_DIR: where the alt variant writes} ;;
			wload | spin) load=$one ;;
			devnull) out=/dev/null ;;
			esac
		done
		[ "$bp" = 1 ] && x+=(--backpressure)
		j=$t/s.json log=$t/log out=${out:-$dir/gpunic-diag.pcap}
		local thr='' rc fb=0 ord='- - -'
		[ "$out" = /dev/null ] && fb=-
		if [ "$floor" = 1 ]; then
			local fm=()
			[ "$be" = gpu ] && fm=(--mem gpu)
			(cd /tmp && exec timeout 60 "$F" -v -t "${DIAG_SECS:-2}" -q "$q" "${fm[@]}" --json "$j" \
				-i "gpunic0,rx_pcap=$f,loop=1${GPUNIC_ARGS:-}$nic") >"$log" 2>&1 &
			CAP_PID=$!
			wait "$CAP_PID"
			rc=$?
			CAP_PID=
		else
			if [ "$load" = wload ] && [ ! -x "$W" ]; then
				echo "| $src | $q | $be | $v | failed: no writer_bench at $W (WRITER_BENCH) |||||||||||||"
				continue
			fi
			if [ "$load" = wload ]; then
				LOAD_FILE=$dir/gpunic-wload.pcap
				"$W" --out "$LOAD_FILE" --size 64 --records 5000000 \
					--rounds 100000 --only yes >"$t/wload" 2>&1 &
				LOADS=($!)
			elif [ "$load" = spin ]; then
				for _ in 1 2; do
					sh -c 'while :; do :; done' &
					LOADS+=($!)
				done
			fi
			(cd /tmp && exec timeout 60 "$G" -v -i "gpunic0,rx_pcap=$f,loop=1${GPUNIC_ARGS:-}$nic" --queues "$q" "${m[@]}" \
				--busy-poll "${x[@]}" --duration "${DIAG_SECS:-2}" --summary-json "$j" \
				-w "$out" "$flt") >"$log" 2>&1 &
			CAP_PID=$!
			local pid=$CAP_PID cpid='' _
			for _ in $(seq 50); do
				cpid=$(pgrep -P "$pid" | head -1) && break
				sleep 0.02
			done
			[ -n "$cpid" ] && thr=$(python3 "$here/thread_cpu.py" "$cpid" --after gcap-writer --secs 1)
			wait "$pid"
			rc=$?
			CAP_PID=
			if [ -n "$load" ]; then
				stop_loads
				# writer_bench's runs beside the capture: M records/s
				[ "$load" = wload ] && thr+="; writer_bench beside it: $(awk -F'|' \
					'$3 ~ /yes/ { print $4 + 0 }' "$t/wload" | sort -n | awk \
					'{ v[NR] = $1 } END { if (NR) printf "%.1f (%.1f-%.1f, %d runs) M records/s", v[int((NR + 1) / 2)], v[1], v[NR], NR
					else printf "no run finished" }')"
			fi
			# the file's bytes: large records bound the writer by what
			# it copies, not by how many
			if [ "$out" != /dev/null ]; then
				fb=$(stat -c %s "$out" 2>/dev/null || echo 0)
				ord=$("$O" "$out" 2>/dev/null) || ord='- - -'
			fi
		fi
		python3 - "$j" "$log" "$src" "$q" "$be" "$v" "$rc" "$fb" "$ord" <<'PY'
import json, re, sys
j, log, src, q, be, v, rc, fb, ord_ = sys.argv[1:]
try:
    d = json.load(open(j))
except Exception:
    print(f'| {src} | {q} | {be} | {v} | failed (rc {rc}) |||||||||||||')
    sys.exit()
L = P = B = M = R = S = 0
for line in open(log, errors='replace'):
    r = re.search(r'queue \d+: (\d+) launches, ([\d.]+) us launch to completion seen, waits for buffers (\d+), for RX ring room (\d+), for a slot (\d+)', line)
    if r:
        n = int(r[1]); L += n; B += n * float(r[2])
        M += int(r[3]); R += int(r[4]); S += int(r[5])
# rx_floor's summary (the floor variant) has its packets, no writer
got = d['rx_pkts'] if 'rx_pkts' in d else d['received']
nic = f'{got / L:.0f}, {B / L:.1f}, {M} / {R} / {S}' if L else '-'
if 'rx_pkts' in d:
    print(f'| {src} | {q} | {be} | {v} | {d["rx_mpps"]:.2f} | - | - | - | {q} | - | - | - | - | - | - | - | {nic} |')
    sys.exit()
dr = d['dropped']
bw = d['backpressure_wait_seconds']
# no file behind /dev/null: no bytes to count
mbs = '-' if fb == '-' else f'{int(fb) / d["seconds"] / 1e6:.0f}'
o = ord_.split()
back, most = (o[1], f'{int(o[2]) / 1e6:.3f}') if len(o) == 3 and o[0] != '-' else ('-', '-')
print(f'| {src} | {q} | {be} | {v} | {d["rx_mpps"]:.2f} | {d["written"] / d["seconds"] / 1e6:.2f} | '
      f'{mbs} | {dr["pipeline_full"]} / {dr["writer_behind"]} / {dr["chained"]} | {d["cores_used"]} | '
      f'{d["batch_mean"]:.1f} | {d["pkts_per_poll"]:.1f} | {d["order_forced"]} | {back} | {most} | '
      f'{d["io_wait_seconds"]:.3f} ({d["io_waits"]}) | {bw["writer"]:.3f} / {bw["executor"]:.3f} | {nic} |')
PY
		[ "$floor" = 1 ] || echo "|  |  |  | threads: ${thr:-?} |||||||||||||"
		rm -f "$j"
		[ "$out" = /dev/null ] || rm -f "$out"
	done
	rm -rf "$t"
	# the traps are this function's: its locals are gone once it returns
	trap - EXIT INT TERM
}
if [ "${ONLY:-}" = diag ]; then
	diag | tee "$md"
	exit 0
fi
P=" ${PARTS:-one sixtyfour wmb diag} "
case $P in *" one "*)
SOURCES="$S" QUEUES="$Q" BACKENDS="floor floor-gpu floor-gpu-nic cpu gpu-host gpu-gpu" \
	OUT_DIR=$OUT/one bash "$here/gpu_capture.sh" >/dev/null
{ echo "## one filter"; cat "$OUT/one/gpu-capture-bench.md"; echo; } >>"$md" ;;
esac
case $P in *" sixtyfour "*)
SOURCES="$S" QUEUES=8 BACKENDS="cpu gpu-host gpu-gpu" NFILTERS=64 HALF=0 \
	OUT_DIR=$OUT/sixtyfour bash "$here/gpu_capture.sh" >/dev/null
{ echo "## 64 filters"; cat "$OUT/sixtyfour/gpu-capture-bench.md"; echo; } >>"$md" ;;
esac
case $P in *" wmb "*)
for w in 0 1; do
	GCAP_GPU_WMB=$w SOURCES=gpunic64 QUEUES=1 BACKENDS=gpu-gpu HALF=0 \
		OUT_DIR=$OUT/wmb$w bash "$here/gpu_capture.sh" >/dev/null
	{ echo "## GCAP_GPU_WMB=$w (cuFlushGPUDirectRDMAWrites before each doorbell: $w)"
	  grep '^| gpunic' "$OUT/wmb$w/gpu-capture-bench.md"; echo; } >>"$md"
done ;;
esac
case $P in *" diag "*) diag >>"$md" ;; esac
cat "$md"
