#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# A signal during set-up ends the run at once, as tcpdump's does: killed
# by the signal, no output file left. A 3,000-term filter compiles for
# far longer than the 2 s before SIGINT. And a -r run signalled right
# after its start either died in set-up (no file) or stopped reading an
# input without an end: exit 0, a valid file, the summary. SIGTERM while
# an inline kernel compiles leaves none of the compile's files.
. "$(dirname "$0")/lib.sh"
f="host 10.0.0.1"
for i in $(seq 2 3000); do f="$f or host 10.$((i / 62500)).$((i / 250 % 250)).$((i % 250))"; done
timeout --preserve-status -k 20 -s INT 2 "$GC" -q -r "$LOOP" -w "$T/s.pcap" "$f" 2>"$T/gc.err"; rc=$?
[ $rc -eq 130 ] || fail "SIGINT while compiling: exit $rc (expected 130, killed by SIGINT): $(cat "$T/gc.err")"
[ ! -e "$T/s.pcap" ] || fail "SIGINT while compiling left $T/s.pcap"
# SIGTERM while a kernel compiles (systemctl stop during set-up): the
# compile's private directory and its files go before the process dies
# by the signal; the compiler (a wrapper that says it started, then waits)
# is let through the signal, as a terminal's Ctrl-C reaches it
printf '#!/bin/sh\ntouch %s/cc.started\nsleep 3\nexec cc "$@"\n' "$T" >"$T/slowcc"
chmod +x "$T/slowcc"
# (-r: one thread; live: DPDK's threads run by then, and must not take
# the signal either)
for src in "-r $LOOP" "-i net_pcap0,rx_pcap=$LOOP,infinite_rx=1"; do
	rm -rf "$T/kc" "$T/cc.started"
	mkdir "$T/kc"
	# shellcheck disable=SC2086 # src is an option and its value
	GCAP_CC=$T/slowcc GCAP_KERNEL_CACHE=$T/kc "$GC" -q $src --backend cpu \
		--kernel "$SRC/kernels/examples/flowfirst/flowfirst.c" -w "$T/k.pcap" 2>"$T/gc.err" &
	pid=$!
	wait_for 60 test -e "$T/cc.started" || fail "$src: the kernel's compile never started: $(cat "$T/gc.err")"
	kill -TERM "$pid"
	wait "$pid"; rc=$?
	[ $rc -eq 143 ] || fail "$src: SIGTERM while compiling a kernel: exit $rc (expected 143): $(cat "$T/gc.err")"
	left=$(find "$T/kc" -mindepth 1 -name '.tmp-*' | head -3)
	[ -z "$left" ] || fail "$src: SIGTERM while compiling a kernel left $left"
	[ ! -e "$T/k.pcap" ] || fail "$src: SIGTERM while compiling a kernel left $T/k.pcap"
done

# ~200 MB: eth-mix.pcap's records appended to one header
big=$T/big.pcap
{ cat "$DATA/eth-mix.pcap"; for _ in $(seq 3800); do tail -c +25 "$DATA/eth-mix.pcap"; done; } >"$big"
total=$(count "$big")
for sig in INT TERM; do
	rm -f "$T/b.pcap"
	# an input without an end (a pipe: the file, then its records again
	# and again), so that only the signal ends the run, however fast
	# the reading
	"$GC" -r <(cat "$big"; while tail -c +25 "$DATA/eth-mix.pcap"; do :; done) \
		-w "$T/b.pcap" 2>"$T/gc.err" &
	pid=$!
	sleep 0.2
	kill -"$sig" "$pid"
	wait "$pid"; rc=$?
	if [ -e "$T/b.pcap" ]; then
		[ $rc -eq 0 ] || fail "SIG$sig in -r: exit $rc: $(cat "$T/gc.err")"
		check_readable "$T/b.pcap" 0 || continue
		n=$(count "$T/b.pcap")
		grep -q "^$n packets captured$" "$T/gc.err" || fail "SIG$sig in -r: summary: $(cat "$T/gc.err")"
		note "SIG$sig in -r: $n records"
	else
		[ $rc -eq $((128 + $(kill -l "$sig"))) ] || fail "SIG$sig in set-up: exit $rc: $(cat "$T/gc.err")"
		note "SIG$sig in -r: ended in set-up"
	fi
done
# once the capture runs (records in the file), the stop is the capture's
rm -f "$T/b.pcap"
"$GC" -r "$big" -w "$T/b.pcap" 2>"$T/gc.err" &
pid=$!
for _ in $(seq 1000); do
	[ "$(stat -c %s "$T/b.pcap" 2>/dev/null || echo 0)" -gt 100000 ] && break
	sleep 0.2
done
kill -INT "$pid"
wait "$pid"; rc=$?
[ $rc -eq 0 ] || fail "SIGINT mid -r: exit $rc: $(cat "$T/gc.err")"
check_readable "$T/b.pcap" 1 && note "SIGINT mid -r: $(count "$T/b.pcap") of $total records"
grep -q "packets captured$" "$T/gc.err" || fail "SIGINT mid -r: no summary: $(cat "$T/gc.err")"
finish
