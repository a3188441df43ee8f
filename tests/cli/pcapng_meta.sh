#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# The pcapng a live capture writes, as dumpcap writes it, in every file of
# a rotation (-b packets:N): SHB shb_hardware/shb_os/shb_userappl and the
# --capture-comment ones (opt_comment, in order), IDB
# if_name (the port as given), if_description, if_hardware, if_os,
# if_MACaddr, if_speed,
# if_tsresol, if_filter only with a filter, EPB epb_flags and epb_queue,
# and each file's own ISBs, checked against the run's --summary-json
# (pcapng_meta.py). tshark -V, capinfos and editcap read every file.
. "$(dirname "$0")/lib.sh"
need python3
need tshark
need capinfos
need editcap
e='tcp or udp'
n=$(tcpdump -r "$LIVE1" "$e" 2>/dev/null | wc -l)
ver=$("$GC" --version | awk '{print $2}')
hw=$(awk -F': ' '/^model name/ {print $2; exit}' /proc/cpuinfo)
[ -n "$hw" ] || hw=$(uname -m)
spec="net_pcap0,rx_pcap=$LIVE1"

check() { # FILTER-JSON OUTPUT-FILES...
	local filt=$1
	shift
	cat >"$T/exp.json" <<JSON
{"hardware": "$hw", "os": "$(uname -s) $(uname -r)", "userappl": "gpu-capture $ver",
 "comments": ${COMMENTS:-[]}, "queues": 2, "ifaces": [{"name": "$spec", "driver": "net_pcap", "speed": 10000000000,
 "filter": $filt}]}
JSON
	python3 "$SRC/tests/cli/pcapng_meta.py" "$T/sum.json" "$T/exp.json" "$@" ||
		fail "pcapng metadata (filter $filt)"
	local f
	for f in "$@"; do
		tshark -r "$f" -V >/dev/null 2>"$T/ts.err" || fail "tshark -V $f: $(cat "$T/ts.err")"
		capinfos "$f" >/dev/null 2>&1 || fail "capinfos $f"
		editcap "$f" "$T/edit.pcapng" >/dev/null 2>&1 || fail "editcap $f"
	done
}

# a filter, two queues (one file each), a new file every 25 packets, two
# capture comments (one of UTF-8) in every file's SHB
c2='zweite Bemerkung – ünïcode'
gc -i "net_pcap0,rx_pcap=$LIVE1,rx_pcap=$LIVE1" --queues 2 -w "$T/r.pcapng" -b packets:25 \
	-c $((2 * n)) --duration 30 --summary-json "$T/sum.json" \
	--capture-comment 'a first comment' --capture-comment "$c2" "$e" ||
	die "exit $?: $(cat "$T/gc.err")"
spec="net_pcap0,rx_pcap=$LIVE1,rx_pcap=$LIVE1"
mapfile -t files < <(dcfiles "$T/r" .pcapng)
[ "${#files[@]}" -eq $(((2 * n + 24) / 25)) ] && [ "${#files[@]}" -ge 3 ] || fail "${#files[@]} files: $(echo "$T"/r*)"
COMMENTS="[\"a first comment\", \"$c2\"]" check "\"$e\"" "${files[@]}"
capinfos "${files[0]}" | grep -qF "$c2" || fail "capinfos does not show the comment: $(capinfos "${files[0]}")"

# no filter: no if_filter at all; one file, one queue
spec="net_pcap0,rx_pcap=$LIVE1"
gc -i "$spec" -w "$T/all.pcapng" -c "$(count "$LIVE1")" --duration 30 --summary-json "$T/sum.json" ||
	die "no filter: exit $?: $(cat "$T/gc.err")"
check null "$T/all.pcapng"
# the checker itself: a file that lacks its ISBs fails it
head -c -112 "$T/all.pcapng" >"$T/noisb.pcapng" && ! python3 "$SRC/tests/cli/pcapng_meta.py" \
	"$T/sum.json" "$T/exp.json" "$T/noisb.pcapng" >/dev/null 2>&1 ||
	fail "pcapng_meta.py passes a file without ISBs"
finish
