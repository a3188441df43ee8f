#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# The command line as tcpdump's: options after the expression, -F FILE
# for the expression, the output format spelled --format, dumpcap's -f,
# -P and --capture-comment and tcpdump's -n, -O, -Q and printing options
# taken; an output's expression split over several words, and an
# expression no output uses, refused with one line before any file is
# created.
. "$(dirname "$0")/lib.sh"
need tcpdump
F=$LIVE1
# one line on stderr, exit 1, none of the files named exists
refused() { # RC WHAT FILE...
	local rc=$1 what=$2
	shift 2
	[ "$rc" -eq 1 ] || fail "$what: exit $rc, expected 1"
	[ "$(wc -l <"$T/gc.err")" -eq 1 ] || fail "$what: $(wc -l <"$T/gc.err") lines: $(cat "$T/gc.err")"
	for f in "$@"; do [ -e "$f" ] && fail "$what: $f created"; done
	return 0
}

# options after the expression, as tcpdump takes them
timeout -k 5 60 "$GC" -r "$F" -w "$T/o.pcap" tcp port 80 -q --backend cpu 2>"$T/gc.err"; rc=$?
[ $rc -eq 0 ] || fail "'-w o.pcap tcp port 80 -q': exit $rc: $(cat "$T/gc.err")"
[ -s "$T/gc.err" ] && fail "'-q' after the expression ignored: $(cat "$T/gc.err")"
tdump "$F" "$T/ref.pcap" tcp port 80 || fail "tcpdump tcp port 80"
"$CMP" -q --usec "$T/o.pcap" "$T/ref.pcap" || fail "'tcp port 80 -q' differs from tcpdump"
[ "$(count "$T/ref.pcap")" -gt 0 ] || fail "no tcp port 80 packet in $F: the test proves little"
# options between the expression's words join them, as in tcpdump
gc -r "$F" -w "$T/o2.pcap" tcp -c 1000 port 80 || fail "'tcp -c 1000 port 80': $(cat "$T/gc.err")"
"$CMP" -q --usec "$T/o2.pcap" "$T/ref.pcap" || fail "'tcp -c 1000 port 80' differs"

# an output's expression split over words: one line that says how to quote
gc -r "$F" -w "$T/dns.pcap:udp" port 53 -w "$T/web.pcap:tcp" port 80; rc=$?
refused $rc "split -w expressions" "$T/dns.pcap" "$T/web.pcap"
grep -qF "quote it, as -w '$T/dns.pcap:udp port 53'" "$T/gc.err" ||
	fail "split: no quoting advice: $(cat "$T/gc.err")"
# at the end, with every output having its own expression
gc -r "$F" -w "$T/a.pcap:udp" port 53; rc=$?
refused $rc "split at the end" "$T/a.pcap"
grep -qF "'$T/a.pcap:udp port 53'" "$T/gc.err" || fail "split at the end: $(cat "$T/gc.err")"
# in the middle, before an output without one
gc -r "$F" -w "$T/a.pcap:udp" port 53 -w "$T/all.pcap"; rc=$?
refused $rc "split before a bare -w" "$T/a.pcap" "$T/all.pcap"
# an expression no output uses
gc -r "$F" -w "$T/a.pcap:udp" 'not a filter'; rc=$?
refused $rc "unused expression" "$T/a.pcap"
grep -q "used by no output" "$T/gc.err" || fail "unused expression: $(cat "$T/gc.err")"
gc -r "$F" -w "$T/a.pcap:udp" -c 5 tcp; rc=$?
refused $rc "unused expression after an option" "$T/a.pcap"
# the trailing expression after an output of its own is the other one's
gc -r "$F" -w "$T/b.pcap" -w "$T/a.pcap:tcp" udp || fail "bare -w and FILE:EXPR: $(cat "$T/gc.err")"
tdump "$F" "$T/refu.pcap" udp
"$CMP" -q --usec "$T/b.pcap" "$T/refu.pcap" || fail "the bare -w did not get 'udp'"

