#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# --metrics: a real Prometheus server (temporary config and storage, on
# loopback) scrapes gpu-capture while it captures; the values read back
# through Prometheus' HTTP API equal the summary once the port's file is
# read whole; the example alerting rules pass promtool, fire where they
# should and nowhere else (promtool's unit tests, gpucap-alerts.test.yml)
# and load.
. "$(dirname "$0")/lib.sh"
# a bad --metrics is one line and exit 1 before anything starts
for bad in "127.0.0.1" "127.0.0.1:0" "127.0.0.1:65536" "[::1]9464" ":9464"; do
	gc -i "net_pcap0,rx_pcap=$LIVE1" -w "$T/bad.pcap" --metrics "$bad"; rc=$?
	[ $rc -eq 1 ] && [ "$(wc -l <"$T/gc.err")" -eq 1 ] && grep -qF "gpu-capture: --metrics '$bad'" "$T/gc.err" ||
		fail "--metrics '$bad': exit $rc: $(cat "$T/gc.err")"
	[ -e "$T/bad.pcap" ] && fail "--metrics '$bad': the output was created"
done
gc -r "$LIVE1" -w "$T/bad.pcap" --metrics 127.0.0.1:9464; rc=$?
[ $rc -eq 1 ] && grep -q "applies to live ports" "$T/gc.err" || fail "-r with --metrics: exit $rc: $(cat "$T/gc.err")"
command -v prometheus >/dev/null 2>&1 ||
	skip "the prometheus binary is not installed (Debian package prometheus)"
need promtool
need curl
RULES=$SRC/docs/prometheus/gpucap-alerts.yml
promtool check rules "$RULES" >"$T/rules.out" 2>&1 || fail "promtool check rules: $(cat "$T/rules.out")"
promtool test rules "$SRC/tests/cli/gpucap-alerts.test.yml" >"$T/rules.out" 2>&1 ||
	fail "promtool test rules: $(cat "$T/rules.out")"
export RUNTIME_DIRECTORY=$T/run
mkdir -p "$RUNTIME_DIRECTORY"
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
mp=$(free_port)
pp=$(free_port)
pids=()
trap 'for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done; wait; rm -rf "$T"' EXIT
n=$(count "$LIVE1")
cat >"$T/prom.yml" <<YML
global:
  scrape_interval: 1s
  evaluation_interval: 1s
rule_files:
  - $RULES
scrape_configs:
  - job_name: gpucap
    static_configs:
      - targets: ["127.0.0.1:$mp"]
YML
prometheus --config.file="$T/prom.yml" --storage.tsdb.path="$T/tsdb" \
	--web.listen-address="127.0.0.1:$pp" --log.level=warn >"$T/prom.log" 2>&1 &
pids+=("$!")
api=http://127.0.0.1:$pp/api/v1
for _ in $(seq 1 300); do
	curl -sf --max-time 2 "http://127.0.0.1:$pp/-/ready" >/dev/null && break
	sleep 0.2
done
curl -sf --max-time 2 "http://127.0.0.1:$pp/-/ready" >/dev/null || die "Prometheus did not start: $(tail -5 "$T/prom.log")"
# paced: the file takes ~6 s, several scrapes
timeout -k 5 90 "$GC" -q -i "net_pcap0,rx_pcap=$LIVE1" --rx-rate 30 --batch 8 --duration 80 \
	--metrics "127.0.0.1:$mp" -w "$T/o.pcap" --summary-json "$T/s.json" udp 2>"$T/gc.err" &
gcpid=$!
pids+=("$gcpid")
# q EXPR: the value of an instant query's first sample ("" while none)
q() {
	curl -sf --max-time 5 --data-urlencode "query=$1" "$api/query" |
		python3 -c 'import json,sys; r=json.load(sys.stdin)["data"]["result"]; print(r[0]["value"][1] if r else "")' 2>/dev/null
}
# scraped while running, then the whole file: received reaches n
mid=0 rx=
for _ in $(seq 1 300); do
	rx=$(q 'sum(gpucap_received_packets_total{job="gpucap"})')
	if [ -n "$rx" ] && [ "$rx" -gt 0 ] && [ "$rx" -lt "$n" ]; then mid=1; fi
	[ "$rx" = "$n" ] && break
	kill -0 $gcpid 2>/dev/null || die "gpu-capture ended: $(cat "$T/gc.err")"
	sleep 0.2
done
[ "$rx" = "$n" ] || die "Prometheus read received=$rx, the file holds $n: $(tail -5 "$T/prom.log")"
# (a scrape between the first packet and the last is likely, not certain:
# Prometheus spreads its first scrape of a target over the interval)
[ $mid -eq 1 ] && note "a scrape saw the capture in progress"
# a scrape after the writer caught up
for _ in $(seq 1 100); do
	w=$(q 'gpucap_written_packets_total{job="gpucap"}')
	c=$(q 'sum(gpucap_captured_packets_total{job="gpucap"})')
	[ -n "$w" ] && [ "$w" = "$c" ] && break
	sleep 0.2
