#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# One pass, several outputs, each with its own filter: each file equals
# tcpdump's run of its expression (pcap and pcapng outputs mixed). Where
# one output's reader goes away mid-run, the run fails and its counts
# still add up: a record another output holds is written, not lost.
. "$(dirname "$0")/lib.sh"
need tcpdump
e1='tcp port 80 or udp port 53'
e2='ip6 and not icmp6'
e3='vlan or arp'
for f in "$DATA/eth-mix.pcap" "$DATA/eth-mix.pcapng" ${CORPUS:+$(ls "$CORPUS"/802.1ad_QinQ.pcap 2>/dev/null)}; do
	gc -r "$f" -w "$T/a.pcap:$e1" -w "$T/b.pcapng:$e2" -w "$T/c.pcap:$e3" -w "$T/d.pcap" 'greater 100' ||
		{ fail "$f: exit $?: $(cat "$T/gc.err")"; continue; }
	i=0
	for pair in "a.pcap|$e1" "b.pcapng|$e2" "c.pcap|$e3" "d.pcap|greater 100"; do
		o=${pair%%|*}; e=${pair#*|}
		tdump "$f" "$T/ref$i.pcap" "$e" || fail "tcpdump '$e'"
		"$CMP" -q --usec "$T/$o" "$T/ref$i.pcap" || fail "$(basename "$f") $o '$e' differs"
		i=$((i + 1))
	done
	# the outputs must differ from each other (or the test proves little)
	tot=$((${tot:-0} + $(count "$T/a.pcap") + $(count "$T/b.pcapng") + $(count "$T/c.pcap")))
done
[ "$tot" -gt 0 ] || fail "every output is empty"
# the second output a FIFO whose reader leaves after 300,000 bytes
big=$T/big.pcap
{ cat "$DATA/eth-mix.pcap"; for _ in $(seq 399); do tail -c +25 "$DATA/eth-mix.pcap"; done; } >"$big"
mkfifo "$T/o.fifo"
timeout 60 head -c 300000 "$T/o.fifo" >/dev/null &
gc -r "$big" -w "$T/whole.pcap" -w "$T/o.fifo" --summary-json "$T/j.json"; rc=$?
wait
[ $rc -eq 1 ] || fail "a reader gone: exit $rc"
python3 - "$T/j.json" "$(count "$T/whole.pcap")" <<'PY' || fail "a reader gone: $(cat "$T/j.json")"
import json, sys
s, n = json.load(open(sys.argv[1])), int(sys.argv[2])
assert s["written"] == n, (s["written"], n)
lost = s["dropped"]["write_failed"] - sum(o["write_failed"] for o in s["outputs"])
# every record the run took is in the healthy file or reached no output
assert lost == s["received"] - n, (lost, s["received"], n)
assert n < s["received"], "the run did not stop early: the case proves nothing"
PY
finish