# -F FILE: the expression from a file, '#' comments as tcpdump reads them
printf 'udp # the DNS\n  port 53 # both ways\n' >"$T/filter"
gc -r "$F" -w "$T/f.pcap" -F "$T/filter" || fail "-F: $(cat "$T/gc.err")"
timeout 60 tcpdump -r "$F" -w "$T/reff.pcap" -F "$T/filter" 2>/dev/null || fail "tcpdump -F"
"$CMP" -q --usec "$T/f.pcap" "$T/reff.pcap" || fail "-F FILE differs from tcpdump -F"
[ "$(count "$T/reff.pcap")" -gt 0 ] || fail "no udp port 53 packet: the -F test proves little"
gc -r "$F" -w "$T/f.pcap" -d -F "$T/filter" >"$T/d.txt" || fail "-d -F"
tcpdump -r "$F" -d -F "$T/filter" 2>/dev/null | cmp -s - "$T/d.txt" || fail "-d -F differs from tcpdump's"
gc -r "$F" -w "$T/f2.pcap" -F "$T/filter" tcp; rc=$?
refused $rc "-F with words" "$T/f2.pcap"
gc -r "$F" -w "$T/f3.pcap" -F "$T/nonexistent"; rc=$?
refused $rc "-F of a missing file" "$T/f3.pcap"
gc -r "$F" -w "$T/f4.pcap:udp" -F "$T/filter"; rc=$?
refused $rc "-F that no output uses" "$T/f4.pcap"
printf 'tcp and and\n' >"$T/badf"
gc -r "$F" -w "$T/f5.pcap" -F "$T/badf"; rc=$?
refused $rc "-F of a bad filter" "$T/f5.pcap"
grep -q "syntax error" "$T/gc.err" || fail "-F bad filter: $(cat "$T/gc.err")"

# dumpcap's and tcpdump's habits: -f EXPR (dumpcap's capture filter) is
# the expression; -n (tcpdump: no name resolution) changes nothing in a
# file; -P (dumpcap: pcap, not pcapng) is --format pcap
gc -r "$F" -w "$T/df.pcap" -f 'udp port 53' || fail "-f: $(cat "$T/gc.err")"
tdump "$F" "$T/refdf.pcap" udp port 53 || fail "tcpdump udp port 53"
"$CMP" -q --usec "$T/df.pcap" "$T/refdf.pcap" || fail "-f 'udp port 53' differs from tcpdump's"
gc -r "$F" -w "$T/df2.pcap" -f udp port 53; rc=$?
refused $rc "-f with words after the options" "$T/df2.pcap"
gc -r "$F" -w "$T/df3.pcap" -f udp -F "$T/filter"; rc=$?
refused $rc "-f and -F" "$T/df3.pcap"
gc -r "$F" -w "$T/df4.pcap" -f 'udp and and'; rc=$?
refused $rc "-f of a bad filter" "$T/df4.pcap"
gc -r "$F" -w "$T/df5.pcap" -f udp -f tcp; rc=$?
refused $rc "-f twice" "$T/df5.pcap"
gc -r "$F" -w "$T/df6.pcap" -f; rc=$?
refused $rc "-f without a value" "$T/df6.pcap"
grep -q "option -f needs a value" "$T/gc.err" || fail "-f without a value: $(cat "$T/gc.err")"
gc -nn -r "$F" -w "$T/n.pcap" -n udp port 53 || fail "-nn ... -n: $(cat "$T/gc.err")"
cmp -s "$T/n.pcap" "$T/df.pcap" || fail "-n changed the file"
gc -r "$F" -w "$T/p.pcapng" -P || fail "-P: $(cat "$T/gc.err")"
[ "$(head -c 4 "$T/p.pcapng" | od -An -tx1 | tr -d ' ')" != 0a0d0d0a ] || fail "-P wrote pcapng"
gc -r "$F" -w "$T/p.pcap" || fail "no -P: $(cat "$T/gc.err")"
cmp -s "$T/p.pcapng" "$T/p.pcap" || fail "-P into a .pcapng name differs from the pcap file"
# a word may cluster many options: more options than words
gc -r "$F" -w "$T/pr3.pcap" "-$(head -c 4000 /dev/zero | tr '\0' n)" || fail "-nnn...: $(cat "$T/gc.err")"

# tcpdump's printing options change nothing in a file: taken and ignored
# as tcpdump ignores them with -w, clustered as users type them
gc -AeHKlNS -ttttt -u -xx -XX -# -r "$F" -w "$T/pr.pcap" --number --dont-verify-checksums \
	--absolute-tcp-sequence-numbers -nnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnn udp port 53 ||
	fail "tcpdump's printing options: $(cat "$T/gc.err")"
cmp -s "$T/pr.pcap" "$T/df.pcap" || fail "tcpdump's printing options changed the file"
# those with a value take it, whatever it is, and change nothing either
gc -r "$F" -w "$T/pr4.pcap" -T vxlan -E 'hmac-sha1:0x1234' -m /nonexistent/MIB -Tsnmp udp port 53 ||
	fail "-E -m -T: $(cat "$T/gc.err")"
