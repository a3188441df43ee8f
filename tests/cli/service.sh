#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# gpu-capture as a systemd service: the unit in the repo passes
# systemd-analyze verify; READY=1, STATUS= with the rates, WATCHDOG=1 and
# STOPPING=1 arrive on a notify socket (python3 listens), a -r run's
# too, a socket nobody reads blocks nothing, and the
# watchdog stops being fed while the writer is stuck (a FIFO nobody
# reads), though the process and its STATUS= go on; errors, warnings
# and DPDK's lines carry journal levels when stderr is the journal;
# --pidfile holds the pid, refuses one a live run holds, replaces a stale
# one (its pid another process's or none) or a link without following it,
# and is removed at exit.
. "$(dirname "$0")/lib.sh"
need python3
listen=$SRC/tests/cli/notify_listen.py
port="net_pcap0,rx_pcap=$LOOP,infinite_rx=1"

# the unit: the template with this build's paths
if command -v systemd-analyze >/dev/null; then
	printf '[Unit]\nDescription=t\n[Service]\nExecStart=/bin/true\n' >"$T/probe.service"
	if systemd-analyze verify --man=no "$T/probe.service" >"$T/sa.err" 2>&1; then
		sed -e "s|@BINDIR@|$(cd "$(dirname "$GC")" && pwd)|g" -e "s|@SYSCONFDIR@|$T/etc|g" \
			"$SRC/etc/gpu-capture.service.in" >"$T/gpu-capture.service"
		systemd-analyze verify --man=no "$T/gpu-capture.service" >"$T/sa.err" 2>&1 ||
			fail "systemd-analyze verify: $(cat "$T/sa.err")"
		grep -q '^Type=notify$' "$T/gpu-capture.service" || fail "the unit is not Type=notify"
		grep -q '^WatchdogSec=' "$T/gpu-capture.service" || fail "the unit has no WatchdogSec="
		# a start failing again and again must end as failed: more
		# than StartLimitBurst restarts RestartSec apart fit the interval
		awk -F= '/^StartLimitIntervalSec=/ { i = $2 + 0 } /^StartLimitBurst=/ { b = $2 + 0 }
			/^RestartSec=/ { r = $2 + 0 } END { exit !(i > 0 && b > 0 && b * r < i) }' \
			"$T/gpu-capture.service" || fail "the unit's start limit never trips with its RestartSec="
	else
		note "SKIP systemd-analyze verify: it cannot run here: $(head -1 "$T/sa.err")"
	fi
else
	note "SKIP systemd-analyze verify: systemd-analyze is not installed"
fi

# the notify protocol
WATCHDOG_USEC=200000 python3 "$listen" "$T/notify" "$T/n.log" \
	"$GC" -q -i "$port" -w "$T/n.pcap" --duration 3 --rx-rate 20000 2>"$T/gc.err" ||
	fail "notify run: exit $?: $(cat "$T/gc.err")"
first() { grep -n " $1" "$T/n.log" | head -1 | cut -d: -f1; }
r=$(first READY=1)
[ -n "$r" ] || fail "no READY=1: $(cat "$T/n.log")"
[ "$(first STATUS=)" -gt "${r:-0}" ] 2>/dev/null || fail "no STATUS= after READY=1"
grep -q " MAINPID=$(awk 'NR == 1 {print $2}' "$T/n.log")$" "$T/n.log" || fail "MAINPID is not the sender's pid"
grep -Eq ' STATUS=capturing: [0-9.]+ Mpps [0-9.]+ Gb/s \| received [1-9][0-9]* ' "$T/n.log" ||
	fail "no STATUS= with rates and packets: $(grep STATUS "$T/n.log")"
nwd=$(grep -c ' WATCHDOG=1$' "$T/n.log")
[ "$nwd" -ge 3 ] || fail "WATCHDOG=1 $nwd times in 3 s (every 50 ms expected)"
[ "$(grep ' STOPPING=1' "$T/n.log" | wc -l)" -eq 1 ] || fail "no STOPPING=1"
check_readable "$T/n.pcap" 100

# -r under the watchdog (the unit's WatchdogSec= with a read = key): fed
# while the writer turns, though the reader waits on a quiet pipe
(cat "$DATA/eth-be.pcap"; sleep 2) | WATCHDOG_USEC=200000 python3 "$listen" "$T/notify3" \
	"$T/r.log" "$GC" -q -r - -w "$T/r.pcap" 2>"$T/gc.err" || fail "-r notify run: $(cat "$T/gc.err")"
