#!/usr/bin/env bash
# There (the GPU machine): run the GPU tests and benchmarks from .devbundle,
# logs to $OUT. Usage: bash .devbundle/root/scripts/device/run.sh [STEP...]
# Steps: info doctor tests unit copyloop corpus live multigpu bench order sweep latency latvar jitter jittouch phases floor rxburst soak writerslack ab ringsweep pcie pcieceil pciewrite kbench
# bpf profile writer observe ops vram kfault setupcost vrambench vramhuge vramphases writerhuge offline offfind offbatch offspans spans offz offchoice offcopy offcross filepin filebench filealign (default: info tests corpus live bench).
set -uo pipefail
b=$(cd "$(dirname "$0")/../../.." && pwd)
source "$b/env.sh"
export GCAP_SOURCE_ROOT=$b/root GCAP_INCLUDE_DIR=$b/root/include
GCAP_COMMIT=$(cat "$b/COMMIT")
export GCAP_COMMIT
export XDG_CACHE_HOME=/tmp/gcap-cache
OUT=${OUT:-/tmp/out}
mkdir -p "$OUT"
steps=${*:-info tests corpus live bench}
log() { echo "== $* ($(date +%T))"; }
# A tmpfs mounted huge=within_size at $1 for a step (root; docs/tuning.md),
# and its unmount: a capture a timeout left running may still hold a file
# there, so it is stopped first, and a mount still busy goes lazily.
huge_up() { mkdir -p "$1" && mount -t tmpfs -o "size=${HUGE_SIZE:-48g},huge=within_size,mode=0700" none "$1"; }
huge_down() {
	umount "$1" 2>/dev/null && return 0
	pkill -f -- "$1/" 2>/dev/null
	sleep 2
	umount "$1" 2>/dev/null || { umount -l "$1" && echo "$1 was busy: unmounted lazily"; }
}
for s in $steps; do
case $s in
info)
	log info
	{ nvidia-smi; nproc; grep -m1 'model name' /proc/cpuinfo; echo "commit $GCAP_COMMIT"
	  # which vCPUs share a core (SMT siblings) and a NUMA node
	  lscpu 2>/dev/null | grep -E '^(Thread|Core|Socket|NUMA|L3)'
	  for c in 0 1 2 3 8 9; do echo "cpu$c siblings: $(cat /sys/devices/system/cpu/cpu$c/topology/thread_siblings_list 2>/dev/null)"; done
	} 2>&1 | tee "$OUT/info.log" ;;
doctor)
	# the host check as a user would run it: text and JSON, exit status
	log "gpu-capture --doctor"
	{ "$b/bin/gpu-capture" --doctor; echo "doctor rc=$?"; } 2>&1 | tee "$OUT/doctor.log"
	"$b/bin/gpu-capture" --doctor --json >"$OUT/doctor.json" 2>&1
	echo "doctor --json rc=$?" | tee -a "$OUT/doctor.log"
	python3 -m json.tool "$OUT/doctor.json" >/dev/null && echo "doctor.json parses" ;;
tests)
	log "gpu suites (tests/gpu/devrun.sh: unit checks, doorbell stress, sanitizers)"
	( cd "$b/.." && OUT=$OUT STRESS=${STRESS:-2000000} bash tests/gpu/devrun.sh )
	grep -E "rc=|ERROR SUMMARY|Checks" "$OUT"/gpu-tests.log "$OUT"/gpu-sanitizer.log ;;
unit)
	# the executor's unit tests alone (tests: the whole suite with the
	# stress runs and the sanitizers)
	log "test_gpu_nodev, test_gpu"
	( cd "$b/.." && export GCAP_SOURCE_ROOT=$PWD CK_DEFAULT_TIMEOUT=120 \
		GCAP_GPU_CORPUS=$PWD/.devbundle/data/mix-en10mb.pcap GCAP_CACHE_DIR=/tmp/gcap-cache \
		GCAP_GPU_STRESS_BATCHES=${STRESS:-200000}
	  timeout 60 .devbundle/bin/test_gpu_nodev; echo "test_gpu_nodev rc=$?"
	  [ -n "${UNIT_TESTS:-}" ] && export GCAP_GPU_TESTS=$UNIT_TESTS
	  timeout 200 .devbundle/bin/test_gpu; echo "test_gpu rc=$?"
	) >"$OUT/gpu-unit.log" 2>&1
	grep -E "rc=|Checks|:F:|:E:" "$OUT/gpu-unit.log" ;;
copyloop)
	# copy mode at full rate, again and again: a submitted copy-mode slot
	# reads FREE until its copies are done, so a ring reused by status
	# would hand it out in flight ("batches still in flight" at stop);
	# lossless runs with 4 and 8 queues are where that shows
	log "copy mode, lossless runs in a loop"
	for q in ${COPY_QUEUES:-4 8}; do for i in $(seq "${COPY_RUNS:-5}"); do
		( cd /tmp && timeout 60 "$b/bin/gpu-capture" -q -i net_null0,size=64,copy=1 --queues $q \
			--backend gpu --mem copy --busy-poll --backpressure --duration 2 \
			--summary-json /tmp/copy.json -w /dev/shm/gcap-copy.pcap 'tcp port 80 or udp port 53' ) \
			>/tmp/copy.log 2>&1
		echo "queues $q run $i rc=$? $(python3 -c "import json; d=json.load(open('/tmp/copy.json')); print(d['rx_mpps'], 'Mpps, drops', d['dropped'])" 2>/dev/null) $(tail -2 /tmp/copy.log | tr '\n' ' ')"
		rm -f /tmp/copy.json /dev/shm/gcap-copy.pcap
	done; done | tee "$OUT/copy-loop.log" ;;
multigpu)
	# two GPUs (the nvidia-h200-x2 kind): the executor test across them,
	# where each queue ran (-v placement lines, nvidia-smi during the
	# run), one GPU against two on the same lcores, live equality
	log "two GPUs (--gpu 0,1)"
	{ nvidia-smi -L; nvidia-smi topo -m
	  ( cd "$b/.." && export GCAP_SOURCE_ROOT=$PWD CK_DEFAULT_TIMEOUT=120 \
		GCAP_GPU_CORPUS=$PWD/.devbundle/data/mix-en10mb.pcap GCAP_CACHE_DIR=/tmp/gcap-cache
	    GCAP_GPU_TESTS=test_multi_gpu timeout 60 .devbundle/bin/test_gpu; echo "test_multi_gpu rc=$?" )
	  for mem in host copy; do
		echo "## gpu-capture -v --gpu 0,1 --mem $mem, net_null 64 B, ${MG_QUEUES:-8} queues, lossless"
		( cd /tmp && timeout 60 "$b/bin/gpu-capture" -v -i net_null0,size=64,copy=1 --queues ${MG_QUEUES:-8} \
			--backend gpu --mem $mem --gpu 0,1 --busy-poll --backpressure --duration 5 \
			--summary-json /tmp/mg.json -w /dev/shm/gcap-mg.pcap 'tcp port 80 or udp port 53' ) >/tmp/mg.log 2>&1 &
		sleep 3.5
		nvidia-smi --query-compute-apps=gpu_bus_id,pid,used_memory --format=csv
		nvidia-smi --query-gpu=index,pci.bus_id,utilization.gpu,memory.used --format=csv
		wait; echo "rc=$?"
		grep -E "GPU [0-9]+ \(|queue\(s\) on" /tmp/mg.log
		python3 -c "import json; d=json.load(open('/tmp/mg.json')); print(d['rx_mpps'], 'Mpps, drops', d['dropped'], 'queues rx', [x['rx'] for x in d['queues']])"
		rm -f /tmp/mg.json /dev/shm/gcap-mg.pcap
	  done; } 2>&1 | tee "$OUT/multi-gpu.log"
	for g in 0 0,1; do
		EXTRA="--gpu $g" GPU_CAPTURE=$b/bin/gpu-capture MIX_PCAP=$b/shared/data/bench/mix-en10mb.pcap \
			OUT_DIR=/tmp/mg-$g SECS=${SECS:-2} SOURCES=null QUEUES="${MG_BENCH_QUEUES:-8 14 28}" \
			BACKENDS="${MG_BACKENDS:-gpu-host gpu-copy}" timeout 300 bash "$b/root/bench/gpu_capture.sh" \
			>/dev/null 2>>"$OUT/bench-stderr.log"
		{ echo "## --gpu $g"; cat /tmp/mg-$g/gpu-capture-bench.md; echo; } >>"$OUT/multi-gpu-bench.md"
	done
	cat "$OUT/multi-gpu-bench.md"
	GPUS=0,1 timeout ${LIVE_TIMEOUT:-200} bash "$b/root/scripts/device/live-eq.sh" "$b" >"$OUT/live-gpu2.log" 2>&1
	echo "live --gpu 0,1 rc=$?" | tee -a "$OUT/live-gpu2.log"; tail -3 "$OUT/live-gpu2.log" ;;
