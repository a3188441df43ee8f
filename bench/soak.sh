#!/usr/bin/env bash
# Soak: gpu-capture left running (the daemon's use), with the output rotated
# the whole time, watched from outside. Every INTERVAL seconds it samples
# the process's resident memory, open file descriptors and (with a GPU) the
# GPU memory it holds. It passes when:
#   - gpu-capture exits 0 after DURATION seconds (its own --duration);
#   - nothing was dropped (imissed, rx_nombuf, pipeline full, writer
#     behind) and packets were captured;
#   - resident memory grew less than RSS_SLACK_KB from the first sample
#     taken after WARMUP seconds to the last (the packet path allocates
#     nothing);
#   - the count of open descriptors and the GPU memory held did not grow
#     after WARMUP: their least value in the second half of the samples
#     is at most their largest in the first, plus 2 descriptors (rotation
#     closes what it opens; a sample taken during a rotation may see its
#     passing descriptors, a leak raises all later ones);
#   - every file of the -C/-W ring is readable by libpcap and holds records.
#
#   bash bench/soak.sh [BACKEND_ARGS...]     e.g. --backend gpu --mem host
#
# env: GPU_CAPTURE, PCAP_CMP (default ../build/{apps/gpu-capture,
# tests/tools/pcap-cmp}), DURATION (600), INTERVAL (10), WARMUP (30),
# RATE (packets/s per queue, 500000), QUEUES (1), SRC (a pcap replayed with
# infinite_rx; default data/sample.pcap), FILTER ('tcp or udp'), RING_MB
# (20), RING_FILES (5), RSS_SLACK_KB (1024), OUT_DIR (/tmp/gcap-soak;
# results soak.md and soak.jsonl there), DIR (the ring's directory,
# /dev/shm/gcap-soak).
# Exit: 0 pass, 1 fail, 2 usage or setup.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
G=${GPU_CAPTURE:-$here/../build/apps/gpu-capture}
CMP=${PCAP_CMP:-$here/../build/tests/tools/pcap-cmp}
DURATION=${DURATION:-600} INTERVAL=${INTERVAL:-10} WARMUP=${WARMUP:-30}
RATE=${RATE:-500000} QUEUES=${QUEUES:-1}
SRC=${SRC:-$here/../data/sample.pcap} FILTER=${FILTER:-tcp or udp}
RING_MB=${RING_MB:-20} RING_FILES=${RING_FILES:-5} RSS_SLACK_KB=${RSS_SLACK_KB:-1024}
OUT=${OUT_DIR:-/tmp/gcap-soak} DIR=${DIR:-/dev/shm/gcap-soak}
for x in "$G" "$CMP"; do
	[ -x "$x" ] || { echo "soak: $x is not an executable (build first)" >&2; exit 2; }
done
[ -r "$SRC" ] || { echo "soak: cannot read $SRC" >&2; exit 2; }
[ "$WARMUP" -lt "$DURATION" ] || { echo "soak: WARMUP must be less than DURATION" >&2; exit 2; }
mkdir -p "$OUT" && rm -rf "$DIR" && mkdir -p "$DIR" || exit 2
samples=$OUT/soak-samples.tsv
json=$OUT/soak-summary.json
log=$OUT/soak-gpu-capture.log
"$G" -q -i "net_pcap0,rx_pcap=$SRC,infinite_rx=1" --queues "$QUEUES" --rx-rate "$RATE" \
	--duration "$DURATION" --summary-json "$json" -C "$RING_MB" -W "$RING_FILES" \
	-w "$DIR/soak.pcapng" "$@" "$FILTER" >"$log" 2>&1 &
pid=$!
gpu_mem() { # MiB this process holds on the GPUs (0 without nvidia-smi)
	command -v nvidia-smi >/dev/null 2>&1 || { echo 0; return; }
	nvidia-smi --query-compute-apps=pid,used_memory --format=csv,noheader,nounits 2>/dev/null |
		awk -F', *' -v p="$1" '$1 == p { s += $2 } END { print s + 0 }'
}
printf 't_s\trss_kb\tfds\tgpu_mib\n' >"$samples"
t0=$(date +%s)
while kill -0 "$pid" 2>/dev/null; do
	sleep "$INTERVAL"
	rss=$(awk '/^VmRSS:/ { print $2 }' "/proc/$pid/status" 2>/dev/null) || break
	[ -n "$rss" ] || break
	fds=$(ls "/proc/$pid/fd" 2>/dev/null | wc -l)
	printf '%s\t%s\t%s\t%s\n' "$(( $(date +%s) - t0 ))" "$rss" "$fds" "$(gpu_mem "$pid")" >>"$samples"
