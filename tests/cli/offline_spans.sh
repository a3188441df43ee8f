#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# -r of one plain pcap file on the gpu backend: with --find gpu the GPU
# finds the records in spans of the file, and the output is the reader's
# own (--find cpu, the default) byte for byte: both byte orders and time
# units, -c, a file cut short in a record and a record past the snapshot
# (the GPU stops there and the reader reads on, with the reader's own
# error and exit status). --find's refusals come first and need no GPU.
. "$(dirname "$0")/lib.sh"
need tcpdump
need python3
F=$MIX
[ -r "$F" ] || skip "no $F"
EXPR="tcp port 80 or udp port 53"
run() { timeout -k 5 120 "$GC" "$@" 2>"$T/gc.err"; }

# refusals: one line, exit 1, before anything starts
refused() {
	local want=$1
	shift
	run "$@" -w "$T/x.pcap"
	rc=$?
	[ $rc -eq 1 ] || fail "$*: exit $rc, not 1"
	grep -qF -- "$want" "$T/gc.err" || fail "$*: not '$want': $(cat "$T/gc.err")"
	[ "$(wc -l <"$T/gc.err")" -eq 1 ] || fail "$*: more than one line: $(cat "$T/gc.err")"
	[ -e "$T/x.pcap" ] && fail "$*: wrote an output"
	rm -f "$T/x.pcap"
}
refused "--find 'gpus': gpu or cpu" --find gpus -r "$F"
refused "--find gpu needs the gpu backend" --backend cpu --find gpu -r "$F"
refused "--find applies to -r, not to live ports" --find cpu -i net_null0 -c 1

run --backend gpu -r "$F" -w "$T/probe.pcap" -c 1
if [ $? -ne 0 ]; then
	grep -q "the gpu backend is not available" "$T/gc.err" || die "--backend gpu: $(cat "$T/gc.err")"
	why=$(head -1 "$T/gc.err")
	# without a GPU --find gpu is refused (it asks for the GPU, as --mem
	# does), whatever the backend's default
	refused "the gpu backend is not available" --find gpu -r "$F" -c 1
	[ "$nfail" -eq 0 ] || finish
	skip "no usable GPU: $why"
fi

# same: the gpu backend with the records found on the GPU writes what it
# writes with the reader finding them, byte for byte
same() {
	local name=$1 in=$2
	shift 2
	run --backend gpu -v -r "$in" -w "$T/cpu.pcap" "$@"
	rc_cpu=$?
	cp "$T/gc.err" "$T/cpu.err"
	run --backend gpu --find gpu -v -r "$in" -w "$T/gpu.pcap" "$@"
	rc_gpu=$?
	[ $rc_gpu -eq $rc_cpu ] || fail "$name: exit $rc_gpu, the reader's own $rc_cpu: $(cat "$T/gc.err")"
	grep -q "records found on the GPU, in [0-9]* spans" "$T/gc.err" ||
		fail "$name: the GPU did not find the records: $(cat "$T/gc.err")"
	grep -q " batches of 8192," "$T/gc.err" ||
		fail "$name: --find gpu not in spans of the largest staging: $(cat "$T/gc.err")"
	grep -q "records found on the GPU" "$T/cpu.err" && fail "$name: the default found them on the GPU"
	cmp -s "$T/gpu.pcap" "$T/cpu.pcap" || fail "$name: the GPU's records differ from the reader's"
	[ "$(count "$T/gpu.pcap")" -gt 0 ] || fail "$name: no record written: the case proves little"
}

same "one filter" "$F" $EXPR
tdump "$F" "$T/ref.pcap" $EXPR || die "tcpdump: $(cat "$T/td.err")"
"$CMP" -q --usec "$T/gpu.pcap" "$T/ref.pcap" || fail "one filter: differs from tcpdump's"
note "one filter: the GPU's records are tcpdump's"
# --find gpu takes --backend auto to the GPU
run --find gpu -v -r "$F" -w "$T/auto.pcap" $EXPR
grep -q "records found on the GPU" "$T/gc.err" || fail "--find gpu, backend auto: not on the GPU: $(cat "$T/gc.err")"
cmp -s "$T/auto.pcap" "$T/gpu.pcap" || fail "--find gpu, backend auto: differs"
same "-c 50" "$F" -c 50 $EXPR
[ "$(count "$T/gpu.pcap")" -eq 50 ] || fail "-c 50: $(count "$T/gpu.pcap") records"

# the same records big-endian with nanosecond fractions
python3 - "$F" "$T/be-ns.pcap" <<'EOF'
import struct, sys
src = open(sys.argv[1], 'rb').read()
magic, = struct.unpack('<I', src[:4])
assert magic == 0xa1b2c3d4, 'the mix is a little-endian microsecond pcap'
out = [struct.pack('>IHHiIII', 0xa1b23c4d, 2, 4, 0, 0, *struct.unpack('<II', src[16:24]))]
at = 24
while at + 16 <= len(src):
    s, us, cap, wire = struct.unpack('<IIII', src[at:at + 16])
    out.append(struct.pack('>IIII', s, min(us, 999999) * 1000 + 7, cap, wire))
    out.append(src[at + 16:at + 16 + cap])
    at += 16 + cap
open(sys.argv[2], 'wb').write(b''.join(out))
EOF
same "big-endian, nanoseconds" "$T/be-ns.pcap" $EXPR

# cut short inside a record, past the middle: the GPU stops at that record
size=$(stat -c %s "$F")
head -c $((size * 3 / 5)) "$F" >"$T/cut.pcap"
same "cut short" "$T/cut.pcap" $EXPR
grep -q "the GPU stopped at the record at byte" "$T/gc.err" ||
	fail "cut short: the GPU did not say where it stopped: $(cat "$T/gc.err")"

# a record past the snapshot, in the middle: the reader's own path (and
# libpcap's verdict on it) from there
python3 - "$F" "$T/snap.pcap" <<'EOF'
import struct, sys
b = bytearray(open(sys.argv[1], 'rb').read())
snap, = struct.unpack('<I', b[16:20])
at, n = 24, 0
while at + 16 <= len(b):
    cap, = struct.unpack('<I', b[at + 8:at + 12])
    if n == 5000:
        struct.pack_into('<I', b, at + 8, snap + 1)
        break
    at += 16 + cap
    n += 1
open(sys.argv[2], 'wb').write(bytes(b))
EOF
same "a record past the snapshot" "$T/snap.pcap" $EXPR
grep -q "the GPU stopped at the record at byte" "$T/gc.err" ||
	fail "past the snapshot: the GPU did not say where it stopped: $(cat "$T/gc.err")"
finish
