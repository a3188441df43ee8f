#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# DPDK telemetry while a capture runs: every /gpucap/ command answers
# through dpdk-telemetry.py; once the ports' files are all read, the last
# answers equal --summary-json and --kernel-state at exit; the socket is
# the owner's alone even under umask 000. GCAP_TEST_BACKEND=gpu (the
# device step "observe") runs it on the gpu backend: /gpucap/gpu,N too.
. "$(dirname "$0")/lib.sh"
BACKEND=${GCAP_TEST_BACKEND:-cpu}
FF=$SRC/kernels/examples/flowfirst/flowfirst.c
export RUNTIME_DIRECTORY=$T/run
mkdir -p "$RUNTIME_DIRECTORY"
n1=$(count "$LIVE1")
n2=$(count "$LIVE2")
# two ports, two outputs, paced so that the files take ~2 s to read
(umask 000 && exec timeout -k 5 60 "$GC" -q -i "net_pcap0,rx_pcap=$LIVE1" -i "net_pcap1,rx_pcap=$LIVE2" \
	--rx-rate 80 --batch 8 --duration 40 --backend "$BACKEND" --kernel "$FF" --kernel-state "$T/k.json" \
	-w "$T/all.pcapng" -w "$T/udp.pcapng:udp" --summary-json "$T/s.json") 2>"$T/gc.err" &
