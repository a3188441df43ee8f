#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# What another user plants where a root run writes gets no more than that
# user could do, whatever fs.protected_* say: with -Z nobody, a link
# nobody put in its own directory (where the run writes) is opened as
# nobody, so root's file behind it is neither written nor created; in a
# directory other users can write (a sticky one, or one of theirs)
# another user's file or FIFO is refused (not cut, not handed the
# packets, not waited on) and so is another user's link, on the way or
# at the name; root's groups do not count for a -Z open; a FIFO at --pidfile does not hang the start;
# -g makes --summary-json and --kernel-state group-readable at most too.
. "$(dirname "$0")/lib.sh"
[ "$(id -u)" -eq 0 ] || skip "needs root (acts as nobody too)"
need setpriv
NOBODY_GID=$(id -g nobody 2>/dev/null) || skip "no user nobody"
as_nobody() { setpriv --reuid=nobody --regid="$NOBODY_GID" --clear-groups "$@"; }
umask 022
chmod 755 "$T"
victim() { printf 'precious\n' >"$1" && chmod 644 "$1"; }
intact() { printf 'precious\n' | cmp -s - "$1"; }

# -Z nobody writing into nobody's directory (the service's layout)
mkdir -m 755 "$T/z"
chown nobody "$T/z"
victim "$T/victim"
as_nobody ln -s "$T/victim" "$T/z/cap.pcap"
gc -Z nobody -r "$LIVE1" -w "$T/z/cap.pcap"; rc=$?
[ $rc -eq 1 ] || fail "-Z: nobody's link to root's file: exit $rc"
intact "$T/victim" || fail "-Z: root's file written through nobody's link"
grep -q "Permission denied" "$T/gc.err" || fail "-Z link: $(cat "$T/gc.err")"
as_nobody ln -s "$T/created-by-root" "$T/z/dangling.pcap"
gc -Z nobody -r "$LIVE1" -w "$T/z/dangling.pcap"; rc=$?
[ $rc -eq 1 ] && [ ! -e "$T/created-by-root" ] || fail "-Z: a dangling link's target created (exit $rc)"
as_nobody ln -s "$T/created-by-json" "$T/z/s.json"
gc -Z nobody -r "$LIVE1" -w "$T/z/ok.pcap" --summary-json "$T/z/s.json"; rc=$?
[ $rc -eq 1 ] && [ ! -e "$T/created-by-json" ] ||
	fail "-Z: --summary-json's dangling link's target created (exit $rc)"
# root's groups do not count (a root:root 0664 file behind nobody's link,
# the run started with group 0 among its groups, as under sudo)
victim "$T/gvictim"
chmod 664 "$T/gvictim"
as_nobody ln -s "$T/gvictim" "$T/z/g.pcap"
setpriv --groups=0 timeout 60 "$GC" -q -Z nobody -r "$LIVE1" -w "$T/z/g.pcap" 2>"$T/gc.err"; rc=$?
[ $rc -eq 1 ] || fail "-Z with root's groups: exit $rc"
intact "$T/gvictim" || fail "-Z: root's group-writable file written through nobody's link"
# nobody's own files there are written, as after the drop
gc -Z nobody -r "$LIVE1" -w "$T/z/good.pcap" || fail "-Z into nobody's directory: $(cat "$T/gc.err")"
[ "$(stat -c %U "$T/z/good.pcap")" = nobody ] || fail "-Z: good.pcap is $(stat -c %U "$T/z/good.pcap")'s"
[ "$(count "$T/z/good.pcap")" -eq "$(count "$LIVE1")" ] || fail "-Z: records"