corpus)
	# (compiled filters with the reader's 3 copying threads, interpreted
	# with none: CORPUS_COPIERS gives both's)
	log "offline corpus, gpu backend"
	for mode in ${CORPUS_MODES:-compiled interp}; do for mem in ${CORPUS_MEMS:-host}; do
		i=0 cp=3; [ $mode = interp ] && i=1 cp=0
		cp=${CORPUS_COPIERS:-$cp}
		lg=$OUT/corpus-gpu-$mode-$mem.log
		( cd /tmp && CK_FORK=no GCAP_TEST_BACKEND=gpu GCAP_TEST_GPU_INTERP=$i GCAP_TEST_GPU_MEM=$mem \
			GCAP_TEST_COPIERS=$cp timeout ${CORPUS_TIMEOUT:-240} "$b/bin/test_offline_corpus" ) >"$lg" 2>&1
		echo "corpus gpu $mode $mem copiers $cp rc=$? ($SECONDS s)" | tee -a "$lg"
		head -3 "$lg"; tail -2 "$lg"
	done; done ;;
live)
	log "live equality, gpu backend"
	timeout ${LIVE_TIMEOUT:-200} bash "$b/root/scripts/device/live-eq.sh" "$b" >"$OUT/live-gpu.log" 2>&1
	echo "live rc=$?" | tee -a "$OUT/live-gpu.log"; tail -12 "$OUT/live-gpu.log" ;;
bench)
	log "capture bench"
	GPU_CAPTURE=$b/bin/gpu-capture MIX_PCAP=$b/shared/data/bench/mix-en10mb.pcap \
		OUT_DIR=$OUT SECS=${SECS:-2} timeout 420 bash "$b/root/bench/gpu_capture.sh" 2>"$OUT/bench-stderr.log"
	echo "bench rc=$?" ;;
order)
	# the writer's time-order merge at full rate: the same capture with it
	# (the default) and with --no-time-order, in turns; 8 queues, net_null
	# and net_pcap, gpu host mode (bench/time_order.sh)
	log "time order on/off"
	GPU_CAPTURE=$b/bin/gpu-capture MIX_PCAP=$b/shared/data/bench/mix-en10mb.pcap \
		OUT_DIR=$OUT SECS=${SECS:-3} timeout 420 bash "$b/root/bench/time_order.sh" 2>>"$OUT/bench-stderr.log"
	echo "order rc=$?" ;;
offline)
	# -r at storage speed: the read limit, tcpdump, the cpu and gpu
	# backends with 1, 8, 64 filters, pcapng, a compressed input
	log "offline (-r) bench"
	GPU_CAPTURE=$b/bin/gpu-capture PCAP_CMP=$b/bin/pcap-cmp \
		MIX_PCAP=$b/shared/data/bench/mix-en10mb.pcap RESULTS_DIR=$OUT MACHINE=h200 \
		SIZE_MB=${OFFLINE_MB:-2000} REPS=${OFFLINE_REPS:-3} \
		timeout ${OFFLINE_TIMEOUT:-420} bash "$b/root/bench/offline.sh" 2>"$OUT/offline-stderr.log"
	echo "offline rc=$?"; rm -rf /dev/shm/gcap-offline ;;
offfind)
	# records found ahead of the reader (--find-threads 0 2 4 8), both
	# backends, pcap and pcapng (OFFFIND_FORMATS), against cat and
	# tcpdump (bench/offline_finders.sh)
	log "offline finders bench"
	GPU_CAPTURE=$b/bin/gpu-capture PCAP_CMP=$b/bin/pcap-cmp TCPDUMP=$b/bin/tcpdump \
		MIX_PCAP=$b/shared/data/bench/mix-en10mb.pcap RESULTS_DIR=$OUT MACHINE=h200 \
		SIZE_MB=${OFFLINE_MB:-4000} REPS=${OFFLINE_REPS:-3} \
		FORMATS=${OFFFIND_FORMATS:-pcap pcapng} \
		timeout ${OFFLINE_TIMEOUT:-420} bash "$b/root/bench/offline_finders.sh" 2>"$OUT/offfind-stderr.log"
	echo "offfind rc=$?" ;;
offz)
	# compressed -r inputs: one-frame and many-frame zstd, lz4 of
	# independent and of linked blocks, each against its decompressor,
	# on the CPU sets of OFFZ_CPUS (bench/offline_compressed.sh)
	log "offline: compressed inputs"
	GPU_CAPTURE=$b/bin/gpu-capture PCAP_CMP=$b/bin/pcap-cmp \
		MIX_PCAP=$b/shared/data/bench/mix-en10mb.pcap RESULTS_DIR=$OUT MACHINE=h200 \
		SIZE_MB=${OFFLINE_MB:-4000} REPS=${OFFLINE_REPS:-2} CPUS="${OFFZ_CPUS:-all 0-3 0-1}" \
		timeout ${OFFLINE_TIMEOUT:-400} bash "$b/root/bench/offline_compressed.sh" 2>"$OUT/offz-stderr.log"
	echo "offz rc=$?"; rm -rf /dev/shm/gcap-offz ;;
offcopy)
	# the gpu backend's -r with one filter as the reader's copying threads
	# get fewer CPUs (taskset: OFFCOPY_CPUS), both backends in turns, on
	# an OFFLINE_MB file (bench/offline_crossover.sh)
	log "offline: the backends by CPUs, one filter"
	for cpus in ${OFFCOPY_CPUS:-0-15 0-5 0-3 0-2}; do
		GPU_CAPTURE=$b/bin/gpu-capture MIX_PCAP=$b/shared/data/bench/mix-en10mb.pcap \
			SIZES_MB=${OFFLINE_MB:-4000} OUTPUTS=1 CPUS=$cpus RUNS=${OFFLINE_REPS:-2} \
			BACKENDS="gpu cpu" WORK=/dev/shm/gcap-offcopy \
			timeout ${OFFLINE_TIMEOUT:-200} bash "$b/root/bench/offline_crossover.sh"
		echo "offcopy $cpus rc=$?"
	done 2>&1 | tee "$OUT/offcopy.log" ;;
offbatch)
	# the gpu backend's -r by batch size and ring slots, the cpu backend
	# beside it, in turns (bench/offline_gpu_sweep.sh), on an OFFLINE_MB
	# file; every output compared
	log "offline: batch sizes"
	printf '%s\n' "" "--batch 512" "--batch 1024" "--batch 4096" "--batch 8192" \
		"--backend cpu" "--backend cpu --batch 4096" >/tmp/offbatch-variants
	GPU_CAPTURE=$b/bin/gpu-capture MIX_PCAP=$b/shared/data/bench/mix-en10mb.pcap \
		SIZE_MB=${OFFLINE_MB:-4000} REPS=${OFFLINE_REPS:-5} VARIANTS=/tmp/offbatch-variants \
		OUT_MD=$OUT/offbatch.md DIAG_LOG=$OUT/offbatch-v.log WORK=/dev/shm/gcap-offbatch PATH=$b/bin:$PATH \
		timeout ${OFFLINE_TIMEOUT:-300} bash "$b/root/bench/offline_gpu_sweep.sh" 2>"$OUT/offbatch-stderr.log"
	echo "offbatch rc=$?" ;;