pid=$!
sock=$RUNTIME_DIRECTORY/dpdk/rte/dpdk_telemetry.v2
for _ in $(seq 1 600); do [ -S "$sock" ] && break; sleep 0.1; done
[ -S "$sock" ] || die "no telemetry socket $sock: $(cat "$T/gc.err")"
mode=$(stat -c %a "$sock")
[ $((8#$mode & 8#077)) -eq 0 ] || fail "telemetry socket mode $mode under umask 000"
[ "$(stat -c %a "$RUNTIME_DIRECTORY/dpdk/rte")" = 700 ] ||
	fail "runtime directory mode $(stat -c %a "$RUNTIME_DIRECTORY/dpdk/rte")"
# the commands, each with the parameters it takes, through dpdk-telemetry.py
# (where it is not installed, as on the GPU machine, the same exchange in
# a few lines of python: the welcome, then one reply per command)
if command -v dpdk-telemetry.py >/dev/null; then
	tel=(dpdk-telemetry.py)
else
	cat >"$T/tel.py" <<'PY'
import json, socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
s.connect(sys.argv[1])
n = json.loads(s.recv(1024))["max_output_len"]
for line in sys.stdin:
    if line.strip():
        s.send(line.strip().encode())
        print(s.recv(n).decode())
PY
	tel=(python3 "$T/tel.py" "$sock")
fi
ask() {
	printf '%s\n' "$@" | timeout 10 "${tel[@]}" >"$T/tel.out" 2>"$T/tel.err" ||
		fail "telemetry client: $(cat "$T/tel.err")"
}
all_cmds=(/ /gpucap/summary /gpucap/ports /gpucap/port,0 /gpucap/port,1 /gpucap/queues
	/gpucap/queue,0 /gpucap/queue,1 /gpucap/outputs /gpucap/output,0 /gpucap/output,1
	/gpucap/gpus /gpucap/kernel)
# while running: received grows, and until the files are read whole
seen=0 done=0
for _ in $(seq 1 300); do
	ask /gpucap/summary
	rx=$(python3 -c 'import json,sys; print(json.loads(open(sys.argv[1]).readline())["/gpucap/summary"]["received"])' "$T/tel.out" 2>/dev/null) || rx=-1
	if [ "$rx" -gt 0 ] && [ "$rx" -lt $((n1 + n2)) ]; then seen=1; fi
	if [ "$rx" -eq $((n1 + n2)) ]; then done=1; break; fi
	sleep 0.2
done
[ $seen -eq 1 ] && note "an answer showed the capture in progress"
[ $done -eq 1 ] || die "the summary never reached $((n1 + n2)) packets: $(cat "$T/tel.out")"
# the last records reach the writer: written catches up with captured
for _ in $(seq 1 50); do
	ask /gpucap/summary
	python3 -c 'import json,sys; t=json.loads(open(sys.argv[1]).readline())["/gpucap/summary"]; sys.exit(t["written"] != t["captured"])' "$T/tel.out" && break
	sleep 0.2
done
gpu=/gpucap/gpu,0
[ "$BACKEND" = gpu ] && gpu=/gpucap/gpu,255
ask "${all_cmds[@]}" /gpucap/port,7 $gpu
[ "$BACKEND" = gpu ] && { cp "$T/tel.out" "$T/last.out"; ask /gpucap/gpu,0; cat "$T/tel.out" >>"$T/last.out"; cp "$T/last.out" "$T/tel.out"; }
cp "$T/tel.out" "$T/last.out"
kill -INT $pid
wait $pid || fail "gpu-capture exit $?: $(cat "$T/gc.err")"
python3 - "$T/last.out" "$T/s.json" "$T/k.json" "$(count "$T/all.pcapng")" "$(count "$T/udp.pcapng")" "$BACKEND" <<'PY' || fail "the last telemetry answers differ from the summary"
import json, sys
ans = {}
for line in open(sys.argv[1]):
    line = line.strip()
    if line.startswith("{"):
        d = json.loads(line)
        for k, v in d.items():
            ans.setdefault(k, []).append(v)
s = json.load(open(sys.argv[2]))
k = json.load(open(sys.argv[3]))
n_all, n_udp, backend = int(sys.argv[4]), int(sys.argv[5]), sys.argv[6]
cmds = [c for c in ans["/"][0] if c.startswith("/gpucap/")]
assert sorted(cmds) == sorted(["/gpucap/summary", "/gpucap/ports", "/gpucap/port", "/gpucap/queues",
    "/gpucap/queue", "/gpucap/outputs", "/gpucap/output", "/gpucap/gpus", "/gpucap/gpu",
    "/gpucap/kernel"]), cmds
for c in cmds:
    if c != "/gpucap/gpu":  # no GPU on the cpu backend: no ordinal to ask
        assert c in ans and all(v is not None for v in ans[c][:2]), (c, ans.get(c))
# an index out of range, a GPU the capture does not use: null, no crash
assert ans["/gpucap/port"][2] is None and ans["/gpucap/gpu"][0] is None, ans
if backend == "gpu":  # the default GPU of a one-GPU host: every queue on it
    g = ans["/gpucap/gpu"][1]
    assert ans["/gpucap/gpus"] == [[0]] and g["queues"] == 2, (ans["/gpucap/gpus"], g)
    assert (g["rx"], g["captured"], g["filtered"]) == (s["received"], s["captured"], s["filtered"]), (g, s)
    assert g["batches"] == s["batches"], (g, s)
t = ans["/gpucap/summary"][0]
print("telemetry summary:", t)
for key in ("received", "received_bytes", "captured", "written", "order_forced", "filtered", "batches",
            "rx_polls"):
    assert t[key] == s[key], (key, t[key], s[key])
assert t["dropped"] == s["dropped"], (t["dropped"], s["dropped"])
assert t["backend"] == s["backend"] and t["ports"] == 2 and t["queues"] == 2 and t["outputs"] == 2, t
assert ans["/gpucap/ports"] == [[0, 1]] and ans["/gpucap/queues"] == [[0, 1]], ans
assert ans["/gpucap/outputs"] == [[0, 1]], ans
assert backend == "gpu" or ans["/gpucap/gpus"] == [[]], ans
ports, queues = ans["/gpucap/port"][:2], ans["/gpucap/queue"]
assert [p["name"] for p in ports] == ["net_pcap0", "net_pcap1"], ports
assert sum(p["received"] for p in ports) == s["received"], ports
assert sum(p["captured"] for p in ports) == s["captured"], ports
for q, sq in zip(queues, s["queues"]):
    for key in sq:
        if key in q:
            assert q[key] == sq[key], (key, q, sq)
    assert q["gpu"] == (0 if backend == "gpu" else -1), q
outs = ans["/gpucap/output"]
assert [o["records"] for o in outs] == [n_all, n_udp], (outs, n_all, n_udp)
assert all(list(o)[-2:] == ["io_waits", "io_wait_ns"] for o in outs), outs
assert sum(o["io_waits"] for o in outs) <= s["io_waits"], (outs, s["io_waits"])
assert outs[1]["filter"] == "udp" and outs[0]["path"].endswith("all.pcapng"), outs
kern = json.loads(ans["/gpucap/kernel"][0])
assert kern == k, (kern, k)
print("PASS: last answers equal the summary")
PY
finish
