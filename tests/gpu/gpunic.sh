#!/usr/bin/env bash
# The emulated GPUDirect NIC on a GPU (exits 77 without one):
#  1. --mem gpu: the data rooms are device memory (CU_MEMORYTYPE_DEVICE,
#     the NIC's check of the pool it writes), the capture runs on them
#     and its file equals tcpdump's; the same for --mem host, --mem auto
#     (which picks gpu and says so) and the cpu backend; rx_floor --mem
#     gpu receives the file whole into the same pools;
#  2. a packet larger than a data room arrives chained: --mem gpu drops it
#     and counts it "chained", --mem host linearizes it;
#  3. the corpus: every classic EN10MB capture of the tcpdump tests whose
#     packets fit a data room, one after the other in one pass, 64
#     expressions as 64 outputs: each equals tcpdump -r -w EXPR, compiled
#     and interpreted, byte for byte with one queue, as a multiset with 4,
#     and compiled from libpcap's unoptimised programs (-O, one queue);
#  4. the four example inline kernels: records and state equal to the cpu
#     executor's on the same NIC;
#  5. SANITIZER=path/compute-sanitizer: memcheck and racecheck of a
#     --mem gpu capture (DMA kernel and persistent kernel).
# usage: gpunic.sh GPU_CAPTURE PCAP_CMP SOURCE_ROOT
# env: TCPDUMP ("tcpdump"), CORPUS, MIX, SANITIZER, PARTS ("1 2 3 4 5"),
#      RX_FLOOR (bench/rx_floor; default beside GPU_CAPTURE),
#      CORPUS_RUNS (filters:queues, "compiled:1 compiled:4 interp:1 interp:4
#      unopt:1"; unopt: compiled with -O),
#      SAN_TOOLS ("memcheck racecheck")
set -uo pipefail
G=$(realpath "$1") CMP=$(realpath "$2") SRC=$(realpath "$3")
T=${TCPDUMP:-tcpdump}
CORPUS=${CORPUS:-$SRC/../shared/data/pcaps/tcpdump-tests}
MIX=${MIX:-$SRC/../shared/data/bench/mix-en10mb.pcap}
PARTS=${PARTS:-1 2 3 4 5}
RXF=${RX_FLOOR:-$(dirname "$G")/rx_floor}
[ -x "$RXF" ] || RXF=$SRC/build/bench/rx_floor
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
pass=0 nfail=0
ok() { pass=$((pass + 1)); echo "ok: $*"; }
fail() { nfail=$((nfail + 1)); echo "FAIL: $*"; }
count() { "$CMP" --count "$1"; }
# gc LOG ARGS...: gpu-capture, stderr to LOG
gc() {
	local log=$1
	shift
	(cd "$tmp" && timeout 120 "$G" "$@") 2>"$log"
}

[ -f "$MIX" ] || { echo "SKIP: $MIX missing (../shared/data)"; exit 77; }
if ! (cd "$tmp" && timeout 60 "$G" -q -i "gpunic0,rx_pcap=$MIX" -c 1 --duration 5 \
	-w "$tmp/probe.pcap") 2>"$tmp/probe.err"; then
	grep -q "needs a GPU" "$tmp/probe.err" && { echo "no GPU: skipped"; exit 77; }
	echo "FAIL: probe: $(cat "$tmp/probe.err")"
	exit 1
fi