offspans)
	# -r with the records found on the GPU against the reader finding
	# them, the cpu backend beside, in turns (bench/offline_gpu_sweep.sh),
	# on an OFFLINE_MB file; every output compared
	log "offline: records found on the GPU"
	printf '%s\n' "--find cpu" "--find gpu" "--find gpu --ring 32 --gpu-blocks 32" \
		"--find gpu --batch 2048" "--backend cpu" >/tmp/offspans-variants
	GPU_CAPTURE=$b/bin/gpu-capture MIX_PCAP=$b/shared/data/bench/mix-en10mb.pcap \
		SIZE_MB=${OFFLINE_MB:-4000} REPS=${OFFLINE_REPS:-3} VARIANTS=/tmp/offspans-variants \
		OUT_MD=$OUT/offspans.md DIAG_LOG=$OUT/offspans-v.log WORK=/dev/shm/gcap-offspans PATH=$b/bin:$PATH \
		timeout ${OFFLINE_TIMEOUT:-400} bash "$b/root/bench/offline_gpu_sweep.sh" 2>"$OUT/offspans-stderr.log"
	echo "offspans rc=$?"; cat "$OUT/offspans.md" ;;
spans)
	# records found on the GPU: the offline corpus with spans of the
	# staging's size and of a few hundred bytes (every file across many
	# spans and sub-chunks), compiled and interpreted; then the cli test
	log "offline corpus, records found on the GPU"
	for v in ${SPANS_RUNS-compiled:0 compiled:333 interp:1000}; do
		mode=${v%%:*} sb=${v#*:} i=0
		[ $mode = interp ] && i=1
		lg=$OUT/corpus-spans-$mode-$sb.log
		( cd /tmp && CK_FORK=no GCAP_TEST_BACKEND=gpu GCAP_TEST_GPU_INTERP=$i GCAP_TEST_SPANS=$sb \
			GCAP_TEST_COPIERS=3 timeout ${CORPUS_TIMEOUT:-240} "$b/bin/test_offline_corpus" ) >"$lg" 2>&1
		echo "corpus spans $mode $sb rc=$? ($SECONDS s)" | tee -a "$lg"
		head -3 "$lg"; tail -2 "$lg"
	done
	# compute-sanitizer on the spans' kernel: the corpus's first files in
	# spans of 333 bytes
	S=/usr/local/cuda/bin/compute-sanitizer
	for tool in ${SPANS_SANITIZE:-}; do
		( cd /tmp && CK_FORK=no GCAP_TEST_BACKEND=gpu GCAP_TEST_SPANS=333 GCAP_TEST_CORPUS_MAX=${SANITIZE_FILES:-30} \
			timeout 200 $S --tool $tool --error-exitcode 9 "$b/bin/test_offline_corpus" ) \
			>"$OUT/spans-$tool.log" 2>&1
		echo "spans $tool rc=$?" | tee -a "$OUT/spans-$tool.log"; tail -3 "$OUT/spans-$tool.log"
	done
	mkdir -p /tmp/tdwrap && printf '#!/bin/sh\nexec %s -Z root "$@"\n' "$b/bin/tcpdump" >/tmp/tdwrap/tcpdump &&
		chmod +x /tmp/tdwrap/tcpdump
	( cd /tmp && PATH=/tmp/tdwrap:$b/bin:$PATH timeout 300 bash "$b/root/tests/cli/offline_spans.sh" \
		"$b/bin/gpu-capture" "$b/bin/pcap-cmp" "$b/root" ) >"$OUT/offline-spans-cli.log" 2>&1
	echo "offline_spans cli rc=$?" | tee -a "$OUT/offline-spans-cli.log"; tail -5 "$OUT/offline-spans-cli.log" ;;
offcross)
	# where the gpu backend overtakes the cpu backend on -r by file size
	# and outputs per filtering thread: OFFCROSS_MB sizes, OFFCROSS_OUTPUTS,
	# on each CPU set of OFFCROSS_CPUS (bench/offline_crossover.sh)
	log "offline: the backends by size, outputs and CPUs"
	for cpus in ${OFFCROSS_CPUS:-0-15 0-3 0-1}; do
		GPU_CAPTURE=$b/bin/gpu-capture MIX_PCAP=$b/shared/data/bench/mix-en10mb.pcap \
			SIZES_MB="${OFFCROSS_MB:-1000 4000}" OUTPUTS="${OFFCROSS_OUTPUTS:-1 4 8 16 64}" \
			CPUS=$cpus RUNS=${OFFLINE_REPS:-2} BACKENDS="${OFFCROSS_BACKENDS:-gpu cpu}" \
			WORK=/dev/shm/gcap-offcross \
			timeout ${OFFLINE_TIMEOUT:-300} bash "$b/root/bench/offline_crossover.sh"
		echo "offcross $cpus rc=$?"
	done 2>&1 | tee "$OUT/offcross.log" ;;
filepin)
	# how a stored capture's bytes can reach the GPU: the read limit,
	# copies into pinned staging on 1..8 threads, the mapping registered
	# in place (bench/file_pin.py), on a FILEPIN_MB file in tmpfs
	log "file bytes to the GPU"
	mkdir -p /dev/shm/gcap-filepin
	( source "$b/root/bench/offline_lib.sh"
	  offline_input "$b/shared/data/bench/mix-en10mb.pcap" /dev/shm/gcap-filepin/in.pcap \
		${FILEPIN_MB:-4000} )
	timeout ${FILEPIN_TIMEOUT:-240} python3 "$b/root/bench/file_pin.py" \
		/dev/shm/gcap-filepin/in.pcap 2>&1 | tee "$OUT/file-pin.log"
	echo "filepin rc=${PIPESTATUS[0]}"; rm -rf /dev/shm/gcap-filepin ;;
offchoice)
	# --backend auto's choice for -r: the gpu backend (defaults), the cpu
	# backend and auto, 1 and 64 filters, outputs compared, on all CPUs
	# and on fewer (taskset: OFFCHOICE_CPUS, where the cpu backend has
	# fewer workers or none); then tests/cli/backend_auto.sh on a GPU
	log "offline: gpu and cpu backends side by side"
	printf '%s\n' "" "--backend cpu" "--backend auto" >/tmp/offchoice-variants
	for cpus in all ${OFFCHOICE_CPUS:-0-3 0-1}; do
		ts=(); [ "$cpus" = all ] || ts=(taskset -c "$cpus")
		echo "== CPUs: $cpus"
		GPU_CAPTURE=$b/bin/gpu-capture MIX_PCAP=$b/shared/data/bench/mix-en10mb.pcap \
			SIZE_MB=${OFFLINE_MB:-1000} REPS=${OFFLINE_REPS:-2} VARIANTS=/tmp/offchoice-variants \
			OUT_MD="$OUT/offchoice-cpus-$cpus.md" WORK=/dev/shm/gcap-offchoice \
			timeout ${OFFLINE_TIMEOUT:-300} "${ts[@]}" bash "$b/root/bench/offline_gpu_sweep.sh"
		echo "offchoice $cpus rc=$?"
	done 2>&1 | tee "$OUT/offchoice.log"
	rm -rf /dev/shm/gcap-offchoice
	# auto and --backend gpu in turns with 64 outputs (single runs in
	# the sweep), with auto's own line saying what it chose
	for cpus in ${OFFCHOICE_CPUS:-0-3 0-1}; do
		GPU_CAPTURE=$b/bin/gpu-capture MIX_PCAP=$b/shared/data/bench/mix-en10mb.pcap \
			SIZES_MB=${OFFLINE_MB:-1000} OUTPUTS=64 CPUS=$cpus RUNS=3 BACKENDS="gpu auto" \
			timeout ${OFFLINE_TIMEOUT:-300} bash "$b/root/bench/offline_crossover.sh"
	done 2>&1 | tee -a "$OUT/offchoice.log"
	log "tests/cli/backend_auto.sh"
	mkdir -p /tmp/tdwrap && printf '#!/bin/sh\nexec %s -Z root "$@"\n' "$b/bin/tcpdump" >/tmp/tdwrap/tcpdump &&
		chmod +x /tmp/tdwrap/tcpdump
	( cd /tmp && PATH=/tmp/tdwrap:$PATH bash "$b/root/tests/cli/backend_auto.sh" \
		"$b/bin/gpu-capture" "$b/bin/pcap-cmp" "$b/root" )
	echo "backend_auto rc=$?" ;;
