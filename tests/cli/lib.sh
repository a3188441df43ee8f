# SPDX-License-Identifier: BSD-3-Clause
# Shared by the cli tests: sourced with the arguments meson gives every
# script: GPU_CAPTURE PCAP_CMP SOURCE_ROOT.
set -u
GC=${1:?gpu-capture path}
CMP=${2:?pcap-cmp path}
SRC=${3:?source root}
DATA=$SRC/tests/data
CORPUS=$SRC/../shared/data/pcaps/tcpdump-tests
MIX=$SRC/../shared/data/bench/mix-en10mb.pcap
T=$(mktemp -d "${TMPDIR:-/tmp}/gcap-cli.XXXXXX")
trap 'rm -rf "$T"' EXIT
nfail=0

fail() { echo "FAIL: $*" >&2; nfail=$((nfail + 1)); }
die() { echo "FAIL: $*" >&2; exit 1; }
skip() { echo "SKIP: $*"; exit 77; }
note() { echo "$*"; }
finish() {
	if [ "$nfail" -ne 0 ]; then
		echo "$nfail failure(s)" >&2
		exit 1
	fi
	echo "PASS"
	exit 0
}

# is gpu-capture built with AddressSanitizer (the sanitizer pass)? Its
# shadow memory does not fit under a ulimit -d, and its runtime must come
# first in the library list, which an installed copy does not keep
sanitized() {
	ldd "$GC" 2>/dev/null | grep -q 'libasan\|libubsan'
}

need() {
	command -v "$1" >/dev/null 2>&1 || skip "$1 is not installed"
}

# gcap_run RC_VAR ARGS...: run gpu-capture (bounded), its stderr in $T/gc.err
gc() {
	timeout -k 5 60 "$GC" -q "$@" 2>"$T/gc.err"
}

# tcpdump's offline run: tdump FILE OUT [EXPR]; stderr in $T/td.err
tdump() {
	local f=$1 o=$2
	shift 2
	timeout -k 5 60 tcpdump -r "$f" -w "$o" "$@" 2>"$T/td.err"
}

# nvcc_bench NAME: bench/NAME.cu built with nvcc into $T/NAME; skipped
# (77) where there is no nvcc (NVCC, default /usr/local/cuda/bin/nvcc)
nvcc_bench() {
	local nv=${NVCC:-/usr/local/cuda/bin/nvcc}
	[ -x "$nv" ] || skip "no nvcc at $nv"
	"$nv" -O2 -arch=sm_90 "$SRC/bench/$1.cu" -o "$T/$1" 2>"$T/nvcc.err" ||
		die "nvcc: $(cat "$T/nvcc.err")"
}

# bench_refuses PROG WHAT ARGS...: PROG refuses ARGS before any work:
# exit 2, a message naming PROG, no result on stdout
bench_refuses() {
	local prog=$1 what=$2 rc
	shift 2
	"$prog" "$@" >"$T/out" 2>"$T/err"
	rc=$?
	[ $rc -eq 2 ] || fail "$what: exit $rc, expected 2"
	grep -q "$(basename "$prog")" "$T/err" || fail "$what: no message: $(cat "$T/err")"
	if [ -s "$T/out" ]; then fail "$what: printed a result: $(cat "$T/out")"; fi
}

# bench_ran RC WHAT: a bench program's exit, its stderr in $T/err: true
# when it ran (0); 77 must say it had no GPU; anything else fails
bench_ran() {
	case $1 in
	0) return 0 ;;
	77)
		grep -q "no GPU" "$T/err" || fail "$2: exit 77 without saying why: $(cat "$T/err")"
		note "no GPU: $2 was not measured"
		;;
	*) fail "$2: exit $1: $(cat "$T/err")" ;;
	esac
	return 1
}

# number of records of a capture file
count() { "$CMP" --count "$@"; }

# dcfiles PREFIX [SUFFIX]: the files -b made of -w PREFIX[SUFFIX], named as
# dumpcap names them (PREFIX_NNNNN_YYYYmmddHHMMSS[SUFFIX]), one a line, by
# number
dcfiles() {
	local d='[0-9]'
	compgen -G "$1_$d$d$d$d${d}_$d$d$d$d$d$d$d$d$d$d$d$d$d$d${2:-}" | sort
}