# tcpdump's file for F and EXPR
ref() { $T -r "$1" -w "$2" "$3" 2>/dev/null; }
# IN OUT: IN without the records whose time cannot be a time (a fraction
# of a second out of range, as some damaged captures have): the NIC's
# times are nanoseconds since the epoch, tcpdump copies the fields
keep_times() {
	python3 - "$1" "$2" <<'PY'
import struct, sys
b = open(sys.argv[1], 'rb').read()
e = '<' if b[:4] in (b'\xd4\xc3\xb2\xa1', b'\x4d\x3c\xb2\xa1') else '>'
ns = b[:4] in (b'\x4d\x3c\xb2\xa1', b'\xa1\xb2\x3c\x4d')
o = open(sys.argv[2], 'wb')
o.write(b[:24])
off = 24
while off + 16 <= len(b):
    fr, cl = struct.unpack(e + 'I', b[off + 4:off + 8])[0], struct.unpack(e + 'I', b[off + 8:off + 12])[0]
    if off + 16 + cl > len(b):
        break
    if fr < (1000000000 if ns else 1000000):
        o.write(b[off:off + 16 + cl])
    off += 16 + cl
PY
}
keep_times "$MIX" "$tmp/mix.pcap"
MIX=$tmp/mix.pcap
# MIX without the 30 TSO-sized records (65,535 to 80,156 bytes, larger
# than any Ethernet frame and than one mbuf, 65,344 bytes of data room:
# --mem gpu drops them as chained, part 2): what every mode delivers whole
ref "$MIX" "$tmp/mixk.pcap" "less 65344"
MIXK=$tmp/mixk.pcap

if [[ " $PARTS " == *" 1 "* ]]; then
	# every frame that fits one mbuf (MIXK), the 28 larger than DPDK's
	# 2048-byte data room too: in gpu memory the rooms are sized for the
	# NIC's largest frame, in host memory a chain is copied whole
	ref "$MIXK" "$tmp/mix-ref.pcap" ""
	n=$(count "$tmp/mix-ref.pcap")
	for mode in "gpu --mem gpu" "gpu --mem host" "gpu --mem auto" "cpu"; do
		be=(--backend ${mode%% *})
		[ "$mode" != cpu ] && be+=(${mode#* })
		gc "$tmp/m.err" -v -i "gpunic0,rx_pcap=$MIXK" "${be[@]}" -c "$n" --duration 60 \
			--backpressure -w "$tmp/m.pcap" || fail "$mode: exit $?: $(grep -v '^EAL' "$tmp/m.err" | tail -3)"
		"$CMP" "$tmp/m.pcap" "$tmp/mix-ref.pcap" >/dev/null &&
			ok "$mode: $n packets, the file equals tcpdump's (timestamps included)" ||
			fail "$mode: $("$CMP" "$tmp/m.pcap" "$tmp/mix-ref.pcap" | head -2)"
		case $mode in
		*"mem gpu"* | *"mem auto"*)
			grep -q "data rooms in device memory (CU_MEMORYTYPE_DEVICE)" "$tmp/m.err" &&
				ok "$mode: the data rooms are device memory" ||
				fail "$mode: no CU_MEMORYTYPE_DEVICE data rooms"
			grep -E "flush|before each doorbell" "$tmp/m.err" | head -1 ;;&
		*"mem auto"*)
			grep -q "receives into GPU memory (GPUDirect RDMA, emulated NIC)" "$tmp/m.err" &&
				ok "--mem auto picked gpu and said so" || fail "--mem auto: no log of the choice" ;;
		*"mem host"*)
			grep -q "pinned host memory" "$tmp/m.err" && ok "$mode: pinned data rooms" ||
				fail "$mode: not pinned" ;;
		cpu)
			grep -q "registered for the GPU's writes" "$tmp/m.err" &&
				ok "cpu: host pools registered" || fail "cpu: pools not registered" ;;
		esac
	done
	gc "$tmp/r.err" --backend cpu --mem gpu -i "gpunic0,rx_pcap=$MIX" -w "$tmp/r.pcap" &&
		fail "cpu backend took --mem gpu" ||
		{ grep -q "needs the gpu backend" "$tmp/r.err" && ok "cpu backend refuses --mem gpu"; }
	gc "$tmp/r.err" --backend gpu --mem gpu -i "net_null0" -c 10 -w "$tmp/r.pcap" &&
		fail "--mem gpu on net_null" ||
		{ grep -q "software port" "$tmp/r.err" && ok "--mem gpu still refused on a software port"; }
	# the floor of the --mem gpu rows: rx_floor on the same pools
	if [ -x "$RXF" ]; then
		timeout 60 "$RXF" --mem gpu -t 2 -i "gpunic0,rx_pcap=$MIXK" --json "$tmp/f.json" \
			>"$tmp/f.out" 2>"$tmp/f.err" || fail "rx_floor --mem gpu: exit $?: $(tail -3 "$tmp/f.err")"
		python3 -c "import json,sys; d=json.load(open(sys.argv[1])); sys.exit(not (d['mem'] == 'gpu' and d['rx_pkts'] == int(sys.argv[2])))" \
			"$tmp/f.json" "$n" 2>/dev/null &&
			ok "rx_floor --mem gpu: $n packets into VRAM data rooms" ||
			fail "rx_floor --mem gpu: $(cat "$tmp/f.json" "$tmp/f.out" 2>/dev/null | head -3), the file holds $n"
	else
		echo "note: no rx_floor at $RXF: its --mem gpu not checked"
	fi
