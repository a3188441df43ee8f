#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# --kernel on the cpu executor from the command line: offline, the records
# written are the kernel's captures and --kernel-state holds its final
# state; live with --stats, the state file is a valid snapshot while the
# capture runs; a kernel with a syntax error stops the program before
# anything starts, with FILE:LINE.
. "$(dirname "$0")/lib.sh"
FF=$SRC/kernels/examples/flowfirst/flowfirst.c
IN=$LOOP
[ -f "$MIX" ] && IN=$MIX

# offline: captured records = flow packets captured + non-IP + untracked
gc -r "$IN" --backend cpu --kernel "$FF" --kernel-arg n=2 \
	--kernel-state "$T/st.json" -w "$T/o.pcap" || die "offline: exit $?: $(cat "$T/gc.err")"
python3 - "$T/st.json" "$(count "$T/o.pcap")" <<'PY' || fail "offline: state does not match the file"
import json, sys
s = json.load(open(sys.argv[1]))
n = int(sys.argv[2])
assert s["n"] == 2 and s["packets"] > 0, s
assert s["captured"] + s["other"] + s["untracked"] == n, (s, n)
PY

# live, --stats 1: the state file appears while running and parses
"$GC" -q -i "net_pcap0,rx_pcap=$LOOP,infinite_rx=1" --backend cpu --kernel "$FF" \
	--kernel-state "$T/live.json" --stats 1 --duration 4 --rx-rate 20000 \
	-w "$T/l.pcap" >"$T/l.out" 2>"$T/l.err" &
pid=$!
snap=
for _ in $(seq 1 60); do
	sleep 0.1
	if [ -s "$T/live.json" ] && kill -0 "$pid" 2>/dev/null; then
		cp "$T/live.json" "$T/snap.json"
		snap=1
		break
	fi
done
wait "$pid" || fail "live: exit $?: $(cat "$T/l.err")"
[ -n "$snap" ] || fail "live: no state snapshot while running (--stats 1)"
[ -z "$snap" ] || python3 -c "import json,sys; s=json.load(open(sys.argv[1])); assert s['packets'] > 0, s" \
	"$T/snap.json" || fail "live: snapshot is not a valid state: $(head -c 300 "$T/snap.json")"
python3 -c "import json,sys; a=json.load(open(sys.argv[1])); b=json.load(open(sys.argv[2])); assert b['packets'] >= a['packets'] > 0, (a, b)" \
	"$T/snap.json" "$T/live.json" 2>/dev/null || [ -z "$snap" ] || fail "live: final state behind the snapshot"

# a syntax error: FILE:LINE, exit 1, no output file
printf '#include <gpucap/gcap_kernel.h>\nstruct gcap_kstate { uint64_t n; };\nGCAP_KERNEL uint32_t gcap_kernel(const struct gcap_kpkt *pkt,\n struct gcap_kstate *st)\n{\n\treturn GCAP_CAPTURE\n}\n' >"$T/bad.c"
gc -r "$IN" --backend cpu --kernel "$T/bad.c" -w "$T/bad.pcap"
rc=$?
[ $rc -eq 1 ] || fail "syntax error: exit $rc, want 1"
grep -Eq "$T/bad.c:[67]:" "$T/gc.err" || fail "syntax error: no FILE:LINE in: $(cat "$T/gc.err")"
[ ! -e "$T/bad.pcap" ] || fail "syntax error: output file created"
finish
