#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# tcpdump's signals mid-capture, none of which ends it or loses a packet:
# SIGUSR1 prints the stats line on stderr, SIGUSR2 flushes the outputs,
# SIGHUP closes each output's file and opens the next (-C's names: FILE,
# FILE1, ...; a pcapng file closed so gets its ISBs). The input is replayed
# slowly (--rx-rate, small batches) and the capture ends by itself (-c): the files hold
# every packet of tcpdump's offline run, in order, across the rotation.
. "$(dirname "$0")/lib.sh"
need tcpdump
need mergecap
e='tcp or udp'
tdump "$LIVE1" "$T/ref.pcap" "$e" || die "tcpdump"
n=$(count "$T/ref.pcap")
for out in s.pcap s.pcapng; do
	"$GC" -q -i "net_pcap0,rx_pcap=$LIVE1" -w "$T/$out" -c "$n" --rx-rate 20 --batch 4 --duration 120 "$e" \
		2>"$T/gc.err" &
	pid=$!
	# the capture runs once its first records reach the file
	wait_for 60 test -s "$T/$out" || fail "$out: no file"
	wait_for 60 has_records "$T/$out" ||
		fail "$out: no records"
	kill -USR1 "$pid"
	wait_for 10 grep -q "gpu-capture: .* Mpps .*received [0-9]* captured" "$T/gc.err" ||
		fail "$out: SIGUSR1 printed no stats line: $(cat "$T/gc.err")"
	kill -USR2 "$pid"
	sleep 0.5
	kill -HUP "$pid"
	wait_for 10 test -e "$T/${out}1" || fail "$out: SIGHUP opened no ${out}1"
	kill -0 "$pid" 2>/dev/null || fail "$out: the signals ended the capture"
	wait "$pid"; rc=$?
	[ $rc -eq 0 ] || fail "$out: exit $rc: $(cat "$T/gc.err")"
	a=$(count "$T/$out") b=$(count "$T/${out}1")
	[ $((a + b)) -eq "$n" ] && [ "$a" -gt 0 ] ||
		fail "$out: $a + $b records after SIGHUP, tcpdump has $n"
	mergecap -a -F pcap -w "$T/both.pcap" "$T/$out" "$T/${out}1" 2>/dev/null &&
		"$CMP" -q "$T/both.pcap" "$T/ref.pcap" || fail "$out: the two files are not tcpdump's records"
	[ ! -e "$T/${out}2" ] || fail "$out: a file too many"
	rm -f "$T/$out" "$T/${out}1"
done
finish
