#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# An inline kernel that never returns, or that faults, ends the capture
# with one line naming it, a non-zero exit, and outputs that read back
# with what was captured before.
#  - stuck: the watchdog (--kernel-budget) ends a -r run and a live run
#    by itself; SIGTERM (-r, live) and --duration (live) end it too, with
#    the default budget, within the stop's bounded wait; exit 1.
#  - fault: cpu backend: SIGSEGV is named (kernel, address), the process
#    dies by the signal; gpu backend: the illegal address is named, exit 1.
#  - cpu backend: a filter that loops for ever (libpcap's protochain on a
#    crafted packet) is ended by the same watchdog, and named.
# KF_BACKEND=gpu runs the gpu backend's cases (exit 77 without a GPU).
. "$(dirname "$0")/lib.sh"
BE=${KF_BACKEND:-cpu}
# the signal and --duration cases: the cpu backend's default budget (CPU
# time: the stop's wait ends first, or the watchdog: either names the
# kernel); on the GPU the budget is time, so it is put out of reach
BIG=
[ "$BE" = gpu ] && BIG="--kernel-budget 600000"
ulimit -c 0
IN=$DATA/eth-be.pcap
# every packet from the 41st on (--kernel-arg: from the Nth, and a file
# the kernel creates on the CPU as it starts to loop) loops for ever, on
# a volatile load: a loop the compiler must keep, in C and in CUDA C++
cat >"$T/loop.c" <<'EOF'
#include <gpucap/gcap_kernel.h>
struct gcap_kstate { uint64_t never; uint64_t from; char mark[512]; };
#ifndef GCAP_DEVICE
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
int gcap_kernel_init(struct gcap_kstate *st, const char *args)
{
	char *rest = NULL;

	st->from = args ? strtoull(args, &rest, 10) : 40;
	if (rest && *rest == ' ')
		strncpy(st->mark, rest + 1, sizeof(st->mark) - 1);
	return 0;
}
#endif
GCAP_KERNEL uint32_t gcap_kernel(const struct gcap_kpkt *pkt, struct gcap_kstate *st)
{
	if (pkt->seq >= st->from) {
		volatile uint64_t *v = &st->never;
#ifndef GCAP_DEVICE
		if (st->mark[0])
			close(open(st->mark, O_WRONLY | O_CREAT, 0600));
#endif
		while (*v == 0)
			;
	}
	return GCAP_CAPTURE;
}
EOF
# from the 41st packet on, a load at address 16
cat >"$T/oob.c" <<'EOF'
#include <gpucap/gcap_kernel.h>
struct gcap_kstate { uint64_t zero; uint64_t sum; };
GCAP_KERNEL uint32_t gcap_kernel(const struct gcap_kpkt *pkt, struct gcap_kstate *st)
{
	if (pkt->seq >= 40)
		st->sum += *(const volatile uint8_t *)(16 + st->zero);
	return GCAP_CAPTURE;
}
EOF
if [ "$BE" = gpu ]; then
	if ! "$GC" -q --backend gpu -r "$IN" -c 1 -w "$T/probe.pcap" 2>"$T/probe.err"; then
		grep -q "gpu backend is not available" "$T/probe.err" &&
			skip "no gpu backend here: $(head -c 200 "$T/probe.err")"
		die "gpu backend probe: $(cat "$T/probe.err")"
	fi
fi

