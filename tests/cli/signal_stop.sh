#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# SIGTERM and SIGINT mid-capture (infinite replay): exit 0, and the file
# (pcap and pcapng) reads back with libpcap and holds packets (--rx-rate
# keeps the files small).
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
finish
