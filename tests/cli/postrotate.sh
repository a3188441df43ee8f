#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# dumpcap's -b ring buffer conditions and tcpdump's -z: -b names every file
# as dumpcap does (PREFIX_NNNNN_YYYYmmddHHMMSS.EXT, from 00001), packets:N
# makes a new file every N packets, files:N keeps a ring of the last N
# (the older removed, the numbers going on), filesize:KB every KB kB,
# interval:S on the clock's multiples, nametimenum:2 the time first;
# -z COMMAND runs COMMAND FILE on each file a rotation closes (not the
# last, as tcpdump, unless the output ended itself: -a files:, as -G with
# -W), execed without a shell (a name with a space and a ';' arrives
# whole), the file complete, and no child left a zombie. Bad values, and
# -b beside tcpdump's -C/-G/-W, are refused before anything runs.
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
[ ! -e "$out" ] || fail "-b: the file was named as -w gives it, not as dumpcap names it"
mapfile -t files < <(dcfiles "$T/a b;c" .pcap)
[ "${#files[@]}" -eq "$nfiles" ] || fail "-b packets:40: ${#files[@]} files, want $nfiles: $(ls "$T")"
total=0
for ((k = 0; k < ${#files[@]}; k++)); do
	f=${files[$k]}
	case ${f#"$T/a b;c_"} in
	"$(printf %05d $((k + 1)))"_*.pcap) ;;
	*) fail "file $((k + 1)) is named $f" ;;
	esac
	c=$(count "$f") || { fail "$f unreadable"; continue; }
	total=$((total + c))
	[ $k -lt $((nfiles - 1)) ] && [ "$c" -ne 40 ] && fail "$f: $c records, want 40"
done
[ "$total" -eq "$n" ] || fail "-b packets:40: $total records in $nfiles files, want $n"
# the command ran once per closed file, with its whole name and its records
zlines() { [ "$(wc -l <"$T/z.log" 2>/dev/null || echo 0)" -ge "$1" ]; }
wait_for 300 zlines $((nfiles - 1))
[ "$(wc -l <"$T/z.log")" -eq $((nfiles - 1)) ] || fail "-z ran $(wc -l <"$T/z.log") times, want $((nfiles - 1)): $(cat "$T/z.log")"
grep -qxF "1 ${files[0]} 40" "$T/z.log" || fail "-z: not told of '${files[0]}' whole: $(cat "$T/z.log")"

# an output that ends itself (-a files:2, as -G with -W) hands its last
# file to -z too, once closed (tcpdump's -G -W does)
: >"$T/z.log"
gc -r "$LIVE1" -w "$T/end.pcap" -b packets:40 -a files:2 -z "$T/z.sh" || fail "-a files:2 -z: $(cat "$T/gc.err")"
mapfile -t files < <(dcfiles "$T/end" .pcap)
wait_for 300 zlines 2 # (at the lowest priority: late on a loaded machine)
[ "${#files[@]}" -eq 2 ] && grep -qxF "1 ${files[0]} 40" "$T/z.log" && grep -qxF "1 ${files[1]} 40" "$T/z.log" ||
	fail "-a files:2 -z: not told of both files whole: ${files[*]}: $(cat "$T/z.log")"

# -b files:3 with packets:20: the ring keeps the last three files, the
# others removed, numbered on; together the capture's last records
ring=$(((n + 19) / 20))
gc -i "net_pcap0,rx_pcap=$LIVE1" -w "$T/ring.pcap" -b packets:20 -b files:3 -c "$n" --duration 60 ||
	fail "-b files:3: exit $?: $(cat "$T/gc.err")"
mapfile -t files < <(dcfiles "$T/ring" .pcap)
[ "$ring" -gt 3 ] && [ "${#files[@]}" -eq 3 ] && [ "$(compgen -G "$T/ring*" | wc -l)" -eq 3 ] ||
	fail "-b files:3: not a ring of 3 of $ring files: $(ls "$T")"
for ((k = 0; k < 3; k++)); do
	case ${files[$k]#"$T/ring_"} in
	"$(printf %05d $((ring - 2 + k)))"_*) ;;
	*) fail "-b files:3: file $((ring - 2 + k)) is named ${files[$k]}" ;;
	esac
done
tail_n=$((n - 20 * (ring - 3)))
kept=0
for f in "${files[@]}"; do kept=$((kept + $(count "$f"))); done
[ "$kept" -eq "$tail_n" ] || fail "-b files:3: the ring holds $kept records, want the last $tail_n"
# -b filesize:2: a new file once one holds more than 2000 bytes
gc -i "net_pcap0,rx_pcap=$LIVE1" -w "$T/sz.pcap" -b filesize:2 -c 30 --duration 60 ||
	fail "-b filesize: exit $?: $(cat "$T/gc.err")"
[ "$(dcfiles "$T/sz" .pcap | wc -l)" -ge 2 ] || fail "-b filesize:2 made one file: $(ls "$T")"

# -b interval:1 and nametimenum:2: a file each second on the second,
# named time first; the run's files hold every record
gc -i "net_pcap0,rx_pcap=$LIVE1" -w "$T/iv.pcap" -b interval:1 -b nametimenum:2 --rx-rate 50 --batch 4 \
	-c "$n" --duration 60 || fail "-b interval:1: exit $?: $(cat "$T/gc.err")"
d='[0-9]'
mapfile -t files < <(compgen -G "$T/iv_$d$d$d$d$d$d$d$d$d$d$d$d$d${d}_$d$d$d$d$d.pcap" | sort)
[ "${#files[@]}" -ge 2 ] || fail "-b interval:1 nametimenum:2: ${#files[@]} files: $(ls "$T")"
total=0
for f in "${files[@]}"; do total=$((total + $(count "$f"))); done
[ "$total" -eq "$n" ] || fail "-b interval:1: $total records in ${#files[@]} files, want $n"
for bad in packets:0 packets:x filesize: size:3 files:0 nothing files:2 nametimenum:0 interval:0 \
	nametimenum:2; do
	gc -i "net_pcap0,rx_pcap=$LIVE1" -w "$T/bad.pcap" -b "$bad"; rc=$?
	[ $rc -eq 1 ] && grep -q -- "-b" "$T/gc.err" || fail "-b $bad: exit $rc: $(cat "$T/gc.err")"
done
gc -i "net_pcap0,rx_pcap=$LIVE1" -w "$T/bad.pcap" -G 10 -b interval:5; rc=$?
[ $rc -eq 1 ] && grep -q "give one kind" "$T/gc.err" || fail "-G with -b interval:: exit $rc: $(cat "$T/gc.err")"
# the two kinds of names do not mix
for tcpd in "-C 1" "-G 5" "-W 2"; do
	# shellcheck disable=SC2086 # (the option and its value)
	gc -i "net_pcap0,rx_pcap=$LIVE1" -w "$T/bad.pcap" -b packets:5 $tcpd; rc=$?
	[ $rc -eq 1 ] && grep -q "give one kind" "$T/gc.err" || fail "-b with $tcpd: exit $rc: $(cat "$T/gc.err")"
done
gc -i "net_pcap0,rx_pcap=$LIVE1" -w "$T/bad.pcap" -z "$T/z.sh"; rc=$?
[ $rc -eq 1 ] && grep -q -- "-z" "$T/gc.err" || fail "-z without rotation: exit $rc"
compgen -G "$T/bad*" >/dev/null && fail "a refused command line created its output: $(ls "$T")"
finish
