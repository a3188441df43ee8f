#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# A malformed --lcores list: exit 1 with one line naming it, before the
# EAL or any port starts, no output file.
. "$(dirname "$0")/lib.sh"
for l in "" "3-1" "1," "a" "1,,2" "0-2000" "2-" "-2"; do
	gc -i "net_pcap0,rx_pcap=$DATA/eth-mix.pcap" --lcores "$l" -w "$T/o.pcap" --duration 5; rc=$?
	[ $rc -eq 1 ] || fail "--lcores '$l': exit $rc, expected 1"
	grep -qF -- "bad --lcores list '$l'" "$T/gc.err" || fail "--lcores '$l': $(cat "$T/gc.err")"
	[ "$(wc -l < "$T/gc.err")" -eq 1 ] || fail "--lcores '$l': more than one line"
	grep -q EAL "$T/gc.err" && fail "--lcores '$l': the EAL started"
	[ -e "$T/o.pcap" ] && { fail "--lcores '$l': output created"; rm -f "$T/o.pcap"; }
done
finish