# wait (bounded) until the kernel of pid has created the file $2 (cpu) or
# 15 s (gpu): the kernel is looping
spin_wait() {
	if [ "$BE" = gpu ]; then
		sleep 15
		return 0
	fi
	for _ in $(seq 600); do
		[ -e "$2" ] && return 0
		kill -0 "$1" 2>/dev/null || return 1
		sleep 0.1
	done
	return 1
}
# check WHAT RC OUT [MIN]: exit 1, the message names the kernel as stuck,
# and the output reads back with at least MIN records
check_stuck() {
	local what=$1 rc=$2 out=$3 min=${4:-0}
	[ "$rc" -eq 1 ] || fail "$what: exit $rc, want 1: $(cat "$T/gc.err")"
	grep -q "inline kernel $T/loop.c is stuck" "$T/gc.err" ||
		fail "$what: no line naming the stuck kernel: $(cat "$T/gc.err")"
	check_readable "$out" "$min" && note "$what: exit $rc, $(count "$out") records"
}
# elapsed seconds of a run, bounded: the stop's waits are 5 s each
bounded() {
	[ "$2" -le 40 ] || fail "$1: took $2 s to end"
}
# term_stuck WHAT OUT MIN ARGS...: run gpu-capture ARGS -w OUT in the
# background with a kernel that creates $T/spin as it loops; SIGTERM once it
# loops; it must end (bounded) as check_stuck wants
term_stuck() {
	local what=$1 out=$2 min=$3 pid rc s
	shift 3
	rm -f "$out" "$T/spin"
	if [ -n "${ENDLESS:-}" ]; then
		# $! of a pipeline: its last process, gpu-capture
		python3 "$T/endless.py" "$ENDLESS" 2>/dev/null | "$GC" -q "$@" -w "$out" 2>"$T/gc.err" &
	else
		"$GC" -q "$@" -w "$out" 2>"$T/gc.err" &
	fi
	pid=$!
	spin_wait $pid "$T/spin" || fail "$what: the kernel never looped: $(cat "$T/gc.err")"
	s=$SECONDS
	kill -0 $pid 2>/dev/null || fail "$what: ended before SIGTERM: $(cat "$T/gc.err")"
	kill -TERM $pid 2>/dev/null
	# bounded without a guard subshell: one killed as soon as it is
	# forked can run this shell's EXIT trap (removing $T) before bash
	# resets the traps in it
	for _ in $(seq 600); do
		kill -0 $pid 2>/dev/null || break
		sleep 0.1
	done
	kill -KILL $pid 2>/dev/null
	wait $pid; rc=$?
	bounded "$what" $((SECONDS - s))
	check_stuck "$what" $rc "$out" "$min"
}

# 1. the watchdog alone ends a -r run: batches of 16, the third stuck
s=$SECONDS
timeout -k 5 120 "$GC" -q -r "$IN" --backend "$BE" --kernel "$T/loop.c" --kernel-budget 300 \
	--batch 16 -w "$T/wd.pcap" 2>"$T/gc.err"
check_stuck "-r, watchdog" $? "$T/wd.pcap" 32
bounded "-r, watchdog" $((SECONDS - s))
[ "$(count "$T/wd.pcap")" -eq 32 ] || fail "-r, watchdog: $(count "$T/wd.pcap") records, want the 32 before the stuck batch: $(cat "$T/gc.err")"

# 2. SIGTERM ends a -r run whose kernel is stuck (default budget). On the
# GPU the input is endless (IN's records again and again through a pipe,
# -r -): the reader must still be waiting for a free slot when SIGTERM
# comes, whatever the other blocks and the batch ring take before they
# are stuck too; a file that ended first would stop the run by itself
cat >"$T/endless.py" <<'EOF'
import sys
b = open(sys.argv[1], "rb").read()
out = sys.stdout.buffer
out.write(b)
while True:
    out.write(b[24:])
EOF
if [ "$BE" = gpu ]; then
	ENDLESS=$IN term_stuck "-r, SIGTERM" "$T/term.pcap" 32 -r - --backend "$BE" \
		--kernel "$T/loop.c" --kernel-arg "40 $T/spin" $BIG --batch 16
else
	term_stuck "-r, SIGTERM" "$T/term.pcap" 32 -r "$IN" --backend "$BE" --kernel "$T/loop.c" \
		--kernel-arg "40 $T/spin" $BIG --batch 16
fi

# 3. live: --duration, SIGTERM, and the watchdog, each ends a stuck run;
# the kernel loops from the 2001st packet: what came before is in the file
LIVE="net_pcap0,rx_pcap=$IN,infinite_rx=1"
s=$SECONDS
timeout -k 5 120 "$GC" -q -i "$LIVE" --backend "$BE" --kernel "$T/loop.c" --kernel-arg 2000 $BIG \
	--duration 3 --rx-rate 4000 -w "$T/dur.pcap" 2>"$T/gc.err"