done
wait "$pid"
rc=$?
files=()
for f in "$DIR"/soak.pcapng*; do [ -e "$f" ] && files+=("$f"); done
counts=()
for f in "${files[@]}"; do counts+=("$("$CMP" --count "$f" 2>/dev/null || echo unreadable)"); done
python3 - "$samples" "$json" "$rc" "$WARMUP" "$RSS_SLACK_KB" "$RING_FILES" "$OUT" "$*" \
	"$DURATION" "$RATE" "$QUEUES" "${counts[*]:-}" <<'PY'
import json, sys
samples, js, rc, warm, slack, nring, out, args, dur, rate, queues, counts = sys.argv[1:13]
rows = [l.split("\t") for l in open(samples).read().split("\n")[1:] if l]
rows = [(int(t), int(r), int(f), int(g)) for t, r, f, g in rows]
fails = []
if rc != "0":
    fails.append(f"gpu-capture exited {rc}")
try:
    d = json.load(open(js))
except Exception as e:
    d = {}
    fails.append(f"no summary JSON ({e})")
drops = d.get("dropped", {})
if any(drops.get(k, 1) != 0 for k in ("imissed", "rx_nombuf", "pipeline_full", "writer_behind")):
    fails.append(f"drops: {drops}")
if d.get("captured", 0) <= 0:
    fails.append("nothing captured")
# after the warm-up and before the capture's end: a sample taken while it
# tears down (memory freed, files closed) would hide a growth
steady = [r for r in rows if int(warm) <= r[0] < int(dur)]
if len(steady) < 2:
    fails.append(f"only {len(steady)} samples after the warm-up")
else:
    grow = steady[-1][1] - steady[0][1]
    if grow >= int(slack):
        fails.append(f"resident memory grew {grow} KiB after the warm-up")
    # a leak of one descriptor a rotation raises every later sample by
    # the rotations since (tens at least); a sample taken inside a
    # rotation sees its passing descriptors (+-2) and is not a leak
    half = len(steady) // 2
    first, last = steady[:half], steady[half:]
    for col, what, slack in ((2, "open descriptors", 2), (3, "GPU memory (MiB)", 0)):
        a, z = max(r[col] for r in first), min(r[col] for r in last)
        if z - a > slack:
            fails.append(f"{what} grew: at most {a} in the first half of "
                         f"the steady state, at least {z} in the second "
                         f"({[r[col] for r in steady]})")
c = counts.split()
if len(c) != int(nring) or any(not x.isdigit() or int(x) == 0 for x in c):
    fails.append(f"ring files: {c} (want {nring} readable files with records)")
res = {"args": args, "duration_s": int(dur), "rate_per_queue": int(rate),
       "queues": int(queues), "samples": len(rows),
       "rss_kb_first_last": [steady[0][1], steady[-1][1]] if steady else None,
       "fds": sorted({r[2] for r in steady}), "gpu_mib": sorted({r[3] for r in steady}),
       "received": d.get("received"), "captured": d.get("captured"),
       "written": d.get("written"), "dropped": drops, "ring_records": c,
       "pass": not fails, "fails": fails}
with open(f"{out}/soak.jsonl", "a") as f:
    f.write(json.dumps(res) + "\n")
with open(f"{out}/soak.md", "a") as f:
    f.write(f"| {args or 'default backend'} | {dur} s | {int(queues)} x {int(rate)} pps | "
            f"{d.get('received')} | {d.get('captured')} | {drops} | "
            f"{res['rss_kb_first_last']} | {res['fds']} | {res['gpu_mib']} | "
            f"{' '.join(c)} | {'pass' if not fails else 'FAIL: ' + '; '.join(fails)} |\n")
print(("soak: pass" if not fails else "soak: FAIL: " + "; ".join(fails)) +
      f" ({len(rows)} samples, rss {res['rss_kb_first_last']} KiB, fds {res['fds']}, gpu {res['gpu_mib']} MiB)")
sys.exit(0 if not fails else 1)
PY