# a sticky world-writable directory: another user's file, FIFO, link
mkdir -m 1777 "$T/tmp"
as_nobody sh -c "umask 0; printf 'precious\n' >'$T/tmp/cap.pcap'"
gc -r "$LIVE1" -w "$T/tmp/cap.pcap"; rc=$?
[ $rc -eq 1 ] || fail "nobody's file in a sticky directory: exit $rc"
grep -q "another user's file" "$T/gc.err" || fail "nobody's file: $(cat "$T/gc.err")"
intact "$T/tmp/cap.pcap" || fail "nobody's file in a sticky directory was cut or written"
as_nobody mkfifo -m 622 "$T/tmp/fifo.pcap"
as_nobody timeout 60 cat "$T/tmp/fifo.pcap" >"$T/stolen" &
cpid=$!
sleep 0.5
timeout 60 "$GC" -q -r "$LIVE1" -w "$T/tmp/fifo.pcap" 2>"$T/gc.err"; rc=$?
[ $rc -eq 1 ] || fail "nobody's FIFO in a sticky directory: exit $rc"
kill $cpid 2>/dev/null
wait $cpid 2>/dev/null
[ ! -s "$T/stolen" ] || fail "nobody's FIFO got $(wc -c <"$T/stolen") bytes"
# no reader: refused at once, not waited on
as_nobody mkfifo -m 622 "$T/tmp/fifo2.pcap"
timeout 60 "$GC" -q -r "$LIVE1" -w "$T/tmp/fifo2.pcap" 2>"$T/gc.err"; rc=$?
[ $rc -eq 1 ] || fail "nobody's FIFO without a reader: exit $rc (124: it waited)"
grep -q "another user's file" "$T/gc.err" || fail "nobody's FIFO without a reader: $(cat "$T/gc.err")"
# root's own FIFO there is root's: its reader gets the records
mkfifo -m 600 "$T/tmp/mine.pcap"
timeout 60 cat "$T/tmp/mine.pcap" >"$T/mine.out" &
cpid=$!
gc -r "$LIVE1" -w "$T/tmp/mine.pcap" || fail "root's FIFO in a sticky directory: $(cat "$T/gc.err")"
wait $cpid
[ "$(count "$T/mine.out")" -eq "$(count "$LIVE1")" ] || fail "root's FIFO: the reader got $(count "$T/mine.out")"
# a link on the way: nobody's is not followed, root's is
mkdir "$T/rootdir"
victim "$T/rootdir/run.pcap"
as_nobody ln -s "$T/rootdir" "$T/tmp/captures"
gc -r "$LIVE1" -w "$T/tmp/captures/run.pcap"; rc=$?
[ $rc -eq 1 ] || fail "nobody's link on the way: exit $rc"
grep -q "another user's symbolic link" "$T/gc.err" || fail "link on the way: $(cat "$T/gc.err")"
intact "$T/rootdir/run.pcap" || fail "written through nobody's link on the way"
# nobody's own directory there, a link inside it: not followed either
victim "$T/rootdir/run2.pcap"
as_nobody mkdir "$T/tmp/ndir"
as_nobody ln -s "$T/rootdir/run2.pcap" "$T/tmp/ndir/run.pcap"
gc -r "$LIVE1" -w "$T/tmp/ndir/run.pcap"; rc=$?
[ $rc -eq 1 ] || fail "a link in nobody's directory: exit $rc"
grep -q "symbolic link" "$T/gc.err" || fail "a link in nobody's directory: $(cat "$T/gc.err")"
intact "$T/rootdir/run2.pcap" || fail "written through a link in nobody's directory"
ln -s "$T/rootdir" "$T/tmp/mine"
gc -r "$LIVE1" -w "$T/tmp/mine/new.pcap" || fail "root's link on the way: $(cat "$T/gc.err")"
[ "$(count "$T/rootdir/new.pcap")" -eq "$(count "$LIVE1")" ] || fail "root's link on the way: records"

# a FIFO at --pidfile: taken as no pid, the start goes on
mkfifo "$T/tmp/gc.pid"
timeout 60 "$GC" -q -r "$LIVE1" -w "$T/p.pcap" --pidfile "$T/tmp/gc.pid" 2>"$T/gc.err"; rc=$?
[ $rc -ne 124 ] || fail "--pidfile on a FIFO: the start hung"

# -g: every file the run makes is 0640 at most
K=$SRC/kernels/examples/flowfirst/flowfirst.c
gc -g -r "$LIVE1" --backend cpu --kernel "$K" --kernel-state "$T/ks.json" \
	--summary-json "$T/sj.json" -w "$T/g.pcap" || fail "-g: $(cat "$T/gc.err")"
for f in g.pcap ks.json sj.json; do
	[ "$(stat -c %a "$T/$f")" = 640 ] || fail "-g: $f is $(stat -c %a "$T/$f")"
done
finish