sweep)
	# the filtering work moved off the lcores: 8 RX lcores, N filters
	log "filter-count sweep"
	for nf in ${SWEEP_FILTERS:-4 16}; do
		GPU_CAPTURE=$b/bin/gpu-capture MIX_PCAP=$b/shared/data/bench/mix-en10mb.pcap \
			OUT_DIR=/tmp/sweep-$nf SECS=${SECS:-2} SOURCES="${SWEEP_SOURCES:-null}" QUEUES=8 BACKENDS="cpu gpu-host" \
			NFILTERS=$nf timeout 200 bash "$b/root/bench/gpu_capture.sh" 2>>"$OUT/bench-stderr.log"
		{ echo "## $nf filters"; cat /tmp/sweep-$nf/gpu-capture-bench.md; } >>"$OUT/sweep.md"
	done
	cat "$OUT/sweep.md" ;;
latency)
	log "latency against load"
	GPU_CAPTURE=$b/bin/gpu-capture OUT_DIR=$OUT SECS=${SECS:-2} \
		timeout ${LAT_TIMEOUT:-300} bash "$b/root/bench/gpu_latency.sh" 2>>"$OUT/bench-stderr.log"
	echo "latency rc=$?" ;;
latvar)
	# latency variants side by side, in turns (the VM's rates drift):
	# LAT_VARIANTS="name:ENV=V,ENV=V ...", LAT_ROUNDS rounds
	log "latency variants"
	for r in $(seq "${LAT_ROUNDS:-2}"); do for v in ${LAT_VARIANTS:-"b2:GPU_BLOCKS=2" "b4:GPU_BLOCKS=4"}; do
		name=${v%%:*}; envs=$(echo "${v#*:}" | tr ',' ' ')
		env $envs GPU_CAPTURE=$b/bin/gpu-capture OUT_DIR=/tmp/latvar SECS=${SECS:-2} BACKENDS=gpu-host \
			QUEUES="${QUEUES:-1 8}" RATES="${RATES:-10 20}" \
			timeout ${LAT_TIMEOUT:-300} bash "$b/root/bench/gpu_latency.sh" >/dev/null 2>>"$OUT/bench-stderr.log"
		{ echo "## $name (${v#*:}), round $r"; grep '^| [0-9]' /tmp/latvar/gpu-latency.md; } >>"$OUT/latency-variants.md"
	done; done
	{ echo; head -8 /tmp/latvar/gpu-latency.md | grep '^|'; } >>"$OUT/latency-variants.md"
	cat "$OUT/latency-variants.md" ;;
jitter)
	# the floor under the lcores' latency tails: how often a busy-polling
	# core of this VM stalls, one core alone and eight at once
	log "lcore jitter"
	{ echo "# busy-polling stalls on the GPU machine (bench/lcore_jitter, ${JITTER_SECS:-5} s each)"
	  echo; echo "kernel: $(uname -r); HZ: $(grep -h '^CONFIG_HZ=' /boot/config-"$(uname -r)" 2>/dev/null || echo unknown); cmdline: $(cat /proc/cmdline)"
	  for cpus in ${JITTER_CPUS:-1 1,2,3,4,5,6,7,8}; do
		echo; echo "## CPUs $cpus"; echo
		cat /proc/interrupts >/tmp/irq0; cat /proc/softirqs >/tmp/sirq0; grep '^cpu[0-9]' /proc/stat >/tmp/stat0
		"$b/bin/lcore_jitter" "${JITTER_SECS:-5}" "$cpus"
		cat /proc/interrupts >/tmp/irq1; cat /proc/softirqs >/tmp/sirq1; grep '^cpu[0-9]' /proc/stat >/tmp/stat1
		# what the guest kernel did on those CPUs meanwhile (per second),
		# and the time the hypervisor took from them (steal)
		python3 "$b/root/scripts/device/irqdiff.py" "${JITTER_SECS:-5}" "$cpus"
	  done; } 2>&1 | tee "$OUT/lcore-jitter.md" ;;
jittouch)
	# do the stalls come with memory touched? bench/lcore_jitter on the
	# spare CPUs, its loop writing a line a page further each time in a
	# buffer of TOUCH MiB (0: none; 'h': 2 MiB huge pages, reserved for
	# the run) -- an RX lcore walks mbufs, descriptors and export buffers
	log "lcore jitter with memory touched"
	{ echo "# busy-polling stalls with memory touched (bench/lcore_jitter SECS CPUS TOUCH_MIB, ${JITTER_SECS:-4} s each, commit $GCAP_COMMIT)"
	  echo; grep -E '^Huge|^AnonHuge' /proc/meminfo | tr '\n' ' '; echo
	  hp0=$(cat /proc/sys/vm/nr_hugepages)
	  for t in ${TOUCH_SIZES:-0 16 256 1024 64h 256h}; do
		case $t in *h) echo $((hp0 + 1024)) >/proc/sys/vm/nr_hugepages ;; esac
		echo; echo "## touch $t MiB per CPU, CPUs ${JITTER_CPUS:-10,11,12,13,14,15}"; echo
		if [ "$t" = 0 ]; then "$b/bin/lcore_jitter" "${JITTER_SECS:-4}" "${JITTER_CPUS:-10,11,12,13,14,15}"
		else "$b/bin/lcore_jitter" "${JITTER_SECS:-4}" "${JITTER_CPUS:-10,11,12,13,14,15}" "$t"; fi
		echo $hp0 >/proc/sys/vm/nr_hugepages
	  done; } 2>&1 | tee "$OUT/jitter-touch.md" ;;
phases)
	# where the RX lcores' time and long stalls go (--poll-phases), per
	# backend, with net_null writing the frames' bytes (copy=1) or not
	# (copy=0, as with a NIC's DMA; PHASE_COPY "1 0"): PHASE_QUEUES (8) at
	# PHASE_RATE Mpps each (15; 0: lossless, --backpressure), PHASE_ROUNDS
	# rounds
	log "RX poll phases"
	rate="--rx-rate $(python3 -c "print(int(${PHASE_RATE:-15} * 1e6))")"
	[ "${PHASE_RATE:-15}" = 0 ] && rate=--backpressure
	for r in $(seq "${PHASE_ROUNDS:-2}"); do for cp in ${PHASE_COPY:-1 0}; do for be in gpu-host cpu; do
		args="--backend cpu"; [ $be = gpu-host ] && args="--backend gpu --mem host"
		echo "## round $r, $be, net_null copy=$cp, ${PHASE_QUEUES:-8} queues, $rate"
		( cd /tmp && timeout 60 taskset -c 0-$((${PHASE_QUEUES:-8} + 1)) "$b/bin/gpu-capture" \
			-i net_null0,size=64,copy=$cp --queues ${PHASE_QUEUES:-8} $args --busy-poll --poll-phases \
			$rate --duration 3 \
			--summary-json /tmp/ph.json -w /dev/shm/gcap-ph.pcap 'tcp port 80 or udp port 53' 2>&1 |
			grep -E 'paused|phases' )
		python3 -c "import json; d=json.load(open('/tmp/ph.json')); print('rx %.2f Mpps, p50/p99 %s/%s us; rx spans >= 10 us per queue:' % (d['rx_mpps'], d['latency_us']['p50'], d['latency_us']['p99']), [q['phase_long']['rx'] for q in d['queues']])"
		rm -f /tmp/ph.json /dev/shm/gcap-ph.pcap
	done; done; done 2>&1 | tee "$OUT/poll-phases.log" ;;
