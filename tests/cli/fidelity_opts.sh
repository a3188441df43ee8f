#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# The capture-fidelity options on the command line: bad values and
# combinations refused with one line and exit 1 before anything starts
# (no output created), and each option named in --help and in the man page.
. "$(dirname "$0")/lib.sh"
refuse() { # WHAT-THE-MESSAGE-NAMES ARGS...
	local what=$1 rc
	shift
	gc "$@"
	rc=$?
	[ $rc -eq 1 ] && grep -q -- "$what" "$T/gc.err" && [ "$(wc -l <"$T/gc.err")" -eq 1 ] ||
		fail "$*: exit $rc: $(cat "$T/gc.err")"
	[ ! -e "$T/o.pcap" ] || { fail "$*: created its output"; rm -f "$T/o.pcap"; }
}
P="net_pcap0,rx_pcap=$LIVE1"
refuse "-j" -i "$P" -w "$T/o.pcap" -j hardware
refuse "-j" -i "$P" -w "$T/o.pcap" -j
refuse "live ports" -r "$LIVE1" -w "$T/o.pcap" -j host
refuse "live ports" -r "$LIVE1" -w "$T/o.pcap" -p
refuse "live ports" -r "$LIVE1" -J
refuse "time-stamp-precision" -i "$P" -w "$T/o.pcap" --time-stamp-precision milli
refuse "-z" -i "$P" -w "$T/o.pcap" -z ""
refuse "-b" -i "$P" -w "$T/o.pcap" -b packets
refuse "time-order-window" -i "$P" -w "$T/o.pcap" --time-order-window 60001
# -b names files as dumpcap does, -W as tcpdump does: refused together
# (not "-W needs -C or -G"); -b files: is dumpcap's ring
refuse "give one kind" -i "$P" -w "$T/w.pcap" -b packets:50 -W 2
refuse "needs a condition" -i "$P" -w "$T/w.pcap" -b files:3 -a files:2
# rotation writes files: refused on standard output before anything runs
refuse "standard output" -i "$P" -w - -b packets:5
refuse "standard output" -i "$P" -w "$T/w.pcap" -w - -C 1
gc -i "$P" -w "$T/w.pcap" -b packets:50 -b files:2 -c 120 --duration 30 || fail "-b packets -b files: exit $?: $(cat "$T/gc.err")"
[ "$(dcfiles "$T/w" .pcap | wc -l)" -eq 2 ] || fail "-b packets:50 -b files:2: not a ring of 2: $(echo "$T"/w*)"
# --nano and --time-stamp-precision nano: the nanosecond magic
gc -i "$P" -w "$T/n.pcap" --time-stamp-precision micro --nano -c 5 --duration 30 || fail "--nano: exit $?"
[ "$(od -An -tx4 -N4 "$T/n.pcap" | tr -d ' ')" = a1b23c4d ] || fail "--nano: not the nanosecond magic"

"$GC" --help >"$T/help" || fail "--help"
man=$SRC/docs/gpu-capture.8
for o in -j -J -p -z -b --time-stamp-precision --no-time-order --time-order-window; do
	grep -q -- " $o" "$T/help" || fail "--help does not name $o"
	grep -q -- "$(echo "$o" | sed 's/-/\\\\-/g')" "$man" || fail "the man page does not name $o"
done
finish