nwd=$(grep -c ' WATCHDOG=1$' "$T/r.log")
[ "$nwd" -ge 3 ] || fail "-r: WATCHDOG=1 $nwd times in 2 s: $(cat "$T/r.log")"
grep -q ' STATUS=capturing: .* received 80 ' "$T/r.log" || fail "-r: no STATUS= with the records: $(cat "$T/r.log")"
grep -q ' STOPPING=1' "$T/r.log" || fail "-r: no STOPPING=1"

# a notify socket nobody reads (a stale or stalled supervisor): its
# queue fills, and the messages must not block the main loop, which ends
# the run at --duration
python3 -c '
import socket, sys, time
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 1024)
s.bind(sys.argv[1])
time.sleep(120)' "$T/deaf" &
deaf=$!
for _ in $(seq 100); do [ -S "$T/deaf" ] && break; sleep 0.1; done
NOTIFY_SOCKET=$T/deaf WATCHDOG_USEC=20000 timeout -k 5 60 "$GC" -q -i "$port" -w "$T/deaf.pcap" \
	--duration 2 --rx-rate 20000 2>"$T/gc.err"
rc=$?
kill $deaf 2>/dev/null
[ $rc -eq 0 ] || fail "a notify socket nobody reads: exit $rc (124, 137: hung): $(cat "$T/gc.err")"
check_readable "$T/deaf.pcap" 1

# no watchdog without progress: the writer blocks on a full FIFO that is
# open but never read; the capture and STATUS= go on
mkfifo "$T/fifo"
exec 3<>"$T/fifo"
WATCHDOG_USEC=200000 python3 "$listen" "$T/notify2" "$T/w.log" \
	"$GC" -q -i "$port" -w "$T/fifo" --duration 4 --rx-rate 20000 2>"$T/gc.err"
exec 3>&-
lastwd=$(grep ' WATCHDOG=1$' "$T/w.log" | tail -1 | cut -d' ' -f1)
stop=$(grep ' STOPPING=1' "$T/w.log" | cut -d' ' -f1)
ready=$(grep ' READY=1' "$T/w.log" | cut -d' ' -f1)
[ -n "$stop" ] && [ -n "$ready" ] || fail "stuck writer: no READY or STOPPING: $(cat "$T/w.log")"
nstat=$(awk -v t="${lastwd:-0}" '$3 ~ /^STATUS=capturing/ && $1 > t + 1' "$T/w.log" | wc -l)
awk -v w="${lastwd:-$ready}" -v s="$stop" 'BEGIN { exit !(s - w >= 2) }' ||
	fail "stuck writer: WATCHDOG=1 until $lastwd s, stopped at $stop s"
[ "$nstat" -ge 1 ] || fail "stuck writer: no STATUS= after the watchdog stopped"
note "stuck writer: last WATCHDOG=1 at ${lastwd:-none} s, STOPPING at $stop s"

# journal levels: only when stderr is the stream JOURNAL_STREAM names
"$GC" -r "$T/none.pcap" -w "$T/x.pcap" 2>"$T/j.err"
JOURNAL_STREAM=$(stat -c '%d:%i' "$T/j.err") "$GC" -r "$T/none.pcap" -w "$T/x.pcap" 2>>"$T/j.err"
JOURNAL_STREAM=1:1 "$GC" -r "$T/none.pcap" -w "$T/x.pcap" 2>>"$T/j.err"
[ "$(sed -n 1p "$T/j.err" | cut -c1-13)" = "gpu-capture: " ] || fail "no journal: $(sed -n 1p "$T/j.err")"
[ "$(sed -n 2p "$T/j.err" | cut -c1-16)" = "<3>gpu-capture: " ] || fail "journal: $(sed -n 2p "$T/j.err")"
[ "$(sed -n 3p "$T/j.err" | cut -c1-13)" = "gpu-capture: " ] || fail "another stream: $(sed -n 3p "$T/j.err")"
# DPDK's lines too, each with its level
: >"$T/jd.err"
JOURNAL_STREAM=$(stat -c '%d:%i' "$T/jd.err") "$GC" -v -i "$port" -w "$T/jd.pcap" --duration 1 \
	--rx-rate 1000 2>>"$T/jd.err" || fail "-v live run: $(cat "$T/jd.err")"
