#!/usr/bin/env bash
# The cost of writing each output file in time order (the writer's merge
# across queues, dataplane/pipeline_order.c) at full rate: the same
# capture with the merge (the default) and with --no-time-order, in turns
# (rounds alternate the order, as the machine's rate drifts), on 8 RX
# queues, gpu backend in host memory mode, lossless (--backpressure: the
# rate is the most the pipeline, writer included, sustains).
# Sources: null (net_null 64-byte frames, copy=0, one port, RSS over the
# queues) and pcap (one net_pcap port whose 8 queues each replay
# mix-en10mb.pcap cut to 2000 bytes, infinite_rx). Filters: "all" (no
# expression: every packet is written, the writer is the bottleneck and
# the merge's cost shows whole) and 'tcp port 80 or udp port 53'.
# Output: $OUT_DIR/time-order.md (a table: Mpps and written Mpps, merge on
# and off, their ratio) and time-order.jsonl (one line per run).
# env: GPU_CAPTURE, MIX_PCAP, OUT_DIR, SECS (3), QUEUES (8), ROUNDS (3),
#      SOURCES ("null pcap"), BACKEND_ARGS ("--backend gpu --mem host"),
#      EXTRA (more gpu-capture arguments)
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
G=${GPU_CAPTURE:-$here/../build/apps/gpu-capture}
MIX=${MIX_PCAP:-$here/../../shared/data/bench/mix-en10mb.pcap}
OUT=${OUT_DIR:-$here/results}
SECS=${SECS:-3}
Q=${QUEUES:-8}
ROUNDS=${ROUNDS:-3}
SOURCES=${SOURCES:-null pcap}
BE=${BACKEND_ARGS:---backend gpu --mem host}
commit=${GCAP_COMMIT:-$(git -C "$here" rev-parse --short HEAD 2>/dev/null || echo unknown)}
mkdir -p "$OUT"
jsonl=$OUT/time-order.jsonl
md=$OUT/time-order.md
: >"$jsonl"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"; rm -f /dev/shm/gcap-order.pcap' EXIT
python3 "$here/../scripts/pcap-snap.py" "$MIX" "$tmp/mix.pcap" 2000 || exit 1

ports_for() { # source -> -i arguments
	if [ "$1" = null ]; then
		echo "-i net_null0,size=64,copy=0 --queues $Q"
	else
		local spec="net_pcap0" i
		for ((i = 0; i < Q; i++)); do spec+=",rx_pcap=$tmp/mix.pcap"; done
		echo "-i $spec,infinite_rx=1 --queues $Q --mbufs 16384"
	fi
}

run_one() { # source filter-name order(on|off) round
	local src=$1 fname=$2 order=$3 round=$4 j=$tmp/run.json
	local filt=()
	[ "$fname" = all ] || filt=("$fname")
	local extra=()
	[ "$order" = off ] && extra=(--no-time-order)
	rm -f "$j" /dev/shm/gcap-order.pcap
	# shellcheck disable=SC2046
	timeout $((SECS + 60)) "$G" -q $(ports_for "$src") $BE --busy-poll --backpressure \
		--duration "$SECS" --summary-json "$j" "${extra[@]}" ${EXTRA:-} \
		-w /dev/shm/gcap-order.pcap "${filt[@]}" >"$tmp/log" 2>&1
	local rc=$?
	rm -f /dev/shm/gcap-order.pcap
	if [ $rc -ne 0 ] || [ ! -s "$j" ]; then
		{ echo "run failed (rc $rc): $src '$fname' order $order"; sed 's/^/  /' "$tmp/log"; } >&2
		return 1
	fi
	python3 - "$j" "$src" "$fname" "$order" "$round" >>"$jsonl" <<'PY'
import json, sys
s = json.load(open(sys.argv[1]))
secs = s["seconds"]
print(json.dumps({"source": sys.argv[2], "filter": sys.argv[3], "order": sys.argv[4],
                  "round": int(sys.argv[5]), "seconds": secs,
                  "rx_mpps": s["received"] / secs / 1e6,
                  "written_mpps": s["written"] / secs / 1e6,
                  "dropped": s["dropped"], "cores_used": s.get("cores_used")}))
PY
}

for src in $SOURCES; do
	for fname in all 'tcp port 80 or udp port 53'; do
		for ((r = 1; r <= ROUNDS; r++)); do
			# alternate which goes first: a drift favours neither
			if [ $((r % 2)) -eq 1 ]; then orders="on off"; else orders="off on"; fi
			for o in $orders; do run_one "$src" "$fname" "$o" "$r"; done
		done
	done
done

python3 - "$jsonl" "$md" "$commit" "$Q" "$SECS" "$BE" <<'PY'
import json, statistics, sys
rows = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
out = open(sys.argv[2], "w")
out.write("# Time order: the writer's merge on and off\n\n")
out.write("commit %s, %s RX queues, %s, busy polling, --backpressure, %s s per run; "
          "median of the rounds (each round runs both, in alternating order)\n\n"
          % (sys.argv[3], sys.argv[4], sys.argv[6], sys.argv[5]))
out.write("| source | filter | Mpps on | Mpps off | on/off | written Mpps on | written Mpps off | on/off | rounds |\n")
out.write("|---|---|---|---|---|---|---|---|---|\n")
keys = []
for r in rows:
    k = (r["source"], r["filter"])
    if k not in keys:
        keys.append(k)
for k in keys:
    med = {}
    for o in ("on", "off"):
        sel = [r for r in rows if (r["source"], r["filter"]) == k and r["order"] == o]
        med[o] = (statistics.median(r["rx_mpps"] for r in sel) if sel else 0,
                  statistics.median(r["written_mpps"] for r in sel) if sel else 0, len(sel))
    ratio = lambda a, b: "%.3f" % (a / b) if b else "-"
    out.write("| %s | %s | %.3f | %.3f | %s | %.3f | %.3f | %s | %d |\n" % (
        k[0], k[1], med["on"][0], med["off"][0], ratio(med["on"][0], med["off"][0]),
        med["on"][1], med["off"][1], ratio(med["on"][1], med["off"][1]), med["on"][2]))
out.close()
print(open(sys.argv[2]).read())
PY