cmp -s "$T/pr4.pcap" "$T/df.pcap" || fail "-E -m -T changed the file"
gc -r "$F" -w "$T/pr5.pcap" -T; rc=$?
refused $rc "-T without its value" "$T/pr5.pcap"
grep -q "^gpu-capture: option -T needs a value$" "$T/gc.err" || fail "-T: $(cat "$T/gc.err")"
# monitor mode (tcpdump's and dumpcap's -I): no DPDK port has it
for m in -I --monitor-mode; do
	gc -r "$F" -w "$T/pr6.pcap" $m; rc=$?
	refused $rc "$m" "$T/pr6.pcap"
	grep -q "^gpu-capture: -I: monitor mode is a Wi-Fi interface's; DPDK ports have none$" \
		"$T/gc.err" || fail "$m: $(cat "$T/gc.err")"
done
gc -r "$F" -w "$T/pr2.pcap" --print; rc=$?
refused $rc "--print" "$T/pr2.pcap"
grep -q "^gpu-capture: --print: gpu-capture prints no packets; -w - | tcpdump -r - prints them$" \
	"$T/gc.err" || fail "--print: $(cat "$T/gc.err")"
gc -r "$F" udp; rc=$?
refused $rc "no -w"
grep -q "prints no packets: -w - | tcpdump -r - prints them" "$T/gc.err" || fail "no -w: $(cat "$T/gc.err")"
# -O (--no-optimize): libpcap's optimizer off, as tcpdump -O: the
# program tcpdump -O -d prints (longer), the same records
E='tcp port 80 or udp port 53'
gc -r "$F" -O -d "$E" >"$T/o.txt" || fail "-O -d: $(cat "$T/gc.err")"
tcpdump -r "$F" -O -d "$E" 2>/dev/null | cmp -s - "$T/o.txt" || fail "-O -d differs from tcpdump -O -d"
gc -r "$F" -d "$E" >"$T/o2.txt" || fail "-d: $(cat "$T/gc.err")"
[ "$(wc -l <"$T/o.txt")" -gt "$(wc -l <"$T/o2.txt")" ] || fail "-O: no longer than the optimised program"
gc -r "$F" --no-optimize -w "$T/o3.pcap" "$E" || fail "--no-optimize: $(cat "$T/gc.err")"
tdump "$F" "$T/refo.pcap" -O "$E" || fail "tcpdump -O $E"
"$CMP" -q --usec "$T/o3.pcap" "$T/refo.pcap" || fail "-O: records differ from tcpdump -O's"
gc -r "$F" --no-optimize=1 -w "$T/o4.pcap"; rc=$?
refused $rc "--no-optimize=1" "$T/o4.pcap"
grep -q "^gpu-capture: option '--no-optimize' takes no value$" "$T/gc.err" ||
	fail "--no-optimize=1: $(cat "$T/gc.err")"
# an unknown letter after a --NAME=VALUE word is that letter's error
gc -r "$F" --snaplen=96 -Yn -w "$T/o5.pcap"; rc=$?
refused $rc "--snaplen=96 -Yn" "$T/o5.pcap"
grep -q "^gpu-capture: unknown option -Y" "$T/gc.err" || fail "--snaplen=96 -Yn: $(cat "$T/gc.err")"
# tcpdump's long forms --snapshot-length (-s) and --micro, on a
# nanosecond input (which -r keeps nanosecond unless told)
NS=$DATA/eth-snap96-ns.pcap
gc -r "$NS" -w "$T/sl.pcap" --snapshot-length 60 --micro || fail "--snapshot-length --micro: $(cat "$T/gc.err")"
gc -r "$NS" -w "$T/sl2.pcap" -s 60 --time-stamp-precision micro || fail "-s 60 micro: $(cat "$T/gc.err")"
cmp -s "$T/sl.pcap" "$T/sl2.pcap" || fail "--snapshot-length 60 --micro differs from -s 60 --time-stamp-precision micro"
[ "$(head -c 4 "$T/sl.pcap" | od -An -tx1 | tr -d ' ')" = d4c3b2a1 ] || fail "--micro: not a microsecond pcap"
gc -r "$NS" -w "$T/sl3.pcap" -s 60 || fail "-s 60: $(cat "$T/gc.err")"
cmp -s "$T/sl.pcap" "$T/sl3.pcap" && fail "--micro: the same file as without it"