floor)
	# the RX lcores' floor (bench/rx_floor: receive, give back, nothing
	# else) against the size of each receive call: FLOOR_BURSTS on
	# FLOOR_SOURCES ("net_null copy=0, copy=1"), 1 and 8 queues
	log "rx floor against burst size"
	{ echo "# rx_floor: receive and give back, nothing else (commit $GCAP_COMMIT, ${SECS:-2} s each)"; echo
	  echo "| net_null | queues | burst | Mpps |"; echo "|---|---:|---:|---:|"
	  for cp in ${FLOOR_COPY:-0 1}; do for q in ${FLOOR_QUEUES:-1 8}; do for bu in ${FLOOR_BURSTS:-4 8 16 32 64 256}; do
		m=$( (cd /tmp && timeout 60 "$b/bin/rx_floor" -t ${SECS:-2} -q $q --burst $bu -i net_null0,size=64,copy=$cp) |
			sed -n 's/.* s: \([0-9.]*\) Mpps.*/\1/p')
		echo "| copy=$cp | $q | $bu | ${m:-failed} |"
	  done; done; done; } 2>&1 | tee "$OUT/rx-floor.md" ;;
rxburst)
	# gpu-capture's receive calls cut to RXB_BURSTS packets (--rx-burst;
	# 0: one call for the batch's room, the default), lossless runs only
	log "capture against --rx-burst"
	for bu in ${RXB_BURSTS:-8 32 0}; do
		rb=; [ "$bu" != 0 ] && rb=$bu
		GPU_CAPTURE=$b/bin/gpu-capture MIX_PCAP=$b/shared/data/bench/mix-en10mb.pcap RX_BURST=$rb HALF=0 \
			OUT_DIR=/tmp/rxb-$bu SECS=${SECS:-2} SOURCES="${RXB_SOURCES:-null-nc null}" QUEUES="${RXB_QUEUES:-1 8}" \
			BACKENDS="${RXB_BACKENDS:-cpu gpu-host}" timeout 300 bash "$b/root/bench/gpu_capture.sh" >/dev/null 2>>"$OUT/bench-stderr.log"
		{ echo "## --rx-burst $bu"; grep '^| [a-z]' /tmp/rxb-$bu/gpu-capture-bench.md | grep -v '^| source'; } >>"$OUT/rx-burst.md"
	done
	cat "$OUT/rx-burst.md" ;;
pcie)
	# is host mode bound by PCIe reads? the GPU's PCIe counters (NVML,
	# nvidia-smi dmon -s t, MB/s) during lossless runs
	log "PCIe traffic of gpu-host"
	# PCIE_RUNS: QUEUES:PREFETCH entries
	for spec in ${PCIE_RUNS:-14:128 14:0 8:128 1:128}; do
		set -- ${spec/:/ }
		j=/tmp/pcie-$1-$2.json
		( cd /tmp && GCAP_GPU_PREFETCH=$2 timeout 60 "$b/bin/gpu-capture" -q -i net_null0,size=64,copy=${PCIE_COPY:-1} \
			--queues $1 --backend gpu --mem host --busy-poll --backpressure --duration 5 \
			--summary-json $j -w /dev/shm/gcap-pcie.pcap 'tcp port 80 or udp port 53' ) &
		sleep 2.5
		d=$(nvidia-smi dmon -s t -c 2 2>&1 | grep -v '^#' | tail -1)
		wait
		echo "net_null copy=${PCIE_COPY:-1} queues $1 prefetch $2: $(python3 -c "import json; print(json.load(open('$j'))['rx_mpps'])" 2>/dev/null) Mpps; dmon (gpu rxpci txpci MB/s): $d" | tee -a "$OUT/pcie.log"
	done ;;
soak)
	# gpu-capture left running with its output rotating, memory, descriptors
	# and GPU memory watched (bench/soak.sh)
	log "soak"
	GPU_CAPTURE=$b/bin/gpu-capture PCAP_CMP=$b/bin/pcap-cmp SRC=$b/root/data/sample.pcap OUT_DIR=$OUT \
		DURATION=${SOAK_SECS:-240} WARMUP=${SOAK_WARMUP:-30} QUEUES=${SOAK_QUEUES:-1} RATE=${SOAK_RATE:-4000000} \
		RING_MB=${SOAK_RING_MB:-50} bash "$b/root/bench/soak.sh" --backend gpu --mem ${SOAK_MEM:-host}
	echo "soak rc=$?" ;;
writerslack)
	# does the writer keep up when many small batches are in flight (GPU
	# blocks a queue, the soak's load)? Each variant counts "writer
	# behind": WS_SECS (25) s each at WS_RATE (4 Mpps) with the soak's ring
	# of files; the variants change what bounds the writer's slack (--ring,
	# --gpu-blocks, --mem)
	log "writer slack"
	# WS_VARIANTS: name:args entries separated by ';'
	IFS=';' read -ra wsv <<<"${WS_VARIANTS:-default:;ring64:--ring 64;blocks1:--gpu-blocks 1}"
	for v in "${wsv[@]}"; do
		n=${v%%:*}; a=${v#*:}; rm -rf /dev/shm/gcap-ws; mkdir -p /dev/shm/gcap-ws
		# shellcheck disable=SC2086
		timeout 60 "$b/bin/gpu-capture" -q -i "net_pcap0,rx_pcap=$b/root/data/sample.pcap,infinite_rx=1" \
			--rx-rate ${WS_RATE:-4000000} --duration ${WS_SECS:-25} --backend gpu --mem host $a \
			--summary-json /tmp/ws.json -C 50 -W 5 -w /dev/shm/gcap-ws/w.pcapng 'tcp or udp' 2>>"$OUT/writer-slack.log"
		python3 -c "import json; d=json.load(open('/tmp/ws.json')); print('$n: received', d['received'], 'captured', d['captured'], 'dropped', d['dropped'], 'batch_mean', d['batch_mean'])" |
			tee -a "$OUT/writer-slack.log"
		rm -f /tmp/ws.json
	done ;;
ab)
	# the bundle's gpu-capture against an older build (bin/gpu-capture-old,
	# copied into the bundle by hand), alternating old new new old in one
	# call: the instances differ too much for runs of different calls
	log "A/B: gpu-capture-old against gpu-capture"
	i=0
	for v in old new new old; do
		i=$((i + 1)); bin=$b/bin/gpu-capture; [ $v = old ] && bin=$b/bin/gpu-capture-old
		[ -x "$bin" ] || { echo "ab: no $bin"; break; }
		rm -rf /tmp/ab; mkdir -p /tmp/ab
		GPU_CAPTURE=$bin MIX_PCAP=$b/shared/data/bench/mix-en10mb.pcap OUT_DIR=/tmp/ab SECS=${SECS:-2} \
			SOURCES=${AB_SOURCES:-null-nc} QUEUES=${AB_QUEUES:-1 8} BACKENDS=${AB_BACKENDS:-gpu-host} \
			timeout 280 bash "$b/root/bench/gpu_capture.sh" 2>/tmp/ab/stderr.log
		{ echo "## run $i: $v"; cat /tmp/ab/stderr.log; } | tee -a "$OUT/ab.log"
		cp /tmp/ab/gpu-capture-bench.md "$OUT/ab-$i-$v.md"
	done ;;
