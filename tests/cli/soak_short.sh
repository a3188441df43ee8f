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
note "$(grep "soak:" "$T/out")"
cat "$T/ok/soak-samples.tsv" 2>/dev/null
[ "$(ls "$T/ring" | wc -l)" -eq 4 ] || fail "ring: $(ls "$T/ring")"
# a capture that fails must fail the soak
SRC=/nonexistent.pcap run_soak "$T/bad" --backend cpu >"$T/out" 2>&1 && fail "a missing source passed"
run_soak "$T/bad2" --backend cpu -i no_such_if0 >"$T/out" 2>&1 && fail "a bad port passed: $(cat "$T/out")"
grep -q "soak: FAIL: gpu-capture exited" "$T/out" || fail "bad port: $(cat "$T/out")"
# a stand-in for gpu-capture that leaks three descriptors a second (as a
# rotation that forgot its close would) and otherwise looks fine: the soak
# must catch the leak
cat >"$T/leaky" <<'LEAKY'
#!/bin/bash
dur=12 json= w=
while [ $# -gt 0 ]; do
	case $1 in --duration) dur=$2; shift ;; --summary-json) json=$2; shift ;; -w) w=$2; shift ;; esac
	shift
done
for ((i = 0; i < dur * 3; i++)); do exec {fd}</dev/null; sleep 0.33; done
for k in 0 1 2 3; do cp "$LEAKY_PCAP" "$w$k"; done
echo '{"dropped": {"imissed": 0, "rx_nombuf": 0, "pipeline_full": 0, "writer_behind": 0}, "captured": 1}' >"$json"
LEAKY
chmod +x "$T/leaky"
LEAKY_PCAP=$DATA/eth-mix.pcap GPU_CAPTURE=$T/leaky run_soak "$T/leak" >"$T/out" 2>&1 &&
	fail "a descriptor leak passed: $(cat "$T/out")"
grep -q "open descriptors grew" "$T/out" || fail "leak not named: $(cat "$T/out")"
finish
