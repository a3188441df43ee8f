#!/usr/bin/env bash
# Filter throughput: compiled GPU filter vs GPU interpreter vs
# libpcap bpf_filter() vs DPDK rte_bpf (JIT), 1 and N CPU threads, all in one
# process over the same packets (mix-en10mb.pcap replicated into MB MiB).
# Writes $OUT_DIR/bpf-bench.md (report), bpf-bench.jsonl (JSON lines) and
# bpf-bench.log (progress, stderr).
#
# env: BPF_BENCH (binary), MIX_PCAP, OUT_DIR (results), MB (buffer MiB,
#      default 4096), THREADS (N, default nproc capped at 16), REPS (3),
#      CPU_SECS (one CPU run, 0.25), CPU_ONLY=1 (no GPU: CPU engines and
#      NVRTC compile times only), EXTRA (more bpf_bench options)
# exit: bpf_bench's: 0, 1 (error or wrong verdicts), 77 (no GPU, CPU_ONLY unset)
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
B=${BPF_BENCH:-$here/../build/bench/bpf_bench}
MIX=${MIX_PCAP:-$here/../../shared/data/bench/mix-en10mb.pcap}
OUT=${OUT_DIR:-$here/results}
REPS=${REPS:-3}
CPU_SECS=${CPU_SECS:-0.25}
if [ -z "${GCAP_COMMIT:-}" ]; then
	GCAP_COMMIT=$(git -C "$here" rev-parse --short HEAD 2>/dev/null || echo unknown)
	export GCAP_COMMIT
fi
if [ ! -x "$B" ]; then
	echo "bpf_bench.sh: no binary at $B (build with CUDA, or set BPF_BENCH)" >&2
	exit 1
fi
if [ ! -r "$MIX" ]; then
	echo "bpf_bench.sh: no packets at $MIX (set MIX_PCAP)" >&2
	exit 1
fi
mkdir -p "$OUT"
args=(--reps "$REPS" --cpu-secs "$CPU_SECS" --json "$OUT/bpf-bench.jsonl")
[ -n "${MB:-}" ] && args+=(--mb "$MB")
[ -n "${THREADS:-}" ] && args+=(--threads "$THREADS")
[ "${CPU_ONLY:-0}" = 1 ] && args+=(--cpu-only)
# shellcheck disable=SC2206
[ -n "${EXTRA:-}" ] && args+=($EXTRA)
: >"$OUT/bpf-bench.jsonl"
timeout 900 "$B" "${args[@]}" "$MIX" >"$OUT/bpf-bench.md" 2>"$OUT/bpf-bench.log"
rc=$?
case $rc in
0) echo "bpf_bench.sh: report in $OUT/bpf-bench.md" ;;
77) echo "bpf_bench.sh: skipped: $(tail -1 "$OUT/bpf-bench.log")" >&2 ;;
*) echo "bpf_bench.sh: bpf_bench exited $rc (see $OUT/bpf-bench.log and .md)" >&2 ;;
esac
exit $rc