ringsweep)
	# --ring and --mbufs against the lossless rate (gpu host, null-nc):
	# does a smaller set of mbufs in flight keep their headers in cache?
	log "ring and pool sizes"
	for round in 1 2; do
		for spec in ${RS_SPECS:-1:16:0 1:8:0 1:4:0 1:16:4608 1:8:2560 1:32:0 8:16:0 8:8:0 8:4:0}; do
			IFS=: read -r q r m <<<"$spec"
			mb=; [ "$m" != 0 ] && mb="--mbufs $m"
			( cd /tmp && timeout 60 "$b/bin/gpu-capture" -q -i net_null0,size=64,copy=0 --queues "$q" \
				--backend gpu --mem host --busy-poll --backpressure --duration ${RS_SECS:-3} --ring "$r" $mb \
				--summary-json /tmp/rs.json -w /dev/shm/gcap-rs.pcap 'tcp port 80 or udp port 53' ) 2>>"$OUT/ring-sweep.log"
			echo "round $round queues $q ring $r mbufs ${m/#0/default}: $(python3 -c "import json; print(json.load(open('/tmp/rs.json'))['rx_mpps'])" 2>/dev/null) Mpps" | tee -a "$OUT/ring-sweep.log"
			rm -f /tmp/rs.json
		done
	done ;;
pcieceil)
	# the link's ceiling for the pipeline's read pattern, no pipeline
	# (bench/pcie_reads.cu): items a second and the GPU's PCIe counters
	log "PCIe read ceiling"
	nv=${NVCC:-/usr/local/cuda/bin/nvcc}
	"$nv" -O2 -arch=${GCAP_GPU_ARCH:-sm_90} "$b/root/bench/pcie_reads.cu" -o /tmp/pcie_reads 2>>"$OUT/pcie-ceiling.log" ||
		{ echo "pcie_reads: build failed"; exit 1; }
	/tmp/pcie_reads --ms 200 --only head | head -1 | tee -a "$OUT/pcie-ceiling.log"
	for pat in ${PCIECEIL_PATS:-head head64 desc8 desc16 desc32 desc8+head desc16+head desc32+head}; do
		/tmp/pcie_reads --ms 4000 --only "$pat" ${PCIECEIL_ARGS:-} >/tmp/pr.out 2>&1 &
		sleep 2
		d=$(nvidia-smi dmon -s t -c 2 2>&1 | grep -v '^#' | tail -1)
		wait
		echo "$(grep "^| $pat |" /tmp/pr.out || cat /tmp/pr.out) dmon (gpu rxpci txpci MB/s): $d" | tee -a "$OUT/pcie-ceiling.log"
	done ;;
pciewrite)
	# the way back alone (bench/pcie_writes.cu): a record's copy into
	# pinned host memory and the system-scope release after it, by copy,
	# record size, blocks, destination and host memory (PW_ARGS: more)
	log "PCIe writes: the way back alone"
	nv=${NVCC:-/usr/local/cuda/bin/nvcc}
	"$nv" -O2 -arch=${GCAP_GPU_ARCH:-sm_90} "$b/root/bench/pcie_writes.cu" -o /tmp/pcie_writes 2>>"$OUT/pcie-writes.log" ||
		{ echo "pcie_writes: build failed"; exit 1; }
	{ /tmp/pcie_writes ${PW_ARGS:-}
	  echo; /tmp/pcie_writes --dst same --copy warp4,block16 ${PW_ARGS:-}
	  hp0=$(cat /proc/sys/vm/nr_hugepages)
	  echo $((hp0 + 160)) >/proc/sys/vm/nr_hugepages
	  echo; /tmp/pcie_writes --mem huge ${PW_ARGS:-}; echo "rc=$?"
	  echo "$hp0" >/proc/sys/vm/nr_hugepages
	} 2>&1 | tee -a "$OUT/pcie-writes.log" ;;
kbench)
	log "inline kernel bench"
	MIX_PCAP=$b/shared/data/bench/mix-en10mb.pcap OUT_DIR=$OUT \
		timeout ${KBENCH_TIMEOUT:-200} sh "$b/root/bench/kernel_bench.sh" >"$OUT/kernel-bench.log" 2>&1
	echo "kernel bench rc=$?"; cat "$OUT/kernel-bench.md" ;;
profile)
	# where an RX lcore's time goes (perf, software clock: the VM has no
	# PMU): one net_null queue (PROFILE_ARGS: e.g. "--queues 8 --rx-rate
	# 20000000"), the capture bench's filter, each backend
	log "RX lcore profile"
	if ! command -v perf >/dev/null; then echo "no perf in the bundle"; else
	for pb in ${PROFILE_BACKENDS:-cpu gpu-host}; do
		be=cpu; [ "$pb" = gpu-host ] && be="gpu --mem host"
		echo "## --backend $be, net_null 64 B copy=${PROFILE_COPY:-1}, 3 s ${PROFILE_ARGS:-(1 RX lcore)}" >>"$OUT/profile.log"
		( cd /tmp && timeout 60 perf record -q -e cpu-clock -F 4999 -o /tmp/perf-$$.data -- \
			"$b/bin/gpu-capture" -i net_null0,size=64,copy=${PROFILE_COPY:-1} --backend $be --busy-poll ${PROFILE_ARGS:-} \
			--duration 3 -w /dev/shm/gcap-prof.pcap 'tcp port 80 or udp port 53' ) >>"$OUT/profile.log" 2>&1
		perf report -i /tmp/perf-$$.data --no-children --sort ${PROFILE_SORT:-comm,dso,sym} --stdio 2>/dev/null |
			grep -v '^#' | grep '%' | head -40 >>"$OUT/profile.log"
		rm -f /tmp/perf-$$.data
	done
	cat "$OUT/profile.log"; fi ;;
observe)
	# DPDK telemetry on the gpu backend (tests/cli/telemetry.sh): every
	# /gpucap/ command, /gpucap/gpu,0 among them, equal to the summary
	log "telemetry, gpu backend"
	GCAP_TEST_BACKEND=gpu timeout ${OBSERVE_TIMEOUT:-180} bash "$b/root/tests/cli/telemetry.sh" \
		"$b/bin/gpu-capture" "$b/bin/pcap-cmp" "$b/root" >"$OUT/observe-gpu.log" 2>&1
	echo "observe rc=$?" | tee -a "$OUT/observe-gpu.log"; tail -6 "$OUT/observe-gpu.log" ;;
vram)
	# the emulated GPUDirect NIC: --mem gpu data rooms in VRAM, the corpus
	# against tcpdump, the inline kernels against the cpu executor,
	# compute-sanitizer on a --mem gpu capture (tests/gpu/gpunic.sh)
	log "gpunic: packets in VRAM, end to end"
	TCPDUMP="$b/bin/tcpdump -Z root" CORPUS=$b/shared/data/pcaps/tcpdump-tests \
		MIX=$b/shared/data/bench/mix-en10mb.pcap SANITIZER=/usr/local/cuda/bin/compute-sanitizer \
		timeout ${VRAM_TIMEOUT:-330} bash "$b/root/tests/gpu/gpunic.sh" "$b/bin/gpu-capture" \
		"$b/bin/pcap-cmp" "$b/root" >"$OUT/vram.log" 2>&1
	echo "vram rc=$?" | tee -a "$OUT/vram.log"; grep -E "^(ok|FAIL)|passed|corpus:" "$OUT/vram.log" ;;
setupcost)
	# a one-shot run's fixed cost: the CUDA driver's own set-up and
	# teardown (bench/cuda_setup_cost.py), then gpu-capture -r on one
	# record, cpu and gpu backends in turns (ms of wall time)
	log "fixed cost of a -r run"
	{ python3 "$b/root/bench/cuda_setup_cost.py" 48 3
	  "$b/bin/tcpdump" -r "$b/shared/data/bench/mix-en10mb.pcap" -c 1 -w /tmp/one.pcap 2>/dev/null
	  for i in 1 2 3; do for be in cpu gpu; do
		t=$(date +%s%N)
		( cd /tmp && "$b/bin/gpu-capture" -q --backend $be -r /tmp/one.pcap -w /dev/null 'tcp port 80 or udp port 53' )
		echo "gpu-capture --backend $be -r (1 record): rc=$? $(( ($(date +%s%N) - t) / 1000000 )) ms"
	  done; done; } 2>&1 | tee "$OUT/setup-cost.log" ;;
