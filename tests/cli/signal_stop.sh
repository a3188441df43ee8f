#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# SIGTERM and SIGINT mid-capture (infinite replay): exit 0, and the file
# (pcap and pcapng) reads back with libpcap and holds packets (--rx-rate
# keeps the files small). -r from a FIFO whose writer went quiet: the
# records read go on (-U: into the file) without waiting for more bytes,
# and SIGINT, -c and -a duration: end the run (exit 0) with every record
# read in the file, not with the reader left waiting for the writer's
# next bytes; so does SIGINT where libpcap reads the pipe (a link type
# the reader leaves to it).
. "$(dirname "$0")/lib.sh"
for sig in TERM INT; do
	for o in out.pcap out.pcapng; do
		rm -f "$T/$o"
		"$GC" -q -i "net_pcap0,rx_pcap=$LOOP,infinite_rx=1" -w "$T/$o" --duration 30 --rx-rate 20000 tcp \
			2>"$T/gc.err" &
		pid=$!
		# mid-capture: once its first records reach the file (a signal
		# during set-up ends it at once, signal_setup.sh)
		wait_for 60 has_records "$T/$o" || fail "SIG$sig $o: no records: $(cat "$T/gc.err")"
		kill -"$sig" "$pid"
		start=$SECONDS
		wait "$pid"; rc=$?
		[ $rc -eq 0 ] || fail "SIG$sig $o: exit $rc: $(cat "$T/gc.err")"
		[ $((SECONDS - start)) -le 10 ] || fail "SIG$sig $o: took $((SECONDS - start)) s to stop"
		check_readable "$T/$o" 100 && note "SIG$sig $o: $(count "$T/$o") records"
	done
done
# a feeder that writes FILE into the FIFO and, once the reader has taken
# every byte, FILE's records again (a burst that starts a batch: the
# reader holds no record then), waits until those are taken too, says so
# (a file), then keeps the FIFO open, quiet
feed() { # FILE FIFO MARK
	python3 - "$@" <<'PY' &
import array, fcntl, os, sys, termios, time
data = open(sys.argv[1], 'rb').read()
fd = os.open(sys.argv[2], os.O_WRONLY)
def drained():
    left = array.array('i', [0])
    while True:
        fcntl.ioctl(fd, termios.FIONREAD, left)
        if left[0] == 0:
            return
        time.sleep(0.05)
os.write(fd, data)
drained()
time.sleep(0.5)
os.write(fd, data[24:])
drained()
open(sys.argv[3], 'w').close()
time.sleep(600)
PY
	fpid=$!
}
want=$((2 * $(count "$LIVE1")))
# LIVE1 as link type 220 (USB): libpcap reads it, not the reader's parser
python3 -c "import sys; d = bytearray(open(sys.argv[1], 'rb').read()); d[20:24] = (220).to_bytes(4, 'little'); open(sys.argv[2], 'wb').write(d)" \
	"$LIVE1" "$T/usb.pcap"
for how in INT c duration lp; do
	rm -f "$T/in.fifo" "$T/drained" "$T/f.pcap"
	mkfifo "$T/in.fifo"
	src=$LIVE1
	[ $how = lp ] && src=$T/usb.pcap
	feed "$src" "$T/in.fifo" "$T/drained"
	# -U: each record in the file as it is handed on
	x=(-U)
	[ $how = c ] && x=(-c $((want - 1)))
	[ $how = duration ] && x=(-a duration:1)
	# batches of 8: the 184 records end a batch, so that the stop finds
	# libpcap waiting with no record of its own
	[ $how = lp ] && x=(--batch 8)
	timeout -k 5 120 "$GC" -q --backend cpu -r "$T/in.fifo" -w "$T/f.pcap" "${x[@]}" 2>"$T/gc.err" &
	pid=$!
	wait_for 60 test -e "$T/drained" || fail "-r FIFO $how: the feeder's bytes were never taken"
	if [ $how = INT ]; then
		# what was read goes on while the writer is quiet
		wait_for 60 has_records "$T/f.pcap" "$want" ||
			fail "-r FIFO: $(count "$T/f.pcap") of $want records on while the pipe was quiet"
	fi
	# (libpcap's reads hold what they read until the next bytes or the
	# stop: the stop alone is checked there)
	[ $how = INT ] || [ $how = lp ] && kill -INT "$pid"
	wait "$pid"; rc=$?
	kill "$fpid" 2>/dev/null
	wait "$fpid" 2>/dev/null
	n=$([ $how = c ] && echo $((want - 1)) || echo "$want")
	[ $rc -eq 0 ] || fail "-r FIFO, $how: exit $rc: $(cat "$T/gc.err")"
	[ "$(count "$T/f.pcap")" -eq "$n" ] || fail "-r FIFO, $how: $(count "$T/f.pcap") records of $n"
done
# a gzip'd FIFO decoded on one thread (one CPU: no parallel decoding):
# what it decoded goes on while the pipe is quiet, and -a duration: ends
# the run (the decoder kept reading for a whole chunk)
gzip -c "$LIVE1" >"$T/in.gz"
rm -f "$T/in.fifo" "$T/f.pcap"
mkfifo "$T/in.fifo"
python3 - "$T/in.gz" "$T/in.fifo" <<'PY' &
import os, sys, time
fd = os.open(sys.argv[2], os.O_WRONLY)
os.write(fd, open(sys.argv[1], 'rb').read())
time.sleep(600)
PY
fpid=$!
taskset -c 0 timeout -k 5 120 "$GC" -q --backend cpu -r "$T/in.fifo" -w "$T/f.pcap" -a duration:2 \
	2>"$T/gc.err"; rc=$?
kill "$fpid" 2>/dev/null
wait "$fpid" 2>/dev/null
[ $rc -eq 0 ] || fail "-r gzip'd FIFO, duration: exit $rc: $(cat "$T/gc.err")"
[ "$(count "$T/f.pcap")" -eq "$(count "$LIVE1")" ] ||
	fail "-r gzip'd FIFO: $(count "$T/f.pcap") records of $(count "$LIVE1")"
finish
