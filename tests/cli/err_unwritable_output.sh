#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# -w into a missing directory, onto a directory, into a read-only
# directory (non-root): exit 1, one line naming the file; live mode too.
. "$(dirname "$0")/lib.sh"
mkdir "$T/dir"
for o in "$T/nodir/x.pcap" "$T/dir" "$T/nodir/x.pcapng"; do
	gc -r "$LIVE1" -w "$o" tcp; rc=$?
	[ $rc -eq 1 ] || fail "offline '$o': exit $rc"
	grep -q "$o\|No such file\|Is a directory" "$T/gc.err" || fail "offline '$o': $(cat "$T/gc.err")"
	gc -i "net_pcap0,rx_pcap=$LIVE1" -w "$o" --duration 5 tcp; rc=$?
	[ $rc -eq 1 ] || fail "live '$o': exit $rc"
	[ -s "$T/gc.err" ] || fail "live '$o': no message"
done
if [ "$(id -u)" -ne 0 ]; then
	mkdir "$T/ro"; chmod 555 "$T/ro"
	gc -r "$LIVE1" -w "$T/ro/x.pcap"; rc=$?
	[ $rc -eq 1 ] || fail "read-only dir: exit $rc"
fi
# the good outputs of a multi-output run are not left half-made when
# another output is unwritable: the run does not start
gc -r "$LIVE1" -w "$T/good.pcap:tcp" -w "$T/nodir/bad.pcap:udp"; rc=$?
[ $rc -eq 1 ] || fail "multi-output with one bad path: exit $rc"
finish