check_stuck "live, --duration" $? "$T/dur.pcap" 1
bounded "live, --duration" $((SECONDS - s - 3))

term_stuck "live, SIGTERM" "$T/lterm.pcap" 1 -i "$LIVE" --backend "$BE" --kernel "$T/loop.c" \
	--kernel-arg "2000 $T/spin" $BIG --rx-rate 4000

timeout -k 5 120 "$GC" -q -i "$LIVE" --backend "$BE" --kernel "$T/loop.c" --kernel-budget 300 \
	--duration 100 -w "$T/lwd.pcap" 2>"$T/gc.err"
check_stuck "live, watchdog" $? "$T/lwd.pcap" 0
grep -q "over the budget of 300 ms" "$T/gc.err" || fail "live, watchdog: not the watchdog: $(cat "$T/gc.err")"

# 4. a kernel that loads from address 16
timeout -k 5 120 "$GC" -q -r "$IN" --backend "$BE" --kernel "$T/oob.c" --batch 16 \
	-w "$T/oob.pcap" 2>"$T/gc.err"
rc=$?
if [ "$BE" = cpu ]; then
	[ $rc -eq $((128 + 11)) ] || fail "fault: exit $rc, want death by SIGSEGV: $(cat "$T/gc.err")"
	grep -q "inline kernel $T/oob.c faulted: SIGSEGV at address 0x10, PC 0x[0-9a-f]* (its object + 0x[0-9a-f]*)" "$T/gc.err" ||
		fail "fault: no line naming the kernel and the address: $(cat "$T/gc.err")"
else
	[ $rc -eq 1 ] || fail "fault: exit $rc, want 1: $(cat "$T/gc.err")"
	grep -q "inline kernel $T/oob.c faulted on GPU [0-9]* (in gcap_pipeline_kernel): CUDA_ERROR_ILLEGAL_ADDRESS" "$T/gc.err" ||
		fail "fault: no line naming the kernel and the illegal address: $(cat "$T/gc.err")"
fi
check_readable "$T/oob.pcap" 0 && note "fault: exit $rc, $(count "$T/oob.pcap") records: $(head -c 300 "$T/gc.err")"

# 5. cpu backend, no kernel: libpcap's bpf_filter() loops for ever on an
# IPv4 AH that points back at itself under 'ip protochain 17' (so does
# tcpdump); the watchdog ends it (default budget: 5 s of CPU time)
if [ "$BE" = cpu ]; then
	python3 - "$T/selfloop.pcap" <<'PY'
import struct, sys
ip = bytearray(20); ip[0] = 0x45; ip[8] = 64; ip[9] = 51; ip[3] = 44
ah = bytearray(24); ah[0] = 51; ah[1] = 3  # next: AH, at (3 + 2) * 4: itself
pkt = b"\xff" * 6 + b"\x02" + b"\0" * 5 + b"\x08\x00" + bytes(ip) + bytes(ah)
with open(sys.argv[1], "wb") as f:
    f.write(struct.pack("<IHHiIII", 0xa1b2c3d4, 2, 4, 0, 0, 65535, 1))
    f.write(struct.pack("<IIII", 1, 0, len(pkt), len(pkt)) + pkt)
PY
	s=$SECONDS
	timeout -k 5 300 "$GC" -q -r "$T/selfloop.pcap" --backend cpu --cpu-workers 0 -w "$T/sl.pcap" \
		'ip protochain 17' 2>"$T/gc.err"
	rc=$?
	[ $rc -eq 1 ] || fail "filter loop: exit $rc, want 1: $(cat "$T/gc.err")"
	grep -q "a filter (libpcap's bpf_filter()) is stuck: .* over the budget of 5000 ms" "$T/gc.err" ||
		fail "filter loop: no line naming the stuck filter: $(cat "$T/gc.err")"
	check_readable "$T/sl.pcap" 0 && note "filter loop: exit $rc in $((SECONDS - s)) s: $(head -c 200 "$T/gc.err")"
fi
finish
