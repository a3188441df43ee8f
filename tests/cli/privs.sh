#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# -Z nobody (as root): once set up, every thread of the process is
# nobody's uid and gid with nobody's groups and no capability, the capture
# still writes, and every file (the first and the rotated ones) is
# nobody's, mode 0644 under umask 022 as tcpdump's (-g: 0640); tcpdump -Z
# leaves its file with the same owner. An unknown user stops the run
# before anything is created.
. "$(dirname "$0")/lib.sh"
[ "$(id -u)" -eq 0 ] || skip "needs root"
id nobody >/dev/null 2>&1 || skip "no user nobody"
umask 022
uid=$(id -u nobody)
gid=$(id -g nobody)
chmod 755 "$T"
mkdir -m 777 "$T/z"
owner() { stat -c '%u:%g %a' "$1"; }

# live, rotating every megabyte (about a second), stopped by SIGTERM
"$GC" -Z nobody -i "net_pcap0,rx_pcap=$LOOP,infinite_rx=1" -w "$T/z/live.pcap" -C 1 \
	--duration 120 --rx-rate 5000 2>"$T/gc.err" &
pid=$!
for _ in $(seq 600); do
	grep -q "dropped privileges to nobody" "$T/gc.err" && break
	sleep 0.1
done
grep -q "dropped privileges to nobody" "$T/gc.err" || fail "no drop announced: $(cat "$T/gc.err")"
sleep 3
ntask=0
for st in /proc/$pid/task/*/status; do
	[ -r "$st" ] || continue
	ntask=$((ntask + 1))
	name=$(awk '/^Name:/ {print $2}' "$st")
	read -r _ r e s f < <(grep '^Uid:' "$st")
	[ "$r $e $s $f" = "$uid $uid $uid $uid" ] || fail "thread $name: Uid $r $e $s $f"
	read -r _ r e s f < <(grep '^Gid:' "$st")
	[ "$r $e $s $f" = "$gid $gid $gid $gid" ] || fail "thread $name: Gid $r $e $s $f"
	for c in CapPrm CapEff CapAmb; do
		v=$(awk -v k="$c:" '$1 == k {print $2}' "$st")
		[ "$v" = 0000000000000000 ] || fail "thread $name: $c $v"
	done
	for g in $(awk '/^Groups:/ {$1 = ""; print}' "$st"); do
		id -G nobody | tr ' ' '\n' | grep -qx "$g" || fail "thread $name: group $g is not nobody's"
	done
done
[ "$ntask" -ge 2 ] || fail "read $ntask thread(s) of $pid"
note "$ntask threads: uid/gid $uid/$gid, no capabilities"
kill -TERM "$pid"
wait "$pid" || fail "live -Z nobody: exit $?: $(cat "$T/gc.err")"
nf=0
for f in "$T"/z/live.pcap*; do
	nf=$((nf + 1))
	[ "$(owner "$f")" = "$uid:$gid 644" ] || fail "$f: $(owner "$f")"
	check_readable "$f" 1
done
[ "$nf" -ge 2 ] || fail "-C 1 rotated into $nf file(s)"
note "$nf files, all $uid:$gid 644"

# offline, and -g; tcpdump -Z leaves its file the same way
in=$MIX
[ -f "$in" ] || in=$LIVE1
gc -Z nobody -r "$in" -w "$T/z/off.pcap" || fail "-r -Z nobody: $(cat "$T/gc.err")"
[ "$(owner "$T/z/off.pcap")" = "$uid:$gid 644" ] || fail "off.pcap: $(owner "$T/z/off.pcap")"
check_readable "$T/z/off.pcap" 1
tdump "$in" "$T/z/td.pcap" -Z nobody || fail "tcpdump -Z nobody: $(cat "$T/td.err")"
[ "$(owner "$T/z/td.pcap")" = "$(owner "$T/z/off.pcap")" ] ||
	fail "tcpdump's file $(owner "$T/z/td.pcap"), ours $(owner "$T/z/off.pcap")"
gc -Z nobody -g -r "$in" -w "$T/z/grp.pcap" || fail "-g: $(cat "$T/gc.err")"
[ "$(owner "$T/z/grp.pcap")" = "$uid:$gid 640" ] || fail "-g: $(owner "$T/z/grp.pcap")"
gc -g -r "$in" -w "$T/root.pcap" || fail "-g as root: $(cat "$T/gc.err")"
[ "$(owner "$T/root.pcap")" = "0:0 640" ] || fail "-g as root: $(owner "$T/root.pcap")"

# an unknown user: one line, nothing created
gc -Z no-such-user-gcap -r "$in" -w "$T/z/none.pcap" && fail "-Z no-such-user-gcap ran"
grep -q "no-such-user-gcap" "$T/gc.err" || fail "-Z unknown: $(cat "$T/gc.err")"
[ "$(wc -l <"$T/gc.err")" -eq 1 ] || fail "-Z unknown: $(cat "$T/gc.err")"
[ ! -e "$T/z/none.pcap" ] || fail "-Z unknown user: the output was created"
finish