fi

if [[ " $PARTS " == *" 2 "* ]]; then
	# 10 small frames, 2 of 4000 bytes (larger than DPDK's default data
	# room) and one of 65535 (larger than any data room: a chain)
	python3 - "$tmp/jumbo.pcap" <<'PY'
import struct, sys
out = open(sys.argv[1], 'wb')
out.write(struct.pack('<IHHiIII', 0xa1b2c3d4, 2, 4, 0, 0, 262144, 1))
for i in range(13):
    n = 65535 if i == 11 else 4000 if i % 4 == 3 else 60
    f = b'\xff' * 6 + b'\x00\x11\x22\x33\x44\x55' + b'\x08\x00'
    f += bytes([0x45, 0]) + struct.pack('>H', min(n - 14, 65535)) + b'\0' * 5 + b'\x11' + b'\0' * 10
    f += bytes((i + k) & 0xff for k in range(n - len(f)))
    out.write(struct.pack('<IIII', 1700000000 + i, i, n, n) + f)
PY
	ref "$tmp/jumbo.pcap" "$tmp/j-ref.pcap" ""
	ref "$tmp/jumbo.pcap" "$tmp/j-ref12.pcap" "less 60000"
	gc "$tmp/j.err" -v --backend gpu --mem gpu -i "gpunic0,rx_pcap=$tmp/jumbo.pcap" -c 12 \
		--duration 20 --backpressure --summary-json "$tmp/j.json" -w "$tmp/j.pcap"
	grep -q "data rooms of 65472 bytes, for frames of up to 65535 bytes" "$tmp/j.err" &&
		ok "--mem gpu: data rooms sized for the NIC's largest frame" ||
		fail "--mem gpu: data rooms not sized: $(grep 'data rooms' "$tmp/j.err" | head -2)"
	"$CMP" "$tmp/j.pcap" "$tmp/j-ref12.pcap" >/dev/null &&
		ok "--mem gpu: 4000-byte frames whole in one mbuf, equal to tcpdump's" ||
		fail "--mem gpu jumbo: $("$CMP" "$tmp/j.pcap" "$tmp/j-ref12.pcap" | head -2)"
	python3 - "$tmp/j.json" <<'PY' && ok "--mem gpu: the 65535-byte chain dropped and counted chained" || fail "--mem gpu chained: $(cat "$tmp/j.json")"
import json, sys
d = json.load(open(sys.argv[1]))
def find(o):
    if isinstance(o, dict):
        for k, v in o.items():
            if k == 'chained':
                return v
            r = find(v)
            if r is not None:
                return r
v = find(d)
assert v == 1, v
PY
	gc "$tmp/j.err" --backend gpu --mem host -i "gpunic0,rx_pcap=$tmp/jumbo.pcap" -c 13 \
		--duration 20 --backpressure -w "$tmp/jh.pcap"
	"$CMP" "$tmp/jh.pcap" "$tmp/j-ref.pcap" >/dev/null &&
		ok "--mem host: chained packets linearized, equal to tcpdump's" ||
		fail "--mem host chained: $("$CMP" "$tmp/jh.pcap" "$tmp/j-ref.pcap" | head -2)"
