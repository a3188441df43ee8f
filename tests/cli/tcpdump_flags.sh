#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# tcpdump's -B and --immediate-mode, dumpcap's -a autostop conditions:
# taken, mapped onto the ring, the polling and the writer, and bad values
# refused before anything starts; tcpdump's -v -w count on a terminal.
. "$(dirname "$0")/lib.sh"
# -B KiB: the ring that holds as much (2 KiB an mbuf), never below the
# default, --ring's limits
gc -r "$LIVE1" -B 65536 -w "$T/b.pcap" || fail "-B 65536: $(cat "$T/gc.err")"
[ "$(count "$T/b.pcap")" -eq "$(count "$LIVE1")" ] || fail "-B: records"
if ! sanitized; then
	(ulimit -d 2000000 && gc -r "$LIVE1" -B 1048576 -w "$T/b2.pcap"); rc=$?
	[ $rc -eq 1 ] && grep -q -- "--ring 2048 " "$T/gc.err" || fail "-B 1048576 is --ring 2048: $(cat "$T/gc.err")"
fi
# a -B below the default ring's 8 MiB (tcpdump's 4096, libpcap's 2 MiB)
# leaves the default: the refusal under a small ulimit -d names --ring 16
if ! sanitized; then
	(ulimit -d 50000 && gc -r "$LIVE1" -B 1024 -w "$T/b5.pcap"); rc=$?
	[ $rc -eq 1 ] && grep -q -- "--ring 16 " "$T/gc.err" || fail "-B 1024 is not --ring 16: $(cat "$T/gc.err")"
fi
gc -r "$LIVE1" -B 99999999 -w "$T/b3.pcap"; rc=$?
[ $rc -eq 1 ] && grep -q "more than the largest ring" "$T/gc.err" || fail "-B too large: $(cat "$T/gc.err")"
gc -r "$LIVE1" -B 1024 --ring 64 -w "$T/b4.pcap"; rc=$?
[ $rc -eq 1 ] || fail "-B with --ring: exit $rc"
# --immediate-mode: every record in the file as soon as it is captured
gc -i "net_pcap0,rx_pcap=$LIVE1" --immediate-mode --backend cpu -w "$T/im.pcap" --duration 2 \
	--summary-json "$T/im.json" || fail "--immediate-mode: $(cat "$T/gc.err")"
[ "$(count "$T/im.pcap")" -eq "$(count "$LIVE1")" ] || fail "--immediate-mode: records"
# it polls as --busy-poll does (whose summary alone has latency_no_gap_us)
grep -q '"latency_no_gap_us"' "$T/im.json" || fail "--immediate-mode did not busy-poll"
gc -i "net_pcap0,rx_pcap=$LIVE1" --backend cpu -w "$T/im2.pcap" --duration 1 --summary-json "$T/im2.json"
grep -q '"latency_no_gap_us"' "$T/im2.json" && fail "latency_no_gap_us without --busy-poll: the check proves nothing"
# -a files:N with -b packets:N, as dumpcap: N files of N packets, then done
gc -r "$LIVE1" -b packets:5 -a files:2 -w "$T/bp.pcapng" || fail "-b packets:5 -a files:2: $(cat "$T/gc.err")"
mapfile -t bp < <(dcfiles "$T/bp" .pcapng)
[ "${#bp[@]}" -eq 2 ] && [ "$(count "${bp[0]}")" -eq 5 ] && [ "$(count "${bp[1]}")" -eq 5 ] ||
	fail "-b packets:5 -a files:2: $(echo "$T"/bp*)"

# -a packets:N and duration:S (the first met stops)
gc -r "$LIVE1" -a packets:7 -w "$T/a.pcap" || fail "-a packets:7: $(cat "$T/gc.err")"
[ "$(count "$T/a.pcap")" -eq 7 ] || fail "-a packets:7 wrote $(count "$T/a.pcap")"
gc -r "$LIVE1" -a packets:7 -a packets:3 -c 5 -w "$T/a2.pcap" || fail "-a twice: $(cat "$T/gc.err")"
[ "$(count "$T/a2.pcap")" -eq 3 ] || fail "-a packets:3 -c 5 wrote $(count "$T/a2.pcap")"
timeout 30 "$GC" -q -i "net_pcap0,rx_pcap=$LOOP,infinite_rx=1" --mbufs 20000 --backend cpu -a duration:1 -w "$T/a3.pcap" 2>"$T/gc.err"; rc=$?
[ $rc -eq 0 ] || fail "-a duration:1 on an endless port: exit $rc: $(cat "$T/gc.err")"
for bad in duration:0 packets:x size:3 files 'filesize:-1'; do
	gc -r "$LIVE1" -a "$bad" -w "$T/bad.pcap"; rc=$?
	[ $rc -eq 1 ] && [ ! -e "$T/bad.pcap" ] || fail "-a $bad: exit $rc"
