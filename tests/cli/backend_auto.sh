#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# --backend auto on -r: the cpu backend, chosen without asking the CUDA
# driver anything and said on stderr, unless a GPU option (--mem, --gpu,
# --gpu-blocks, --gpu-interp), an inline kernel or --dump-gpu-code asks
# for the GPU or the outputs are more than 8 for each of the cpu
# backend's filtering threads (its workers, or the reading thread), fewer
# past a gigabyte; -q says nothing.
. "$(dirname "$0")/lib.sh"
need tcpdump
F=$LIVE1
CHOICE="backend cpu (auto's choice for files; --backend gpu to filter them on the GPU)"
run() { timeout -k 5 60 "$GC" "$@" 2>"$T/gc.err"; }

tdump "$F" "$T/ref.pcap" tcp port 80 || die "tcpdump: $(cat "$T/td.err")"
[ "$(count "$T/ref.pcap")" -gt 0 ] || die "no tcp port 80 packet in $F: the test proves little"
run -r "$F" -w "$T/a.pcap" tcp port 80 || die "-r: exit $?: $(cat "$T/gc.err")"
if grep -q "this build has no CUDA support" "$T/gc.err"; then
	note "a build without CUDA: auto is the cpu backend for every run"
else
	grep -qF "$CHOICE" "$T/gc.err" || fail "-r: auto did not choose cpu for files: $(cat "$T/gc.err")"
	[ "$(wc -l <"$T/gc.err")" -eq 4 ] || fail "-r: more than the choice and the summary: $(cat "$T/gc.err")"
fi
"$CMP" -q --usec "$T/a.pcap" "$T/ref.pcap" || fail "-r with auto differs from tcpdump"
run -q -r "$F" -w "$T/q.pcap" tcp port 80 || fail "-q -r: exit $?"
[ -s "$T/gc.err" ] && fail "-q: auto's choice was said: $(cat "$T/gc.err")"

# a GPU option takes auto to the GPU path (here: the GPU if there is one,
# else the cpu backend with the reason, or a refusal for --mem)
for o in --gpu-interp "--gpu 0" "--gpu-blocks 2" "--mem host"; do
	# shellcheck disable=SC2086
	run -r "$F" -w "$T/g.pcap" $o tcp port 80
	rc=$?
	# without a GPU only --mem is refused (the gpu backend is needed)
	[ $rc -eq 0 ] || { [ "$o" = "--mem host" ] && grep -q "gpu backend is not available" "$T/gc.err"; } ||
		fail "$o: exit $rc: $(cat "$T/gc.err")"
	grep -qF "auto's choice for files" "$T/gc.err" &&
		fail "$o: auto chose cpu for files over a GPU option: $(cat "$T/gc.err")"
	# on a machine with a GPU the option's run is the gpu backend's
	if grep -q "backend gpu (" "$T/gc.err"; then
		"$CMP" -q --usec "$T/g.pcap" "$T/ref.pcap" && note "$o: the gpu backend, equal to tcpdump" ||
			fail "$o: the gpu backend's file differs from tcpdump's"
	fi
done
# on a GPU, -r takes batches of 2048 (filtered by a block of 512 threads
# in chunks) unless --batch says
if grep -q "backend gpu (" "$T/gc.err"; then
	run --backend gpu -r "$F" -w "$T/g.pcap" tcp port 80 &&
		grep -q " batches of 2048, 512 threads per block" "$T/gc.err" ||
		fail "--backend gpu -r: not batches of 2048: $(cat "$T/gc.err")"
	"$CMP" -q --usec "$T/g.pcap" "$T/ref.pcap" || fail "batches of 2048: the gpu backend's file differs from tcpdump's"
	run --backend gpu --batch 128 -r "$F" -w "$T/g.pcap" tcp port 80 &&
		grep -q " batches of 128, 128 threads per block" "$T/gc.err" ||
		fail "--backend gpu -r --batch 128: not batches of 128: $(cat "$T/gc.err")"
	"$CMP" -q --usec "$T/g.pcap" "$T/ref.pcap" && note "-r on the gpu backend: batches of 2048, or --batch's" ||
		fail "--batch 128: the gpu backend's file differs from tcpdump's"
