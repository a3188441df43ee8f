#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# tcpdump's signals mid-capture, none of which ends it or loses a packet:
# SIGUSR1 prints the stats line on stderr, SIGUSR2 flushes the outputs,
# SIGHUP closes each output's file and opens the next (-C's names: FILE,
# FILE1, ...; a pcapng file closed so gets its ISBs). The input is replayed
# slowly (--rx-rate, small batches) and the capture ends by itself (-c): the files hold
# every packet of tcpdump's offline run, in order, across the rotation.
# SIGUSR1's rates are those since its last line. Under nohup (SIGHUP
# ignored from the start) SIGHUP stays ignored.
. "$(dirname "$0")/lib.sh"
need tcpdump
need mergecap
e='tcp or udp'
tdump "$LIVE1" "$T/ref.pcap" "$e" || die "tcpdump"
n=$(count "$T/ref.pcap")
for out in s.pcap s.pcapng; do
	# (SIGHUP as the default: a run under nohup, the suite's too, would
	# leave it ignored, below)
	env --default-signal=HUP "$GC" -q -i "net_pcap0,rx_pcap=$LIVE1" -w "$T/$out" -c "$n" --rx-rate 20 --batch 4 --duration 120 "$e" \
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

# a run started with SIGHUP ignored (nohup) keeps it ignored, as tcpdump
# does: the terminal's hangup neither rotates the file nor ends the run
env --ignore-signal=HUP "$GC" -q -i "net_pcap0,rx_pcap=$LOOP,infinite_rx=1" -w "$T/h.pcap" \
	--rx-rate 20000 --duration 60 2>"$T/h.err" &
pid=$!
wait_for 60 has_records "$T/h.pcap" || fail "nohup: no records: $(cat "$T/h.err")"
kill -HUP "$pid"
wait_for 5 test -e "$T/h.pcap1" && fail "nohup: SIGHUP rotated the file"
kill -0 "$pid" 2>/dev/null || fail "nohup: SIGHUP ended the run"
kill -INT "$pid"
wait "$pid" || fail "nohup: exit $?: $(cat "$T/h.err")"

# SIGUSR1's rates are since its last line, not since the start: two
# lines 2 s apart, the second's rate against what its received count
# grew by over the time between the signals (the main loop answers
# within 20 ms; since the start would read half)
"$GC" -q -i "net_pcap0,rx_pcap=$LOOP,infinite_rx=1" -w /dev/null --rx-rate 200000 \
	--duration 60 2>"$T/u.err" &
pid=$!
sleep 2
kill -USR1 "$pid"
t1=$(date +%s.%N)
wait_for 10 grep -q "Mpps" "$T/u.err" || fail "SIGUSR1: no first line: $(cat "$T/u.err")"
sleep 2
kill -USR1 "$pid"
t2=$(date +%s.%N)
wait_for 10 test "$(grep -c Mpps "$T/u.err")" -ge 2 || fail "SIGUSR1: no second line"
kill -INT "$pid"
wait "$pid"
python3 - "$T/u.err" "$t1" "$t2" <<'PY' || fail "SIGUSR1: $(grep Mpps "$T/u.err")"
import re, sys
lines = [l for l in open(sys.argv[1]) if "Mpps" in l][:2]
(r1, n1), (r2, n2) = [(float(m.group(1)), int(m.group(2))) for m in
                      (re.search(r"([0-9.]+) Mpps .*received ([0-9]+)", l) for l in lines)]
want = (n2 - n1) / (float(sys.argv[3]) - float(sys.argv[2])) / 1e6
print("second line %.3f Mpps, its count over the time between the signals %.3f" % (r2, want))
sys.exit(0 if want > 0 and 0.75 < r2 / want < 1.33 else 1)
PY
finish
