#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# The emulated GPUDirect NIC's port kind without a GPU: bad arguments and
# missing files get one clear line and exit 1 before anything starts;
# where no GPU or driver is present, a well-formed one is refused in one
# line that says the NIC needs a GPU (on a GPU machine, it starts).
. "$(dirname "$0")/lib.sh"
S=$DATA/eth-be.pcap
one_line() { # spec, expected message part
	gc -i "$1" -w "$T/o.pcap" --duration 5
	local rc=$?
	[ $rc -eq 1 ] || fail "'$1': exit $rc, expected 1"
	[ "$(wc -l <"$T/gc.err")" -eq 1 ] || fail "'$1': not one line: $(cat "$T/gc.err")"
	grep -q -- "$2" "$T/gc.err" || fail "'$1': '$(cat "$T/gc.err")' lacks '$2'"
	[ -e "$T/o.pcap" ] && { fail "'$1': output created"; rm -f "$T/o.pcap"; }
	note "'$1': $(cat "$T/gc.err")"
}
one_line "gpunic0" "gpunic0: no rx_pcap=FILE"
one_line "gpunic0,rx_pcap=$T/none.pcap" "gpunic0: $T/none.pcap: No such file"
one_line "gpunic0,rx_pcap=$SRC/README.md" "gpunic0: $SRC/README.md: "
one_line "gpunic0,rx_pcap=$S,loop=2" "loop=2: expected 0 or 1"
one_line "gpunic0,rx_pcap=$S,feeders=0" "feeders=0: expected 1..64"
one_line "gpunic0,rx_pcap=$S,gpu=x" "gpu=x: expected a GPU number"
one_line "gpunic0,rx_pcap=$S,speed=1" "unknown key 'speed'"
one_line "gpunic0,rx_pcap=$S,agent=dma" "agent=dma: expected gpu or cpu"
one_line "gpunic0,rx_pcap" "'rx_pcap': expected KEY=VALUE"
# gpunicX is not this kind: the interface row reports it
one_line "gpunicx,rx_pcap=$S" "is not"
if ! GCAP_CUDA_LIB=/nonexistent/libcuda.so.1 timeout 60 "$GC" -q -i "gpunic0,rx_pcap=$S" \
	-c 1 --duration 5 -w "$T/o.pcap" 2>"$T/gc.err"; then
	[ "$(wc -l <"$T/gc.err")" -eq 1 ] &&
		grep -q "gpunic0: the emulated GPUDirect NIC needs a GPU: no CUDA driver" "$T/gc.err" ||
		fail "without a driver: $(cat "$T/gc.err")"
	note "without a driver: $(cat "$T/gc.err")"
else
	fail "started without a CUDA driver"
fi
finish