kfault)
	# endless and faulting inline kernels on the gpu backend: the
	# watchdog, SIGTERM (-r, live), --duration, an illegal address
	# (KFAULT_RUNS times: its stops race the GPU's completions)
	log "kernel_fault_gpu"
	for i in $(seq "${KFAULT_RUNS:-1}"); do
		( cd "$b/.." && timeout ${KFAULT_TIMEOUT:-400} bash "$b/root/tests/gpu/kernel_fault_gpu.sh" \
			"$b/bin/gpu-capture" "$b/bin/pcap-cmp" "$b/root" )
		echo "kernel_fault_gpu run $i rc=$?"
	done >"$OUT/kernel-fault-gpu.log" 2>&1
	grep rc= "$OUT/kernel-fault-gpu.log"
	tail -12 "$OUT/kernel-fault-gpu.log" ;;
vrambench)
	# VRAM_TAG names a second run's files (e.g. CAP_DIR on another mount)
	vt=${VRAM_TAG:+-$VRAM_TAG}
	log "gpunic bench$vt: floor, cpu, gpu --mem host, gpu --mem gpu (captures in ${CAP_DIR:-/dev/shm})"
	findmnt -T "${CAP_DIR:-/dev/shm}" -o TARGET,FSTYPE,OPTIONS 2>&1 | tail -1
	rm -rf /tmp/vrambench$vt # no summary of an earlier run in this one's files
	GPU_CAPTURE=$b/bin/gpu-capture MIX_PCAP=$b/shared/data/bench/mix-en10mb.pcap \
		OUT_DIR=/tmp/vrambench$vt SECS=${SECS:-2} timeout ${VRAMBENCH_TIMEOUT:-400} \
		bash "$b/root/bench/gpunic_bench.sh" 2>"$OUT/vrambench$vt-stderr.log"
	echo "vrambench rc=$?"; cp /tmp/vrambench$vt/gpunic-bench.md "$OUT/gpunic-bench$vt.md" 2>/dev/null
	# every run's summary (the half-rate run's under half_rate)
	cat /tmp/vrambench$vt/*/gpu-capture-bench.jsonl >"$OUT/gpunic-bench$vt.jsonl" 2>/dev/null
	tail -5 "$OUT/vrambench$vt-stderr.log" ;;
vramhuge)
	# vrambench with the captures on a tmpfs mounted huge=within_size
	# (docs/tuning.md), mounted here for the step (root) and taken down
	# after; its files are named -huge (-TAG-huge with VRAM_TAG)
	hd=/mnt/gcap-huge
	if huge_up "$hd"; then
		CAP_DIR=$hd VRAM_TAG=${VRAM_TAG:+$VRAM_TAG-}huge bash "$0" vrambench
		huge_down "$hd"
	else
		echo "vramhuge: cannot mount a tmpfs at $hd (root?)"
	fi ;;
vramphases)
	# where the RX lcores' time and their long stalls go on the emulated
	# NIC at about half the captures' lossless rate (--poll-phases): 64-byte
	# frames, VP_QUEUES (8) queues at VP_RATE Mpps each (5), VP_BACKENDS,
	# VP_ROUNDS rounds; the latency's parts beside each run
	log "gpunic: RX poll phases at half rate"
	python3 "$b/root/bench/flows64.py" /tmp/vp-flows64.pcap || { echo "vramphases: flows64.py failed"; continue; }
	rate=$(python3 -c "print(int(${VP_RATE:-5} * 1e6))")
	for r in $(seq "${VP_ROUNDS:-2}"); do for be in ${VP_BACKENDS:-cpu gpu-gpu gpu-host}; do
		case $be in cpu) args="--backend cpu" ;; gpu-host) args="--backend gpu --mem host" ;;
		*) args="--backend gpu --mem gpu" ;; esac
		echo "## round $r, $be, gpunic64, ${VP_QUEUES:-8} queues at ${VP_RATE:-5} Mpps each"
		( cd /tmp && timeout 60 "$b/bin/gpu-capture" -q \
			-i gpunic0,rx_pcap=/tmp/vp-flows64.pcap,loop=1 --queues "${VP_QUEUES:-8}" $args \
			--busy-poll --poll-phases --rx-rate "$rate" --duration "${VP_SECS:-3}" ${VP_EXTRA:-} \
			--summary-json /tmp/vp.json -w /dev/shm/gcap-vp.pcap 'tcp port 80 or udp port 53' 2>&1 |
			grep -E 'paused|phases' )
		python3 - /tmp/vp.json <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
lp, ng = d['latency_parts_us'], d['latency_no_gap_us']
print('rx %.2f Mpps, p50/p99 %s/%s us, no gap p99 %s (%.1f%%); p99 cycle %s, in %s, exec %s, back %s; exec mean %s us, batch %s'
      % (d['rx_mpps'], d['latency_us']['p50'], d['latency_us']['p99'], ng['p99'], 100 * ng['share'],
         lp['cycle_p99'], lp['in_p99'], lp['exec_p99'], lp['back_p99'], d['exec_us_mean'], d['batch_mean']))
g = d['poll_gaps']
print('poll gaps >= 10 us %s /s per queue, %.2f%% of the time; share of the time and spans >= 10 us /s per queue by phase: %s'
      % (g['ge10us_per_s'], g['time_pct'], ', '.join('%s %.1f%% (%.0f)' % (k, v['time_pct'], v['ge10us_per_s']) for k, v in d['poll_phases'].items())))
print('phase spans >= 10 us per queue:', [q['phase_long'] for q in d['queues']])
PY
		rm -f /tmp/vp.json /dev/shm/gcap-vp.pcap
	done; done 2>&1 | tee "$OUT/vram-phases.md" ;;
writer)
	# the writer's rate on 64-byte frames from run to run (bench/writer_diag.sh);
	# other builds the bundle holds (bin/gpu-capture-LABEL) in turns with this
	# one; WRITER_TAG names a second run's files
	wt=${WRITER_TAG:+-$WRITER_TAG}
	log "writer diagnosis$wt"
	bl="this=$b/bin/gpu-capture"
	for x in "$b"/bin/gpu-capture-*; do
		[ -x "$x" ] && bl="$bl ${x##*/gpu-capture-}=$x"
	done
	BUILDS="$bl" timeout ${WRITER_TIMEOUT:-500} bash "$b/root/bench/writer_diag.sh" \
		>"$OUT/writer-diag$wt.md" 2>"$OUT/writer-diag$wt-stderr.log"
	echo "writer rc=$?"; cat "$OUT/writer-diag$wt.md" ;;
writerhuge)
	# the writer step into a tmpfs mounted huge=within_size (mounted here
	# for the step, as vramhuge) and onto /dev/null; its files are named
	# -huge (-huge-WRITER_TAG with one)
	hd=/mnt/gcap-huge
	if huge_up "$hd"; then
		CAP_DIR=$hd OUTS=${OUTS:-dir null} WRITER_TAG=huge${WRITER_TAG:+-$WRITER_TAG} bash "$0" writer
		huge_down "$hd"
	else
		echo "writerhuge: cannot mount a tmpfs at $hd (root?)"
	fi ;;
writerbench)
	# the writer alone, with and without its I/O thread, in turns
	# (bench/writer_bench.c): 64-byte records, pcap and pcapng, into each
	# directory of WB_DIRS (default /dev/shm: tmpfs)
	log "writer bench"
	for d in ${WB_DIRS:-/dev/shm}; do
	for f in pcap pcapng; do
		echo "## writer_bench --fmt $f --size ${WB_SIZE:-64} into $d ($(findmnt -n -T "$d" -o FSTYPE,OPTIONS))"
		echo
		"$b/bin/writer_bench" --fmt "$f" --size "${WB_SIZE:-64}" \
			--records "${WB_RECORDS:-5000000}" --rounds "${WB_ROUNDS:-4}" \
			--out "$d/gcap-writer-bench.$f"
		rm -f "$d/gcap-writer-bench.$f"
		echo
	done; done >"$OUT/writer-bench.md" 2>"$OUT/writer-bench-stderr.log"
	echo "writerbench rc=$?"; cat "$OUT/writer-bench.md" ;;
