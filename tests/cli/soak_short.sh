#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# bench/soak.sh, short: gpu-capture with a rotating -C/-W ring for a few
# seconds, watched from outside. Rotation must close what it opens (the
# descriptor count stays put), the steady state must not grow resident
# memory by more than a few MiB, nothing may be dropped, and every ring
# file must read back. Also: the soak script itself fails a capture that
# exits non-zero (a port that cannot exist).
. "$(dirname "$0")/lib.sh"
S=$SRC/bench/soak.sh
export GPU_CAPTURE=$GC PCAP_CMP=$CMP
run_soak() { # OUT_DIR, then soak.sh's arguments
	local o=$1
	shift
	DURATION=12 WARMUP=4 INTERVAL=2 RATE=200000 RING_MB=2 RING_FILES=4 \
		RSS_SLACK_KB=4096 OUT_DIR=$o DIR=$T/ring timeout -k 5 60 bash "$S" "$@"
}
run_soak "$T/ok" --backend cpu >"$T/out" 2>&1 || fail "soak: $(cat "$T/out")"
grep -q "soak: pass" "$T/out" || fail "no pass line: $(cat "$T/out")"
[ "$(ls "$T/ring" | wc -l)" -eq 4 ] || fail "ring: $(ls "$T/ring")"
# a capture that fails must fail the soak
SRC=/nonexistent.pcap run_soak "$T/bad" --backend cpu >"$T/out" 2>&1 && fail "a missing source passed"
run_soak "$T/bad2" --backend cpu -i no_such_if0 >"$T/out" 2>&1 && fail "a bad port passed: $(cat "$T/out")"
grep -q "soak: FAIL: gpu-capture exited" "$T/out" || fail "bad port: $(cat "$T/out")"
finish
