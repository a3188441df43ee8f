#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# --config FILE: a run from a file writes what the same options on the
# command line write (round trip); the command line wins over the file,
# its -i/-r and -w replacing the file's; a bad key, a bad value, a bad
# line and an unknown section each stop the run with FILE:LINE before
# anything is created; the example configuration in the repo parses.
. "$(dirname "$0")/lib.sh"
# the files written here are root's alone when root runs this (a root run
# reads no other), whatever umask the caller had
umask 022
in=$LIVE1
out=$T/out
mkdir "$out"

# round trip: every kind of key (string, number, flag, repeated, the
# expression continued on an indented line)
cat >"$T/a.conf" <<CONF
# a comment
; another
[gpu-capture]
read = $in
write = $out/f1.pcap
write = $out/f2.pcapng:udp
snaplen = 96
autostop = packets:50
packet-buffered = true
verbose = false
backend = cpu
expression = tcp or
	udp
CONF
gc --config "$T/a.conf" || die "--config: $(cat "$T/gc.err")"
gc -r "$in" -w "$out/c1.pcap" -w "$out/c2.pcapng:udp" -s 96 -c 50 -U --backend cpu tcp or udp ||
	die "command line: $(cat "$T/gc.err")"
cmp -s "$out/f1.pcap" "$out/c1.pcap" || fail "f1.pcap differs from the command line's"
"$CMP" -q "$out/f2.pcapng" "$out/c2.pcapng" || fail "f2.pcapng differs from the command line's"
[ "$(count "$out/f1.pcap")" -eq 50 ] || fail "autostop = packets:50 gave $(count "$out/f1.pcap") records"