filebench)
	# one file's ceiling into /dev/shm and into a tmpfs mounted
	# huge=within_size (mounted for the step), by each way a writer could
	# put its bytes there, in turns (bench/file_bench.c); FB_ARGS: more
	# of its options (e.g. --chunk 2048 --offset 24), FB_TAG names the file
	log "file bench"
	hd=/mnt/gcap-huge dirs=/dev/shm msg=
	if huge_up "$hd"; then dirs="$dirs $hd"; else msg="filebench: cannot mount a tmpfs at $hd (root?)"; fi
	{ echo "commit $GCAP_COMMIT; $(nproc) CPUs, $(uname -r); shmem THP: $(cat /sys/kernel/mm/transparent_hugepage/shmem_enabled)"
	  [ -n "$msg" ] && echo "$msg"
	  for d in $dirs; do
		echo; echo "## file_bench --dir $d --mib ${FB_MIB:-4096} --rounds ${FB_ROUNDS:-3}${FB_ARGS:+ $FB_ARGS} ($(findmnt -n -T "$d" -o FSTYPE,OPTIONS | head -1))"; echo
		# shellcheck disable=SC2086 # FB_ARGS is words
		timeout 300 "$b/bin/file_bench" --dir "$d" --mib "${FB_MIB:-4096}" --rounds "${FB_ROUNDS:-3}" ${FB_ARGS:-}
		echo "file_bench rc=$?"
		rm -f "$d"/file_bench.*
	  done; } 2>&1 | tee "$OUT/file-bench${FB_TAG:+-$FB_TAG}.md"
	[ "$dirs" = /dev/shm ] || huge_down "$hd" ;;
filealign)
	# whether the size and the alignment of the writer's writes set one
	# tmpfs file's ceiling: bench/file_bench's write and handoff modes for
	# each case of FA_CASES (its options, cases split at |; default: 256
	# KiB writes from byte 0 of the file, from byte 24 where a pcap file's
	# records start, from byte 24 with the bytes 24 into their buffer as
	# well, and 2 MiB writes), in turns within each of FA_ROUNDS (3)
	# rounds of FA_MIB (4096) MiB, into /dev/shm and a huge mount
	log "file alignment"
	hd=/mnt/gcap-huge dirs=/dev/shm msg=
	if huge_up "$hd"; then dirs="$dirs $hd"; else msg="filealign: cannot mount a tmpfs at $hd (root?)"; fi
	IFS='|' read -r -a cases <<<"${FA_CASES:---chunk 256|--chunk 256 --offset 24|--chunk 256 --offset 24 --src-offset 24|--chunk 2048}"
	{ echo "commit $GCAP_COMMIT; $(nproc) CPUs, $(uname -r)"
	  [ -n "$msg" ] && echo "$msg"
	  for r in $(seq "${FA_ROUNDS:-3}"); do for d in $dirs; do for a in "${cases[@]}"; do
		echo; echo "## round $r of ${FA_ROUNDS:-3} (each table's round is 1), $d, $a"; echo
		# shellcheck disable=SC2086 # $a is words
		timeout 120 "$b/bin/file_bench" --dir "$d" --mib "${FA_MIB:-4096}" --rounds 1 \
			--modes write,handoff $a | tail -n +3
		echo "file_bench rc=${PIPESTATUS[0]}"
		rm -f "$d"/file_bench.*
	  done; done; done; } 2>&1 | tee "$OUT/file-align.md"
	[ "$dirs" = /dev/shm ] || huge_down "$hd" ;;
vramback)
	# the mixed capture's p99 on the way back, by the records' sizes
	# (VRAMBACK_BINS: builds of gpu-capture in the bundle's bin/, in turns)
	log "gpunic: the way back by record size"
	for r in $(seq "${VRAMBACK_ROUNDS:-1}"); do
	for g in ${VRAMBACK_BINS:-gpu-capture}; do
		echo "## $g, round $r" | tee -a "$OUT/vram-back.md"
		GPU_CAPTURE=$b/bin/$g MIX_PCAP=$b/shared/data/bench/mix-en10mb.pcap ROUNDS=1 \
			timeout ${VRAMBACK_TIMEOUT:-200} bash "$b/root/bench/gpunic_back.sh" \
			2>>"$OUT/vram-back-stderr.log" | tee -a "$OUT/vram-back.md"
		echo "vramback $g rc=${PIPESTATUS[0]}"
	done; done ;;
orderbench)
	# the writer thread's work per record with the time-order merge and
	# without it (bench/order_bench.c); every bin/order_bench-LABEL in
	# the bundle (an older merge linked in) in turns, round by round
	log "order bench"
	for r in $(seq "${OB_ROUNDS:-3}"); do
		for x in "$b"/bin/order_bench "$b"/bin/order_bench-*; do
			[ -x "$x" ] || continue
			echo "## round $r: ${x##*/} --queues ${OB_QUEUES:-8}"
			echo
			"$x" --queues "${OB_QUEUES:-8}" --records "${OB_RECORDS:-4000000}" --rounds 1
			echo
		done
	done >"$OUT/order-bench.md" 2>"$OUT/order-bench-stderr.log"
	echo "orderbench rc=$?"; cat "$OUT/order-bench.md" ;;
bpf)
	log "bpf filter bench"
	BPF_BENCH=$b/bin/bpf_bench MIX_PCAP=$b/shared/data/bench/mix-en10mb.pcap OUT_DIR=$OUT \
		timeout ${BPF_TIMEOUT:-200} bash "$b/root/bench/bpf_bench.sh"
	echo "bpf bench rc=$?" ;;
ops)
	# -Z on the gpu backend: once the GPU contexts, pools and ports are set
	# up every thread is nobody's with no capability, the capture still
	# writes and rotates into nobody's files; READY, STATUS and WATCHDOG
	# reach a notify socket meanwhile
	log "-Z nobody and the notify protocol, gpu backend"
	{ d=$(mktemp -d /tmp/gcap-ops.XXXXXX); chmod 755 "$d"; mkdir -m 777 "$d/z"
	  for mem in host copy; do
		echo "## --mem $mem"
		WATCHDOG_USEC=500000 python3 "$b/root/tests/cli/notify_listen.py" \
			"$d/ns-$mem" "$d/n-$mem.log" timeout 90 "$b/bin/gpu-capture" -Z nobody --backend gpu \
			--mem $mem -i "net_pcap0,rx_pcap=$b/root/tests/data/eth-be.pcap,infinite_rx=1" \
			-w "$d/z/$mem.pcap" -C 1 --duration 8 --rx-rate 20000 2>"$d/gc-$mem.err" &
		py=$!
		sleep 6
		pid=$(pgrep -P "$(pgrep -P $py -x timeout)" -x gpu-capture)
		echo "pid $pid"
		for t in /proc/$pid/task/*/status; do
			echo "$(awk '/^Name:/ {print $2}' "$t"): $(grep -E '^(Uid|Gid|CapPrm|CapEff):' "$t" | tr '\t\n' '  ')"
		done
		wait $py; echo "rc=$?"
		cat "$d/gc-$mem.err"
		ls -ln "$d/z" | head -5
		echo "READY $(grep -c ' READY=1' "$d/n-$mem.log") STATUS $(grep -c ' STATUS=capturing' "$d/n-$mem.log") WATCHDOG $(grep -c ' WATCHDOG=1' "$d/n-$mem.log")"
		grep ' STATUS=capturing' "$d/n-$mem.log" | tail -1
	  done; rm -rf "$d"; } 2>&1 | tee "$OUT/ops.log" ;;
*)
	[ -x "$b/root/$s" ] && { log "$s"; timeout 300 "$b/root/$s" "$b" "$OUT"; } || echo "unknown step $s" ;;
esac
done
ls -la "$OUT"
