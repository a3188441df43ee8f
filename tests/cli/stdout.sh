#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# -w - writes pcap to stdout: piped into tcpdump -r -, and equal to -w FILE;
# its reader leaving ends the capture cleanly, as tcpdump's SIGPIPE does.
. "$(dirname "$0")/lib.sh"
need tcpdump
e='tcp or udp'
gc -r "$LIVE1" -w "$T/file.pcap" "$e" || die "$(cat "$T/gc.err")"
n=$(count "$T/file.pcap")
m=$("$GC" -q -r "$LIVE1" -w - "$e" 2>"$T/gc.err" | tcpdump -r - 2>/dev/null | wc -l)
[ "$m" -eq "$n" ] || fail "tcpdump -r - read $m packets, expected $n"
"$GC" -q -r "$LIVE1" -w - "$e" 2>"$T/gc.err" > "$T/stdout.pcap" || fail "exit $?"
"$CMP" -q "$T/stdout.pcap" "$T/file.pcap" || fail "stdout differs from -w FILE"
# live too, with -c
"$GC" -q -i "net_pcap0,rx_pcap=$LIVE1" -w - -c "$n" --duration 20 "$e" 2>"$T/gc.err" |
	tcpdump -r - -w "$T/live.pcap" 2>/dev/null
"$CMP" -q --no-ts --usec "$T/live.pcap" "$T/file.pcap" || fail "live stdout differs"
# a closed pipe (-w - | head) ends the capture as tcpdump's SIGPIPE does:
# at once (not at --duration), exit 0, no error line, and what reached
# no reader counted as write failed (received = written + that)
closed() { # WHAT ARGS...: gpu-capture ARGS -w - | head, then the checks
	local what=$1 rc start=$SECONDS
	shift
	timeout 100 "$GC" -q "$@" -w - --summary-json "$T/c.json" 2>"$T/gc.err" | head -c 100 >/dev/null
	rc=${PIPESTATUS[0]}
	[ "$rc" -eq 0 ] && [ ! -s "$T/gc.err" ] || { fail "$what: exit $rc ($(cat "$T/gc.err"))"; return; }
	[ $((SECONDS - start)) -lt 50 ] || fail "$what: ran $((SECONDS - start)) s: not ended by the closed pipe"
	python3 - "$T/c.json" <<'PY' || fail "$what: counts: $(cat "$T/c.json")"
import json, sys
s = json.load(open(sys.argv[1]))
lost = s["dropped"]["write_failed"]
print("received", s["received"], "captured", s["captured"], "written", s["written"], "write_failed", lost)
assert s["captured"] == s["written"] + lost, (s["captured"], s["written"], lost)
PY
}
closed "live" -i "net_pcap0,rx_pcap=$LOOP,infinite_rx=1" --duration 60 -U
# -r from an input without an end: only the closed pipe ends the run
closed "-r" -r <(cat "$LIVE1"; while tail -c +25 "$LIVE1"; do :; done)
# the reader gone before the header reached it (| true): as clean
timeout 60 "$GC" -q -r "$LIVE1" -w - 2>"$T/gc.err" | true
rc=${PIPESTATUS[0]}
[ "$rc" -eq 0 ] && [ ! -s "$T/gc.err" ] || fail "| true: exit $rc ($(cat "$T/gc.err"))"
finish