# precedence: -s and the expression on the command line win; -w replaces
# both of the file's outputs; -r replaces the file's input
rm -f "$out"/*
gc --config "$T/a.conf" -s 64 -w "$out/cl.pcap" icmp || die "override: $(cat "$T/gc.err")"
gc -r "$in" -w "$out/ref.pcap" -s 64 -c 50 --backend cpu icmp || die "ref: $(cat "$T/gc.err")"
cmp -s "$out/cl.pcap" "$out/ref.pcap" || fail "the command line did not override the file"
[ ! -e "$out/f1.pcap" ] && [ ! -e "$out/f2.pcapng" ] || fail "-w did not replace the file's outputs"
gc --config "$T/a.conf" -r "$LIVE2" -w "$out/r2.pcap" || fail "-r over the file's read: $(cat "$T/gc.err")"
printf 'interface = net_null0\nwrite = %s/i.pcap\n' "$out" >"$T/i.conf"
gc --config "$T/i.conf" -r "$in" -d >/dev/null || fail "-r over the file's interface: $(cat "$T/gc.err")"

# -b and -a hold several conditions: the command line's replaces the
# file's of its own KEY only (the file's files:2 stays a bound); and -z
# has a key, postrotate-command
printf 'ring-buffer = files:2\nring-buffer = packets:20\n' >"$T/b.conf"
rm -f "$out"/*
gc --config "$T/b.conf" -r "$in" -w "$out/b.pcap" -b packets:30 || fail "-b over the file's: $(cat "$T/gc.err")"
# (a ring of 2 of dumpcap's names, the last numbered for 30 a file)
last=$(printf %05d $((($(count "$in") + 29) / 30)))
[ "$(dcfiles "$out/b" .pcap | wc -l)" -eq 2 ] && dcfiles "$out/b" .pcap | tail -1 | grep -q "b_${last}_" ||
	fail "-b packets:30 over the file's ring-buffer: not a ring of 2 ending at $last: $(echo "$out"/b*)"
# a rotation of one kind on the command line replaces the file's of the
# other (tcpdump's -C/-W names and dumpcap's -b do not mix)
printf 'file-size = 1\nfile-count = 3\n' >"$T/c.conf"
gc --config "$T/c.conf" -r "$in" -w "$out/cb.pcap" -b packets:30 || fail "-b over the file's -C -W: $(cat "$T/gc.err")"
[ "$(dcfiles "$out/cb" .pcap | wc -l)" -eq "$((($(count "$in") + 29) / 30))" ] && [ ! -e "$out/cb.pcap0" ] ||
	fail "-b packets:30 over the file's file-size/file-count: $(echo "$out"/cb*)"
gc --config "$T/b.conf" -r "$in" -w "$out/cc.pcap" -C 1 || fail "-C over the file's ring-buffer: $(cat "$T/gc.err")"
[ -e "$out/cc.pcap" ] && [ -z "$(dcfiles "$out/cc" .pcap)" ] || fail "-C 1 over the file's ring-buffer: $(echo "$out"/cc*)"
# the file's duration: and the command line's interval: are two of
# dumpcap's conditions, both kept (whichever ends a file first)
printf 'ring-buffer = duration:60\n' >"$T/d.conf"
gc --config "$T/d.conf" -r "$in" -w "$out/di.pcap" -b interval:3600 ||
	fail "-b interval: over the file's duration:: $(cat "$T/gc.err")"
printf '#!/bin/sh\necho "$1" >>%s/z.log\n' "$T" >"$T/z.sh"
chmod +x "$T/z.sh"
printf 'ring-buffer = packets:40\nautostop = files:2\npostrotate-command = %s/z.sh\n' "$T" >"$T/z.conf"
gc --config "$T/z.conf" -r "$in" -w "$out/z.pcap" || fail "postrotate-command: $(cat "$T/gc.err")"
# (the commands run at the lowest priority: on a loaded machine, late)
zlines() { [ "$(cat "$T/z.log" 2>/dev/null | wc -l)" -ge 2 ]; }
wait_for 300 zlines || fail "postrotate-command: ran for $(cat "$T/z.log" 2>/dev/null)"

# as root, only root's file, written by root alone, is read (its keys run
# as root: kernel =, eal =)
if [ "$(id -u)" -eq 0 ]; then
	printf 'quiet = true\n' >"$T/o.conf"
	for how in "chmod 666" "chmod 620" "chown nobody"; do
		cp "$T/o.conf" "$T/o2.conf"
		$how "$T/o2.conf"
		rm -f "$out/o.pcap"
		gc --config "$T/o2.conf" -r "$in" -w "$out/o.pcap" && fail "$how: a root run read the file"
		grep -q "configuration '$T/o2.conf' is .*root" "$T/gc.err" && [ "$(wc -l <"$T/gc.err")" -eq 1 ] ||
			fail "$how: $(cat "$T/gc.err")"
		[ ! -e "$out/o.pcap" ] || fail "$how: the output was created"
	done
fi

# errors: FILE:LINE and nothing created
bad() { # bad LINE PATTERN CONTENT...
	local line=$1 pat=$2
	shift 2
	printf '%s\n' "$@" >"$T/bad.conf"
	rm -f "$out/bad.pcap"
	if gc --config "$T/bad.conf" -r "$in" -w "$out/bad.pcap"; then
		fail "ran with: $*"
		return
	fi
	grep -q "^gpu-capture: $T/bad.conf:$line: .*$pat" "$T/gc.err" ||
		fail "expected $T/bad.conf:$line: $pat, got: $(cat "$T/gc.err")"
	[ "$(wc -l <"$T/gc.err")" -eq 1 ] || fail "more than one line: $(cat "$T/gc.err")"
	[ ! -e "$out/bad.pcap" ] || fail "$*: the output was created"
}
bad 3 "unknown key 'snaplne'" "# x" "quiet = true" "snaplne = 96"
bad 2 "invalid value 'abc'" "quiet = true" "snaplen = abc"
bad 1 "invalid value 'maybe' for quiet" "quiet = maybe"
bad 2 "expected 'key = value'" "quiet = true" "snaplen"
bad 2 "unknown section \[other\]" "[gpu-capture]" "[other]" "quiet = true"
bad 1 "unknown key 'config'" "config = /etc/passwd"
# count is tcpdump's --count, a flag: the packet limit is autostop
bad 1 "invalid value '50' for count" "count = 50"
bad 2 "--backend 'fast'" "" "backend = fast"
bad 1 "line longer than" "expression = $(printf 'tcp or %.0s' $(seq 60))tcp"
gc --config "$T/none.conf" -r "$in" -w "$out/bad.pcap" && fail "a missing file ran"
grep -q "cannot read configuration '$T/none.conf'" "$T/gc.err" || fail "missing: $(cat "$T/gc.err")"

# every long option of --help is a key: each one's value error names the line
for k in snaplen batch ring rxd queues stats duration gpu-blocks; do
	printf '\n%s = x\n' "$k" >"$T/k.conf"
	gc --config "$T/k.conf" -r "$in" -w "$out/k.pcap" && fail "$k = x ran"
	grep -q "k.conf:2: invalid value 'x'" "$T/gc.err" || fail "$k = x: $(cat "$T/gc.err")"
done

# every long option --help names is a key: none is "unknown"
# (in a scratch directory: summary-json = x and the like write ./x)
nk=0
GC=$(cd "$(dirname "$GC")" && pwd)/$(basename "$GC")
mkdir "$T/keys"
cd "$T/keys" || die "cd"
for k in $("$GC" --help | grep -o -- '--[a-z][a-z-]*' | sed 's/^--//' | sort -u); do
	case $k in config | help | version) continue ;; esac
	printf '%s = x\n' "$k" >"$T/k.conf"
	gc --config "$T/k.conf" -r "$in" -w "$out/k.pcap"
	! grep -q "unknown key" "$T/gc.err" || fail "--$k is not a key: $(cat "$T/gc.err")"
	nk=$((nk + 1))
done
[ "$nk" -ge 40 ] || fail "only $nk long options found in --help"
note "$nk long options, each a key"
cd - >/dev/null || die "cd"

# the example in the repo: every key parses (-d stops before any set-up);
# a copy of ours, as a root run reads only root's file and the checkout
# may be another user's
[ -f "$SRC/etc/gpu-capture.conf" ] || die "no $SRC/etc/gpu-capture.conf"
ex=$T/example.conf
cp "$SRC/etc/gpu-capture.conf" "$ex"
chmod 644 "$ex"
"$GC" --config "$ex" -d >/dev/null 2>"$T/gc.err" || fail "example: $(cat "$T/gc.err")"
finish