done
# -a filesize:KB (1,000 bytes): the file ends at its first record past it
gc -r "$LIVE1" -a filesize:10 -w "$T/fs.pcap" || fail "-a filesize:10: $(cat "$T/gc.err")"
sz=$(stat -c %s "$T/fs.pcap")
[ "$sz" -ge 10000 ] && [ "$sz" -lt 20000 ] || fail "-a filesize:10: $sz bytes"
n=$(count "$T/fs.pcap")
{ tdump "$LIVE1" "$T/fsref.pcap" -c "$n" && "$CMP" -q --usec "$T/fs.pcap" "$T/fsref.pcap"; } ||
	fail "-a filesize:10: not the first $n records"
# two outputs (pcapng's records take more room: it ends first): a record
# the pcap output took counts, though the pcapng one stopped at it
gc -r "$LIVE1" -a filesize:5 -w "$T/fs2.pcap" -w "$T/fs2.pcapng" --summary-json "$T/fs2.json" ||
	fail "-a filesize:5, two outputs: $(cat "$T/gc.err")"
na=$(count "$T/fs2.pcap") nb=$(count "$T/fs2.pcapng")
[ "$na" -ne "$nb" ] || fail "-a filesize:5, two outputs: both hold $na: the case proves nothing"
python3 -c "import json,sys; w=json.load(open(sys.argv[1]))['written']; sys.exit(w != max(int(sys.argv[2]), int(sys.argv[3])))" \
	"$T/fs2.json" "$na" "$nb" || fail "-a filesize:5, two outputs: written $(grep -o '"written": [0-9]*' "$T/fs2.json" | head -1), files $na and $nb"
# the larger cases need ../shared's mix (several MB)
if [ -f "$MIX" ]; then
	gc -r "$MIX" -a filesize:100 -w "$T/fs.pcapng" || fail "-a filesize:100 pcapng: $(cat "$T/gc.err")"
	sz=$(stat -c %s "$T/fs.pcapng")
	[ "$sz" -ge 100000 ] && [ "$sz" -lt 200000 ] || fail "-a filesize:100 pcapng: $sz bytes"
	check_readable "$T/fs.pcapng" 1
	# -a files:N with -C: N files, then the capture stops
	mkdir "$T/rot"
	gc -r "$MIX" -C 1 -a files:2 -w "$T/rot/r.pcap" || fail "-a files:2: $(cat "$T/gc.err")"
	[ "$(ls "$T/rot" | tr '\n' ' ')" = "r.pcap r.pcap1 " ] || fail "-a files:2 -C 1: $(ls "$T/rot")"
else
	note "$MIX missing: -a filesize:100 and -a files:2 -C 1 not tried"
fi
gc -r "$LIVE1" -a files:2 -w "$T/nf.pcap"; rc=$?
[ $rc -eq 1 ] && [ ! -e "$T/nf.pcap" ] || fail "-a files: without -C/-G: exit $rc"
gc -r "$LIVE1" -a filesize:10 -C 1 -w "$T/nf.pcap"; rc=$?
[ $rc -eq 1 ] && [ ! -e "$T/nf.pcap" ] || fail "-a filesize: with -C: exit $rc"
# -v -w on a terminal (script(1) gives the capture one): "Got N", the
# records written so far, once a second over itself, as tcpdump's; the
# capture stops at -c, a few seconds at --rx-rate however loaded
got() { # OUT ARGS...
	local out=$1
	shift
	script -qefc "$(printf '%q ' "$GC" -i "net_pcap0,rx_pcap=$LOOP,infinite_rx=1" \
		--backend cpu --rx-rate 1000 -c 3000 --duration 120 -w "$T/got.pcap" "$@")" \
		/dev/null >"$out" 2>&1
}
got "$T/got.txt" -v || fail "-v on a terminal: exit $?: $(tr '\r' '\n' <"$T/got.txt" | tail -3)"
n=$(grep -ao 'Got [0-9]*'$'\r' "$T/got.txt" | tr -dc '0-9\n' | sort -n | tail -1)
[ -n "$n" ] && [ "$n" -gt 0 ] && [ "$n" -le 3000 ] ||
	fail "-v: no 'Got N' line with 0 < N <= 3000: $(tr '\r' '\n' <"$T/got.txt" | head -5)"
[ "$(count "$T/got.pcap")" -eq 3000 ] || fail "-v: $(count "$T/got.pcap") records, -c 3000"
got "$T/got2.txt" || fail "no -v: exit $?"
grep -aq 'Got [0-9]' "$T/got2.txt" && fail "'Got N' without -v"
got "$T/got3.txt" -v -q || fail "-v -q: exit $?"
grep -aq 'Got [0-9]' "$T/got3.txt" && fail "'Got N' with -q"
# not where stderr is no terminal (a service's journal, a file)
gc -i "net_pcap0,rx_pcap=$LOOP,infinite_rx=1" --backend cpu --rx-rate 1000 -c 3000 -v \
	-w "$T/got4.pcap" || fail "-v: $(tail -2 "$T/gc.err")"
grep -aq 'Got [0-9]' "$T/gc.err" && fail "'Got N' into a file"
finish
