#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# dumpcap's -b ring buffer conditions and tcpdump's -z: -b packets:N makes
# a new file every N packets (named as -C names them), -b files:N keeps a
# ring of N, -b filesize:KB is -C in kB; -z COMMAND runs COMMAND FILE on
# each file a rotation closes (not the last, as tcpdump, unless the output
# ended itself: -a files:, as -G with -W), execed without a
# shell (a name with a space and a ';' arrives whole), the file complete,
# and no child left a zombie. Bad values are refused before anything runs.
. "$(dirname "$0")/lib.sh"
need tcpdump
n=$(count "$LIVE1")
cat >"$T/z.sh" <<SH
#!/bin/sh
# one line per file: its name and the records it holds
echo "\$# \$1 \$("$CMP" --count "\$1")" >>"$T/z.log"
SH
chmod +x "$T/z.sh"
out="$T/a b;c.pcap"
nfiles=$(((n + 39) / 40))
# the file replayed, the capture idles (until SIGINT): its commands have
# all ended by then, and each one was reaped (none left a zombie)
"$GC" -q -i "net_pcap0,rx_pcap=$LIVE1" -w "$out" -b packets:40 -z "$T/z.sh" \
	--batch 4 --duration 20 2>"$T/gc.err" &
pid=$!
for _ in $(seq 1 100); do
	[ "$(cat "$T/z.log" 2>/dev/null | wc -l)" -ge $((nfiles - 1)) ] && break
	sleep 0.1
done
for _ in $(seq 1 50); do # (a loaded machine may run the handler late)
	z=$(ps -o stat= --ppid "$pid" 2>/dev/null | grep -c '^Z')
	[ "$z" -eq 0 ] && break
	sleep 0.1
done
kill -0 "$pid" 2>/dev/null || fail "-z: the capture ended before the check"
[ "$z" -eq 0 ] || fail "-z: $z zombie children left"
kill -INT "$pid"
wait "$pid" || fail "-z: exit $?: $(cat "$T/gc.err")"
total=0
for ((k = 0; k < nfiles; k++)); do
	f=$out
	[ $k -gt 0 ] && f="$out$k"
	c=$(count "$f") || { fail "$f unreadable"; continue; }
	total=$((total + c))
	[ $k -lt $((nfiles - 1)) ] && [ "$c" -ne 40 ] && fail "$f: $c records, want 40"
done
[ "$total" -eq "$n" ] || fail "-b packets:40: $total records in $nfiles files, want $n"
[ ! -e "$out$nfiles" ] || fail "-b packets:40: a file too many"
# the command ran once per closed file, with its whole name and its records
zlines() { [ "$(wc -l <"$T/z.log" 2>/dev/null || echo 0)" -ge "$1" ]; }
wait_for 300 zlines $((nfiles - 1))
[ "$(wc -l <"$T/z.log")" -eq $((nfiles - 1)) ] || fail "-z ran $(wc -l <"$T/z.log") times, want $((nfiles - 1)): $(cat "$T/z.log")"
grep -qxF "1 $out 40" "$T/z.log" || fail "-z: not told of '$out' whole: $(cat "$T/z.log")"

# an output that ends itself (-a files:2, as -G with -W) hands its last
# file to -z too, once closed (tcpdump's -G -W does)
: >"$T/z.log"
gc -r "$LIVE1" -w "$T/end.pcap" -b packets:40 -a files:2 -z "$T/z.sh" || fail "-a files:2 -z: $(cat "$T/gc.err")"
wait_for 300 zlines 2 # (at the lowest priority: late on a loaded machine)
grep -qxF "1 $T/end.pcap 40" "$T/z.log" && grep -qxF "1 $T/end.pcap1 40" "$T/z.log" ||
	fail "-a files:2 -z: not told of both files whole: $(cat "$T/z.log")"

# -b files:3 with packets:20: a ring of three (FILE0..FILE2)
gc -i "net_pcap0,rx_pcap=$LIVE1" -w "$T/ring.pcap" -b packets:20 -b files:3 -c "$n" --duration 60 ||
	fail "-b files:3: exit $?: $(cat "$T/gc.err")"
for k in 0 1 2; do [ -f "$T/ring.pcap$k" ] || fail "ring.pcap$k missing"; done
[ ! -e "$T/ring.pcap3" ] && [ ! -e "$T/ring.pcap" ] || fail "-b files:3: not a ring of 3"
# -b filesize:2: a new file once one holds more than 2000 bytes
gc -i "net_pcap0,rx_pcap=$LIVE1" -w "$T/sz.pcap" -b filesize:2 -c 30 --duration 60 ||
	fail "-b filesize: exit $?: $(cat "$T/gc.err")"
[ -f "$T/sz.pcap1" ] || fail "-b filesize:2 made one file"

for bad in packets:0 packets:x filesize: size:3 files:0 nothing; do
	gc -i "net_pcap0,rx_pcap=$LIVE1" -w "$T/bad.pcap" -b "$bad"; rc=$?
	[ $rc -eq 1 ] && grep -q -- "-b" "$T/gc.err" || fail "-b $bad: exit $rc: $(cat "$T/gc.err")"
done
gc -i "net_pcap0,rx_pcap=$LIVE1" -w "$T/bad.pcap" -z "$T/z.sh"; rc=$?
[ $rc -eq 1 ] && grep -q -- "-z" "$T/gc.err" || fail "-z without rotation: exit $rc"
[ ! -e "$T/bad.pcap" ] || fail "a refused command line created its output"
finish