fi

if [[ " $PARTS " == *" 3 "* ]]; then
	# the captures: classic pcap, EN10MB, every packet within a data room;
	# each as libpcap reads it (tcpdump -w), then one after the other
	mkdir -p "$tmp/norm"
	python3 - "$CORPUS" >"$tmp/en10mb.list" <<'PY'
import os, struct, sys
d = sys.argv[1]
for n in sorted(os.listdir(d)):
    p = os.path.join(d, n)
    try:
        b = open(p, 'rb').read(24)
    except OSError:
        continue
    if len(b) < 24:
        continue
    m = b[:4]
    if m in (b'\xd4\xc3\xb2\xa1', b'\x4d\x3c\xb2\xa1'): e = '<'
    elif m in (b'\xa1\xb2\xc3\xd4', b'\xa1\xb2\x3c\x4d'): e = '>'
    else: continue
    if struct.unpack(e + 'I', b[20:24])[0] & 0xffff == 1:
        print(p)
PY
	nf=0
	while read -r f; do
		$T -r "$f" -w "$tmp/norm/$nf.pcap" 2>/dev/null
		[ -s "$tmp/norm/$nf.pcap" ] && nf=$((nf + 1))
	done <"$tmp/en10mb.list"
	python3 - "$tmp/all.pcap" "$tmp/norm" "$nf" <<'PY'
import os, struct, sys
out, d, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
o = open(out, 'wb')
o.write(struct.pack('<IHHiIII', 0xa1b2c3d4, 2, 4, 0, 0, 262144, 1))
used = recs = 0
for i in range(n):
    b = open(os.path.join(d, '%d.pcap' % i), 'rb').read()
    if b[:4] != b'\xd4\xc3\xb2\xa1':
        continue
    off, rs = 24, []
    ok = True
    while off + 16 <= len(b):
        fr, cl = struct.unpack('<II', b[off + 4:off + 12])
        if cl > 2048:
            ok = False
            break
        # a time the NIC can carry (keep_times)
        if fr < 1000000:
            rs.append(b[off:off + 16 + cl])
        off += 16 + cl
    if ok and rs:
        o.write(b''.join(rs))
        used += 1
        recs += len(rs)