# --count, as tcpdump's: the count of what matched on stdout ("N
# packets", "1 packet"), nothing written without -w, the file as well
# with it; with -w - (stdout too) refused
gc -r "$F" --count udp port 53 >"$T/cnt" || fail "--count: $(cat "$T/gc.err")"
timeout 60 tcpdump -r "$F" --count udp port 53 2>/dev/null | cmp -s - "$T/cnt" ||
	fail "--count: '$(cat "$T/cnt")', tcpdump's '$(tcpdump -r "$F" --count udp port 53 2>/dev/null)'"
[ "$(cat "$T/cnt")" = "$(count "$T/df.pcap") packets" ] || fail "--count: $(cat "$T/cnt")"
gc -r "$F" --count -c 1 udp port 53 >"$T/cnt" || fail "--count -c 1: $(cat "$T/gc.err")"
[ "$(cat "$T/cnt")" = "1 packet" ] || fail "--count -c 1: $(cat "$T/cnt")"
gc -r "$F" --count -w "$T/cnt.pcap" udp port 53 >"$T/cnt" || fail "--count -w: $(cat "$T/gc.err")"
cmp -s "$T/cnt.pcap" "$T/df.pcap" || fail "--count -w: not the file without --count"
[ "$(cat "$T/cnt")" = "$(count "$T/df.pcap") packets" ] || fail "--count -w: $(cat "$T/cnt")"
gc -r "$F" --count -w - udp >"$T/cnt"; rc=$?
refused $rc "--count -w -"
[ -s "$T/cnt" ] && fail "--count -w -: wrote to stdout"
# with what only a file has (rotation, -z), on a port, with a value:
# refused in one line
gc -r "$F" --count -C 1 udp >"$T/cnt"; rc=$?
refused $rc "--count -C 1 without -w"
grep -q "^gpu-capture: --count without -w writes no file" "$T/gc.err" || fail "--count -C 1: $(cat "$T/gc.err")"
gc -r "$F" --count -z true udp >"$T/cnt"; rc=$?
refused $rc "--count -z without -w"
gc -i "net_pcap0,rx_pcap=$F" --backend cpu --count -w "$T/cnt2.pcap"; rc=$?
refused $rc "--count on a port" "$T/cnt2.pcap"
grep -q "^gpu-capture: --count counts what -r reads" "$T/gc.err" || fail "--count on a port: $(cat "$T/gc.err")"
gc -r "$F" --count=50 >"$T/cnt"; rc=$?
refused $rc "--count=50"
grep -q "takes no value (-c N stops after N packets)$" "$T/gc.err" || fail "--count=50: $(cat "$T/gc.err")"
# a read error ends the run (exit 1), and the count of what was read
# before it is said, as tcpdump says it
gc -r "$DATA/damaged-trunc.pcap" --count >"$T/cnt"; rc=$?
[ $rc -eq 1 ] || fail "--count of a truncated file: exit $rc"
timeout 60 tcpdump -r "$DATA/damaged-trunc.pcap" --count 2>/dev/null | cmp -s - "$T/cnt" ||
	fail "--count of a truncated file: '$(cat "$T/cnt")'"

# -Q (tcpdump's direction): RX queues see what comes in, so -Q in and
# inout are taken on a port and -Q out refused there before anything
# starts; with -r every -Q is taken and ignored, as tcpdump does
gc -r "$F" -w "$T/q.pcap" -Q out || fail "-r -Q out: $(cat "$T/gc.err")"
cmp -s "$T/q.pcap" "$T/p.pcap" || fail "-r -Q out changed the file"
gc -r "$F" -w "$T/q2.pcap" -Q sideways; rc=$?
refused $rc "-Q sideways" "$T/q2.pcap"
gc -i "net_pcap0,rx_pcap=$F" --backend cpu -w "$T/q3.pcap" --direction OUT --duration 30; rc=$?
refused $rc "--direction OUT on a port" "$T/q3.pcap"
grep -q "^gpu-capture: -Q out: " "$T/gc.err" || fail "-Q out on a port: $(cat "$T/gc.err")"
gc -i "net_pcap0,rx_pcap=$F" --backend cpu -w "$T/q4.pcap" -Q in -c 5 --duration 30 ||
	fail "-Q in on a port: $(cat "$T/gc.err")"
[ "$(count "$T/q4.pcap")" -eq 5 ] || fail "-Q in: $(count "$T/q4.pcap") packets, want 5"

