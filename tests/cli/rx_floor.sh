#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# bench/rx_floor (the RX lcores' floor, the capture bench's "floor" rows):
# it receives from every queue of a net_null port and a net_pcap port,
# reports what it received in its line and its JSON, and refuses bad
# arguments with a message and exit 2 before starting anything; --mem gpu
# is refused where the CPU would write the data rooms (tests/gpu/gpunic.sh
# runs it on the emulated NIC's VRAM pools).
# Extra argument: the rx_floor binary.
. "$(dirname "$0")/lib.sh"
RXF=${4:?rx_floor path}
"$RXF" -t 1 -q 2 -i net_null0,size=64 --json "$T/f.json" >"$T/out" 2>"$T/err" ||
	die "net_null, 2 queues: exit $?: $(cat "$T/err")"
python3 - "$T/f.json" "$T/out" <<'PY' || fail "net_null, 2 queues: $(cat "$T/out")"
import json, re, sys
d = json.load(open(sys.argv[1]))
line = open(sys.argv[2]).read()
assert d["queues"] == 2 and d["rx_pkts"] > 100000 and d["rx_mpps"] > 0.1, d
per = re.search(r"per queue: ([0-9. ]+) Mpps", line).group(1).split()
assert len(per) == 2 and all(float(x) > 0 for x in per), line
# the JSON's rate is its packets over its time
assert abs(d["rx_pkts"] / d["seconds"] / 1e6 - d["rx_mpps"]) < 0.01 * d["rx_mpps"] + 0.01, d
PY
# --read and a small --burst; net_pcap reading a file once
"$RXF" -t 1 --read --burst 4 -i "net_pcap0,rx_pcap=$DATA/eth-mix.pcap" --json "$T/p.json" >"$T/out" 2>"$T/err" ||
	fail "net_pcap --read: exit $?: $(cat "$T/err")"
want=$(python3 -c "import sys,struct; f=open(sys.argv[1],'rb'); f.read(24); n=0
while True:
    h=f.read(16)
    if len(h)<16: break
    f.read(struct.unpack('<IIII',h)[2]); n+=1
print(n)" "$DATA/eth-mix.pcap")
got=$(python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['rx_pkts'])" "$T/p.json" 2>/dev/null)
[ "$got" = "$want" ] || fail "net_pcap: received ${got:-nothing}, the file holds $want packets"
grep -q "reading 64 bytes a packet" "$T/out" || fail "--read not reported: $(cat "$T/out")"
# bad arguments: exit 2 and a message naming the problem
check_bad() { # WHAT ARGS...
	local what=$1 rc
	shift
	"$RXF" "$@" >"$T/out" 2>"$T/err"; rc=$?
	[ $rc -eq 2 ] || fail "$what: exit $rc, expected 2"
	[ -s "$T/err" ] || fail "$what: no message"
}
check_bad "no port" -t 1
check_bad "-q 0" -q 0 -i net_null0
check_bad "--burst 0" --burst 0 -i net_null0
check_bad "a port that does not exist" -i no_such_if0
check_bad "a missing file" -i "net_pcap0,rx_pcap=$T/missing.pcap"
check_bad "--mem vram" --mem vram -i net_null0
check_bad "--read with --mem gpu" --read --mem gpu -i net_null0
grep -q "VRAM" "$T/err" || fail "--read with --mem gpu: $(cat "$T/err")"
# --mem gpu where the port's CPU writes the data rooms (agent=cpu): no
# VRAM pools for it, with a GPU or without one; one line, before receiving
"$RXF" -t 1 --mem gpu -i "gpunic0,rx_pcap=$DATA/eth-mix.pcap,agent=cpu" >"$T/out" 2>"$T/err"
rc=$?
[ $rc -eq 1 ] && grep -q "^rx_floor: .*--mem gpu" "$T/err" && ! grep -q "Mpps" "$T/out" ||
	fail "--mem gpu on agent=cpu: exit $rc: $(cat "$T/err" "$T/out")"
finish