print('corpus: %d of %d EN10MB captures, %d packets' % (used, n, recs))
PY
	n=$(count "$tmp/all.pcap")
	mapfile -t exprs < <(python3 - "$SRC/tests/pipeline/test_offline_corpus.c" <<'PY'
import re, sys
s = open(sys.argv[1]).read()
body = s[s.index('exprs[] = {'):]
body = body[:body.index('};')]
for e in re.findall(r'"((?:[^"\\]|\\.)*)"', body):
    print(e)
PY
)
	outs=() ne=0
	for i in "${!exprs[@]}"; do
		if ref "$tmp/all.pcap" "$tmp/ref$i.pcap" "${exprs[$i]}"; then
			outs+=(-w "$tmp/out$i.pcap:${exprs[$i]}")
			ne=$((ne + 1))
		else
			echo "expression $i '${exprs[$i]}': tcpdump refuses it for EN10MB"
			rm -f "$tmp/ref$i.pcap"
		fi
	done
	echo "corpus: $n packets, $ne of ${#exprs[@]} expressions"
	for run in ${CORPUS_RUNS:-compiled:1 compiled:4 interp:1 interp:4 unopt:1}; do
		fm=${run%:*} q=${run#*:}
		{
			extra=()
			[ $fm = interp ] && extra=(--gpu-interp)
			[ $fm = unopt ] && extra=(-O)
			rm -f "$tmp"/out*.pcap
			gc "$tmp/c.err" --backend gpu --mem gpu -i "gpunic0,rx_pcap=$tmp/all.pcap" \
				--queues $q -c "$n" --duration 120 --backpressure "${extra[@]}" "${outs[@]}" ||
				fail "corpus $fm q=$q: exit $?: $(grep -v '^EAL' "$tmp/c.err" | tail -3)"
			bad=0
			for i in "${!exprs[@]}"; do
				[ -f "$tmp/ref$i.pcap" ] || continue
				if [ $q = 1 ]; then
					"$CMP" "$tmp/out$i.pcap" "$tmp/ref$i.pcap" >/dev/null && continue
				else
					python3 "$SRC/tests/tools/pcap-multiset.py" "$tmp/out$i.pcap" \
						"$tmp/ref$i.pcap" && continue
				fi
				bad=$((bad + 1))
				echo "  differs: '${exprs[$i]}' ($(count "$tmp/out$i.pcap") vs $(count "$tmp/ref$i.pcap") records)"
			done
			[ $bad = 0 ] && ok "corpus, $fm filters, $q queue(s): $ne outputs equal tcpdump's$([ $q = 1 ] && echo ' byte for byte' || echo ' as multisets')" ||
				fail "corpus, $fm filters, $q queue(s): $bad outputs differ"
		}
	done
fi

if [[ " $PARTS " == *" 4 "* ]]; then
	for k in "dns example.com,tcpdump.org" "synflood threshold=2" "sigmatch" "flowfirst n=3"; do
		name=${k%% *} arg=
		[ "$k" != "$name" ] && arg=${k#* }
		for be in gpu cpu; do
			m=(--backend $be)
			[ $be = gpu ] && m+=(--mem gpu)
			gc "$tmp/k.err" "${m[@]}" -i "gpunic0,rx_pcap=$MIXK" --duration 3 --backpressure \
				--kernel "$SRC/kernels/examples/$name/$name.c" ${arg:+--kernel-arg "$arg"} \
				--kernel-state "$tmp/k-$be.json" -w "$tmp/k-$be.pcap" ||
				fail "kernel $name $be: exit $?: $(grep -v '^EAL' "$tmp/k.err" | tail -2)"
		done
		"$CMP" "$tmp/k-gpu.pcap" "$tmp/k-cpu.pcap" >/dev/null &&
			python3 -c "import json,sys; a=json.load(open(sys.argv[1])); b=json.load(open(sys.argv[2])); sys.exit(a != b)" \
				"$tmp/k-gpu.json" "$tmp/k-cpu.json" &&
			ok "kernel $name: --mem gpu records ($(count "$tmp/k-gpu.pcap")) and state equal the cpu executor's" ||
			fail "kernel $name: gpu and cpu differ ($(count "$tmp/k-gpu.pcap") vs $(count "$tmp/k-cpu.pcap") records)"
	done
fi

if [[ " $PARTS " == *" 5 "* ]] && [ -n "${SANITIZER:-}" ]; then
	$T -r "$MIX" -c 600 -w "$tmp/small.pcap" 2>/dev/null
	ref "$tmp/small.pcap" "$tmp/small-ref.pcap" "tcp or udp"
	n=$(count "$tmp/small-ref.pcap")
	for tool in ${SAN_TOOLS:-memcheck racecheck}; do
		(cd "$tmp" && timeout 240 "$SANITIZER" --tool $tool --error-exitcode 9 "$G" -q \
			-i "gpunic0,rx_pcap=$tmp/small.pcap,prefill=1" --backend gpu --mem gpu \
			-c "$n" --duration 60 --backpressure -w "$tmp/s.pcap" "tcp or udp") >"$tmp/s.log" 2>&1
		rc=$?
		grep -E "ERROR SUMMARY|RACECHECK SUMMARY" "$tmp/s.log"
		[ $rc = 0 ] && "$CMP" "$tmp/s.pcap" "$tmp/small-ref.pcap" >/dev/null &&
			ok "compute-sanitizer $tool: clean on a --mem gpu capture, output equal" ||
			{ fail "compute-sanitizer $tool: rc $rc"; tail -20 "$tmp/s.log"; }
	done
fi

echo "gpunic: $pass passed, $nfail failed"
[ $nfail = 0 ]