fi
# an inline kernel runs on one thread of the cpu backend: the GPU path
FF=$SRC/kernels/examples/flowfirst/flowfirst.c
run -r "$F" --kernel "$FF" -w "$T/k.pcap" || fail "--kernel: exit $?: $(cat "$T/gc.err")"
grep -qF "auto's choice for files" "$T/gc.err" && fail "--kernel: auto chose cpu: $(cat "$T/gc.err")"
has_records "$T/k.pcap" || fail "--kernel: no record written"
run -r "$F" --dump-gpu-code tcp port 80 >"$T/code.cu"
grep -qF "auto's choice for files" "$T/gc.err" && fail "--dump-gpu-code: auto chose cpu: $(cat "$T/gc.err")"

# more than 8 outputs a filtering thread: the GPU path
outs() { local i; for ((i = 0; i < $1; i++)); do printf -- '-w\n%s\n' "$T/o$i.pcap:tcp port $((80 + i))"; done; }
mapfile -t o8 < <(outs 8)
mapfile -t o9 < <(outs 9)
run -r "$F" --cpu-workers 0 "${o8[@]}" || fail "8 outputs: exit $?: $(cat "$T/gc.err")"
grep -qF "$CHOICE" "$T/gc.err" || grep -q "no CUDA support" "$T/gc.err" ||
	fail "8 outputs, 1 thread: auto did not choose cpu: $(cat "$T/gc.err")"
"$CMP" -q --usec "$T/o0.pcap" "$T/ref.pcap" || fail "8 outputs: the first differs from tcpdump"
run -r "$F" --cpu-workers 0 "${o9[@]}" || fail "9 outputs: exit $?: $(cat "$T/gc.err")"
grep -qF "auto's choice for files" "$T/gc.err" &&
	fail "9 outputs, 1 thread: auto chose cpu: $(cat "$T/gc.err")"
"$CMP" -q --usec "$T/o0.pcap" "$T/ref.pcap" || fail "9 outputs: the first differs from tcpdump"
run -r "$F" --cpu-workers 2 "${o9[@]}" || fail "9 outputs, 2 workers: exit $?: $(cat "$T/gc.err")"
grep -qF "$CHOICE" "$T/gc.err" || grep -q "no CUDA support" "$T/gc.err" ||
	fail "9 outputs, 2 workers: auto did not choose cpu: $(cat "$T/gc.err")"

# past a gigabyte the boundary falls with the size: 8 / sqrt(GB) outputs
# a thread. A sparse 4 GB file (a record, then zeros) and -c 1 (the first
# output takes every record)
python3 - "$T/big.pcap" <<'PY'
import struct, sys
with open(sys.argv[1], 'wb') as f:
    f.write(struct.pack('<IHHiIII', 0xa1b2c3d4, 2, 4, 0, 0, 262144, 1))
    f.write(struct.pack('<IIII', 1, 0, 60, 60) + bytes(60))
    f.truncate(4 * 10**9)
PY
sized() { # WORKERS OUTPUTS WANT(cpu|gpu)
	local i o=(-w "$T/s0.pcap")
	for ((i = 1; i < $2; i++)); do o+=(-w "$T/s$i.pcap:tcp port $((80 + i))"); done
	run -r "$T/big.pcap" -c 1 --cpu-workers "$1" "${o[@]}" || fail "4 GB, $2 outputs: exit $?: $(cat "$T/gc.err")"
	grep -q "no CUDA support" "$T/gc.err" && return
	if [ "$3" = cpu ]; then
		grep -qF "$CHOICE" "$T/gc.err" ||
			fail "4 GB, $2 outputs, --cpu-workers $1: auto did not choose cpu: $(cat "$T/gc.err")"
	else
		grep -qF "auto's choice for files" "$T/gc.err" &&
			fail "4 GB, $2 outputs, --cpu-workers $1: auto chose cpu: $(cat "$T/gc.err")"
	fi
	[ "$(count "$T/s0.pcap")" = 1 ] || fail "4 GB, $2 outputs: not the one record"
}
sized 0 4 cpu
sized 0 5 gpu
sized 4 16 cpu
sized 4 17 gpu
# a gigabyte or less (and a size not known: a pipe) keeps 8 a thread
truncate -s 1000000000 "$T/big.pcap"
sized 0 8 cpu
sized 0 9 gpu
rm -f "$T/big.pcap"

# a live port is not a file: auto keeps to the GPU path there
run -i net_null0 -c 10 -w "$T/l.pcap" || fail "-i net_null0: exit $?: $(cat "$T/gc.err")"
grep -qF "auto's choice for files" "$T/gc.err" && fail "-i: auto took the file rule: $(cat "$T/gc.err")"
finish
