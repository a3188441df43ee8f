#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# -r with a missing file, a directory, a file that is not a capture, an
# empty file, and a damaged one (records before the damage written, exit 1
# like tcpdump).
. "$(dirname "$0")/lib.sh"
echo "not a capture file at all, just text" > "$T/text.pcap"
: > "$T/empty.pcap"
for f in "$T/missing.pcap" "$T" "$T/text.pcap" "$T/empty.pcap"; do
	gc -r "$f" -w "$T/o.pcap"; rc=$?
	[ $rc -eq 1 ] || fail "'$f': exit $rc"
	[ -s "$T/gc.err" ] || fail "'$f': no message"
	[ "$(wc -l < "$T/gc.err")" -eq 1 ] || fail "'$f': more than one line: $(cat "$T/gc.err")"
	[ -e "$T/o.pcap" ] && { fail "'$f': output created"; rm -f "$T/o.pcap"; }
done
if [ "$(id -u)" -ne 0 ]; then
	cp "$LIVE1" "$T/noperm.pcap"; chmod 000 "$T/noperm.pcap"
	gc -r "$T/noperm.pcap" -w "$T/o.pcap"; rc=$?
	[ $rc -eq 1 ] || fail "unreadable: exit $rc"
else
	note "running as root: the permission case is not testable"
fi
for f in "$DATA/damaged-trunc.pcap" "$DATA/damaged-caplen.pcap"; do
	gc -r "$f" -w "$T/o.pcap"; rc=$?
	[ $rc -eq 1 ] || fail "$(basename "$f"): exit $rc, expected 1"
	grep -q "truncated\|bigger than\|capture length" "$T/gc.err" || fail "$(basename "$f"): $(cat "$T/gc.err")"
	if command -v tcpdump >/dev/null; then
		tdump "$f" "$T/ref.pcap"
		"$CMP" -q --usec "$T/o.pcap" "$T/ref.pcap" || fail "$(basename "$f"): records before the damage differ"
	fi
	check_readable "$T/o.pcap" 10
done
finish