grep -Eq '^<[0-7]>EAL: ' "$T/jd.err" || fail "no DPDK line with a level: $(head -3 "$T/jd.err")"
"$GC" -v -i "$port" -w "$T/jd.pcap" --duration 1 --rx-rate 1000 2>"$T/jn.err" || fail "-v: $(cat "$T/jn.err")"
! grep -q '^<' "$T/jn.err" || fail "a level prefix without the journal: $(grep '^<' "$T/jn.err" | head -1)"
grep -q '^EAL: ' "$T/jn.err" || fail "no DPDK line without the journal"

# --pidfile
pf=$T/run/gc.pid
mkdir "$T/run"
"$GC" -q -i "$port" -w "$T/p.pcap" --duration 20 --rx-rate 1000 --pidfile "$pf" 2>"$T/gc.err" &
pid=$!
for _ in $(seq 100); do [ -s "$pf" ] && break; sleep 0.1; done
[ "$(cat "$pf" 2>/dev/null)" = "$pid" ] || fail "--pidfile holds '$(cat "$pf" 2>/dev/null)', not $pid"
[ "$(stat -c %a "$pf")" = 644 ] || fail "--pidfile mode $(stat -c %a "$pf")"
"$GC" -q -r "$LIVE1" -w "$T/p2.pcap" --pidfile "$pf" 2>"$T/gc2.err" && fail "a second run took a live pidfile"
# capturing (records reached the file), then stopped
for _ in $(seq 200); do [ "$(stat -c %s "$T/p.pcap" 2>/dev/null || echo 0)" -gt 24 ] && break; sleep 0.1; done
grep -q "process $pid is running" "$T/gc2.err" || fail "live pidfile: $(cat "$T/gc2.err")"
[ ! -e "$T/p2.pcap" ] || fail "the refused run created its output"
kill -TERM "$pid"
wait "$pid" || fail "pidfile run: exit $?: $(cat "$T/gc.err")"
[ ! -e "$pf" ] || fail "--pidfile left after exit"
(exit 0) & dead=$!
wait "$dead"
echo "$dead" >"$pf"
gc -r "$LIVE1" -w "$T/p3.pcap" --pidfile "$pf" || fail "a stale pidfile was not replaced: $(cat "$T/gc.err")"
[ ! -e "$pf" ] || fail "--pidfile left after a file run"
# a stale file whose pid is another live process's now (pids are reused):
# no gpu-capture holds it, so it is taken
sleep 30 &
other=$!
echo "$other" >"$pf"
gc -r "$LIVE1" -w "$T/p5.pcap" --pidfile "$pf" || fail "a stale pidfile naming a live pid: $(cat "$T/gc.err")"
kill "$other" 2>/dev/null
# a hard link at the name to a file of the same owner: replaced, the
# file behind it neither written nor made readable
echo secret >"$T/secret"
chmod 600 "$T/secret"
ln "$T/secret" "$pf"
gc -r "$LIVE1" -w "$T/p6.pcap" --pidfile "$pf" || fail "pidfile over a hard link: $(cat "$T/gc.err")"
[ "$(cat "$T/secret")" = secret ] && [ "$(stat -c %a "$T/secret")" = 600 ] ||
	fail "the pidfile was written through a hard link: $(stat -c %a "$T/secret") $(cat "$T/secret")"
# two starts at once: one runs, the other is refused
for k in 1 2; do
	(cat "$LOOP"; sleep 3) | "$GC" -q -r - -w "$T/two$k.pcap" --pidfile "$pf" 2>"$T/two$k.err" &
done
wait
n_ok=0
for k in 1 2; do grep -q 'is running' "$T/two$k.err" || n_ok=$((n_ok + 1)); done
[ "$n_ok" -eq 1 ] || fail "two starts at once: $n_ok ran: $(cat "$T/two1.err" "$T/two2.err")"
echo keep >"$T/target"
ln -s "$T/target" "$pf"
gc -r "$LIVE1" -w "$T/p4.pcap" --pidfile "$pf" || fail "pidfile over a link: $(cat "$T/gc.err")"
[ "$(cat "$T/target")" = keep ] || fail "the pidfile was written through a link"
finish