# --capture-comment (dumpcap's) goes in pcapng's SHB: a pcap output,
# by its name or by -P, is refused before any file is made
gc -r "$F" -w "$T/cm.pcapng" --capture-comment 'one' --capture-comment 'two' ||
	fail "--capture-comment: $(cat "$T/gc.err")"
# the SHB's opt_comment values, in order (pcapng_meta.sh checks more,
# where tshark is)
shb_comments() {
	python3 -c '
import struct, sys
b = open(sys.argv[1], "rb").read()
ln = struct.unpack_from("<I", b, 4)[0]
o, out = 24, []
while o + 4 <= ln - 4:
    code, n = struct.unpack_from("<HH", b, o)
    if code == 0:
        break
    if code == 1:
        out.append(b[o + 4:o + 4 + n].decode())
    o += 4 + ((n + 3) & ~3)
print("|".join(out))' "$1"
}
[ "$(shb_comments "$T/cm.pcapng")" = "one|two" ] || fail "SHB comments: $(shb_comments "$T/cm.pcapng")"
"$GC" -q -r "$F" -w - --format pcapng --capture-comment 'on stdout' >"$T/cm6.pcapng" 2>"$T/gc.err" ||
	fail "--capture-comment on stdout: $(cat "$T/gc.err")"
[ "$(shb_comments "$T/cm6.pcapng")" = "on stdout" ] || fail "stdout's SHB comments: $(shb_comments "$T/cm6.pcapng")"
gc -r "$F" -w "$T/cm7.pcapng" --capture-comment "$(printf 'bad \377')"; rc=$?
refused $rc "--capture-comment not UTF-8" "$T/cm7.pcapng"
gc -r "$F" -w "$T/cm8.pcapng" --capture-comment ''; rc=$?
refused $rc "--capture-comment empty" "$T/cm8.pcapng"
# comments that would make an SHB libpcap refuses (over 1 MiB)
big=$(head -c 65532 /dev/zero | tr '\0' z)
cmany=()
for _ in $(seq 16); do cmany+=(--capture-comment "$big"); done
gc -r "$F" -w "$T/cm10.pcapng" "${cmany[@]}"; rc=$?
refused $rc "--capture-comment over 1 MiB in all" "$T/cm10.pcapng"
grep -q -- "--capture-comment: more than 960 KiB in all" "$T/gc.err" ||
	fail "--capture-comment over 1 MiB: $(cat "$T/gc.err")"
gc -r "$F" -w "$T/cm11.pcapng" "${cmany[@]:0:28}" || fail "14 comments of 64 KiB: $(cat "$T/gc.err")"
tcpdump -r "$T/cm11.pcapng" -c 1 >/dev/null 2>"$T/td.err" || fail "libpcap refuses 14 comments of 64 KiB: $(cat "$T/td.err")"
gc -r "$F" -w "$T/cm9.pcapng" --capture-comment; rc=$?
refused $rc "--capture-comment without a value" "$T/cm9.pcapng"
grep -q "option '--capture-comment' needs a value" "$T/gc.err" || fail "--capture-comment without a value: $(cat "$T/gc.err")"
gc -r "$F" -w "$T/cm2.pcapng" -w "$T/cm.pcap" --capture-comment x; rc=$?
refused $rc "--capture-comment with a pcap output" "$T/cm2.pcapng" "$T/cm.pcap"
grep -qF -- "-w $T/cm.pcap is pcap" "$T/gc.err" ||
	fail "--capture-comment with pcap: $(cat "$T/gc.err")"
gc -r "$F" -w "$T/cm5.out" --format pcapng --capture-comment x ||
	fail "--capture-comment with --format pcapng: $(cat "$T/gc.err")"
gc -r "$F" -w "$T/cm3.pcapng" -P --capture-comment x; rc=$?
refused $rc "--capture-comment with -P" "$T/cm3.pcapng"
gc -r "$F" -w "$T/cm4.pcapng" --capture-comment "$(head -c 65533 /dev/zero | tr '\0' a)"; rc=$?
refused $rc "--capture-comment of 65533 bytes" "$T/cm4.pcapng"

# the format is --format now (-F is tcpdump's)
gc -r "$F" -w "$T/x.out" --format pcapng || fail "--format pcapng: $(cat "$T/gc.err")"
[ "$(head -c 4 "$T/x.out" | od -An -tx1 | tr -d ' ')" = 0a0d0d0a ] || fail "--format pcapng: not pcapng"
gc -r "$F" -w "$T/y.out" --format pcapx; rc=$?
refused $rc "--format pcapx" "$T/y.out"
finish