done
sleep 1.5 # one more scrape of the final values
up=$(q 'gpucap_up{job="gpucap"}')
[ "$up" = 1 ] || fail "gpucap_up is '$up'"
cap=$(q 'sum(gpucap_captured_packets_total{job="gpucap"})')
filt=$(q 'sum(gpucap_filtered_packets_total{job="gpucap"})')
drop=$(q 'sum(gpucap_dropped_packets_total{job="gpucap"})')
recs=$(q 'gpucap_output_records_total{job="gpucap",output="0"}')
lat=$(q 'gpucap_latency_seconds_count{job="gpucap"}')
forced=$(q 'gpucap_order_forced_packets_total{job="gpucap"}')
iow=$(q 'gpucap_output_io_wait_seconds_total{job="gpucap",output="0"}')
bpw=$(q 'sum(gpucap_backpressure_wait_seconds_total{job="gpucap"})')
# the endpoint's other answers: a path it does not serve, a method
curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$mp/x" >"$T/code" 2>/dev/null
[ "$(cat "$T/code")" = 404 ] || fail "GET /x answered $(cat "$T/code")"
curl -s -o /dev/null -w '%{http_code}' -X POST -d x "http://127.0.0.1:$mp/metrics" >"$T/code" 2>/dev/null
[ "$(cat "$T/code")" = 405 ] || fail "POST /metrics answered $(cat "$T/code")"
curl -s -D "$T/hdr" -o "$T/metrics.txt" "http://127.0.0.1:$mp/metrics"
# the text format wants each family's samples together, after its TYPE
python3 - "$T/metrics.txt" <<'PY' || fail "/metrics: a family's samples apart: $(head -c 2000 "$T/metrics.txt")"
import sys
fam, seen = None, set()
for line in open(sys.argv[1]):
    if line.startswith("# TYPE "):
        fam = line.split()[2]
        assert fam not in seen, ("family twice", fam)
        seen.add(fam)
    elif line.strip() and not line.startswith("#"):
        name = line.split("{")[0].split()[0]
        assert fam and (name == fam or name in (fam + "_bucket", fam + "_sum", fam + "_count")), (name, fam)
assert "gpucap_backpressure_wait_seconds_total" in seen, sorted(seen)
PY
grep -qi '^content-type: text/plain; version=0.0.4' "$T/hdr" || fail "content type: $(cat "$T/hdr")"
# the port taken: the second capture says so and starts nothing
gc -i "net_pcap1,rx_pcap=$LIVE1" -w "$T/busy.pcap" --metrics "127.0.0.1:$mp"; rc=$?
[ $rc -eq 1 ] && grep -q "^gpu-capture: --metrics 127.0.0.1:$mp: cannot listen: Address already in use" "$T/gc.err" ||
	fail "--metrics on a taken port: exit $rc: $(cat "$T/gc.err")"
rules=$(curl -sf --max-time 5 "$api/rules" | python3 -c 'import json,sys; print(len([r for g in json.load(sys.stdin)["data"]["groups"] if g["name"]=="gpucap" for r in g["rules"]]))')
[ "$rules" = 7 ] || fail "Prometheus loaded $rules gpucap rules, expected 7"
kill -INT $gcpid
wait $gcpid || fail "gpu-capture exit $?: $(cat "$T/gc.err")"
python3 - "$T/s.json" "$cap" "$filt" "$drop" "$recs" "$lat" "$forced" "$(count "$T/o.pcap")" "$iow" "$bpw" <<'PY' || fail "Prometheus' values differ from the summary"
import json, sys
s = json.load(open(sys.argv[1]))
cap, filt, drop, recs, lat, forced, n = (int(float(v)) for v in sys.argv[2:9])
iow = float(sys.argv[9])  # scraped before the stop: at most the summary's
assert 0 <= iow <= s["io_wait_seconds"] + 1e-6, (iow, s["io_wait_seconds"])
bpw = float(sys.argv[10])  # the family is there (both reasons summed), likewise
assert 0 <= bpw <= sum(s["backpressure_wait_seconds"].values()) + 1e-6, (bpw, s)
print("prometheus:", dict(captured=cap, filtered=filt, dropped=drop, records=recs, latency_count=lat),
      "summary:", {k: s[k] for k in ("received", "captured", "filtered")})
assert cap == s["captured"] == recs == n, (cap, s["captured"], recs, n)
assert filt == s["filtered"] and drop == sum(s["dropped"].values()), (filt, drop, s)
assert forced == s["order_forced"], (forced, s["order_forced"])
assert lat == s["received"] - sum(s["dropped"].values()), (lat, s)
PY
finish
