#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# bench/pcap_order (how far a file is from time order, the capture
# bench's diagnosis): records below the latest time before them and the
# most any is, in nanosecond and microsecond pcap files; a file libpcap
# cannot read is one line and exit 1, bad arguments exit 2.
# Extra argument: the pcap_order binary.
. "$(dirname "$0")/lib.sh"
PO=${4:?pcap_order path}
# times (s, fraction): one step back of 2 records, then past it again,
# then a step back of one record to below the first
mk() {
	python3 - "$1" "$2" <<'PY'
import struct, sys
nano = sys.argv[2] == "nano"
out = open(sys.argv[1], "wb")
out.write(struct.pack("<IHHiIII", 0xa1b23c4d if nano else 0xa1b2c3d4, 2, 4, 0, 0, 65535, 1))
unit = 1 if nano else 1000
for s, ns in [(10, 5000), (10, 9000), (10, 7000), (10, 8000), (10, 9000), (11, 0), (9, 999000)]:
    out.write(struct.pack("<IIII", s, ns // unit, 4, 4) + b"abcd")
PY
}
for prec in nano micro; do
	mk "$T/$prec.pcap" $prec
	got=$("$PO" "$T/$prec.pcap" 2>"$T/err") || fail "$prec: exit $?: $(cat "$T/err")"
	# 7 records; 7000 and 8000 below 9000, 9.000999 s below 11: 3; 11 s less that
	[ "$got" = "7 3 1999001000" ] || fail "$prec: '$got', want '7 3 1999001000'"
done
# a file in order
python3 - "$T/ok.pcap" <<'PY'
import struct, sys
out = open(sys.argv[1], "wb")
out.write(struct.pack("<IHHiIII", 0xa1b23c4d, 2, 4, 0, 0, 65535, 1))
for i in range(100):
    out.write(struct.pack("<IIII", 10, i // 3, 2, 2) + b"ab")
PY
got=$("$PO" "$T/ok.pcap") || fail "in order: exit $?"
[ "$got" = "100 0 0" ] || fail "in order: '$got', want '100 0 0'"
# not a capture file; no argument
printf 'not a capture' >"$T/bad.pcap"
"$PO" "$T/bad.pcap" >"$T/out" 2>"$T/err"
rc=$?
[ $rc = 1 ] || fail "a bad file: exit $rc, want 1"
[ "$(wc -l <"$T/err")" = 1 ] && grep -q '^pcap_order: ' "$T/err" || fail "a bad file: $(cat "$T/err")"
"$PO" >/dev/null 2>&1
rc=$?
[ $rc = 2 ] || fail "no argument: exit $rc, want 2"
finish