# has_records FILE [N]: FILE reads back with at least N records (1)
has_records() { [ "$("$CMP" --count "$1" 2>/dev/null || echo 0)" -ge "${2:-1}" ]; }

# wait_for SECONDS COMMAND...: until the command succeeds (false when
# SECONDS pass first): a test waits for what the program does, never for
# a time that a loaded machine may not keep
wait_for() {
	local end=$((SECONDS + $1))
	shift
	until "$@"; do
		[ $SECONDS -lt $end ] || return 1
		sleep 0.2
	done
}

# is the file readable by libpcap, with at least $2 records
check_readable() {
	local n
	n=$("$CMP" --count "$1") || { fail "$1 does not read back with libpcap"; return 1; }
	if [ "$n" -lt "${2:-0}" ]; then
		fail "$1 holds $n records, expected at least ${2:-0}"
		return 1
	fi
	return 0
}

# the smaller corpus subset the cli tests use, plus tests/data (always)
cli_inputs() {
	local f
	for f in "$DATA"/*.pcap "$DATA"/*.pcapng; do
		[ -f "$f" ] && echo "$f"
	done
	[ -d "$CORPUS" ] || return 0
	for f in 802.1ad_QinQ.pcap IGMP_V2.pcap pim-packet-assortment.pcap \
		bigtcp-ipv6-hbh.pcap gquic.pcap ieee802.11_exthdr.pcap \
		mpls-traceroute.pcap ppp-invalid-lengths.pcap \
		OSPFv2_Capture_FINAL.pcapng bgp-role.pcapng hdlc_slarp.pcapng \
		of13_ericsson.pcapng nhrp.pcapng vsock-1.pcapng \
		icmp-cksum-oobr-4.pcapng; do
		[ -f "$CORPUS/$f" ] && echo "$CORPUS/$f"
	done
	return 0
}

# a small DPDK-friendly capture for live tests: net_pcap mangles packets
# larger than its ~15 KB receive buffer, so live tests use files without
# such packets (tests/data/eth-mix.pcap has one 8 KB frame at most)
LIVE1=$DATA/eth-mix.pcap
LIVE2=$DATA/eth-be.pcap
LIVE3=$DATA/eth-mix.pcap
[ -f "$CORPUS/IGMP_V2.pcap" ] && LIVE3=$CORPUS/IGMP_V2.pcap
# infinite_rx=1 needs every packet in one mbuf (2 KB data room): a file
# whose frames are all <= 1514 bytes (eth-be.pcap)
LOOP=$DATA/eth-be.pcap

# repeat_pcap IN OUT MB: IN's header, then its records again and again to
# at least MB megabytes (files large enough for the finders)
repeat_pcap() {
	python3 - "$1" "$2" "$3" <<'PY'
import sys
d = open(sys.argv[1], 'rb').read()
with open(sys.argv[2], 'wb') as f:
    f.write(d[:24])
    for _ in range(int(sys.argv[3]) * 2**20 // (len(d) - 24) + 1):
        f.write(d[24:])
PY
}

# slow_reader FIFO OUT SECS: read FIFO into OUT taking 16 KB every 20 ms
# (0.8 MB/s) for SECS seconds from its first bytes (the writer's start),
# then the rest at once, until its writer closes it (run it in the
# background: slow_reader ... & rpid=$!)
slow_reader() {
	python3 - "$1" "$2" "$3" <<'PY'
import sys, time
src, dst, secs = sys.argv[1], sys.argv[2], float(sys.argv[3])
with open(src, "rb") as f, open(dst, "wb") as o:
    b = f.read(16384)
    t0 = time.monotonic()
    while b and time.monotonic() - t0 < secs:
        o.write(b)
        time.sleep(0.02)
        b = f.read(16384)
    while b:
        o.write(b)
        b = f.read(1 << 20)
PY
}
