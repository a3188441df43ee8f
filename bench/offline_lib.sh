# SPDX-License-Identifier: BSD-3-Clause
# Sourced by bench/offline.sh and bench/offline_gpu_sweep.sh: the input
# they read and the 64 filters of their many-output rows, made once here.

# offline_input MIX OUT SIZE_MB: a pcap header, then MIX's records again
# and again to about SIZE_MB MB
offline_input() {
	python3 - "$1" "$2" "$3" <<'PY'
import sys
d = open(sys.argv[1], 'rb').read()
hdr, body = d[:24], d[24:]
n = max(1, int(sys.argv[3]) * 1000 * 1000 // len(body))
with open(sys.argv[2], 'wb') as f:
    f.write(hdr)
    for _ in range(n):
        f.write(body)
PY
}

# the 64 filters, in the array exprs
exprs=()
for i in $(seq 0 63); do
	case $((i % 4)) in
	0) exprs+=("tcp port $((80 + i))") ;;
	1) exprs+=("udp port $((53 + i))") ;;
	2) exprs+=("host 10.0.0.$((i + 1)) and tcp") ;;
	3) exprs+=("icmp and greater $((100 + 8 * i))") ;;
	esac
done
