# shellcheck shell=bash
# The emulated NIC's bench sources, one definition sourced by
# gpu_capture.sh (its rows) and gpunic_bench.sh (its diagnosis), so that
# both loop over the same frames.
# gpunic_pcap SRC DIR MIX: the capture SRC loops over, made in DIR the
# first time (its path on stdout):
#   gpunic   MIX without its frames longer than a --mem gpu data room
#            holds (65,472 bytes: --mem gpu would drop them as chains
#            where the cpu backend copies each whole), every other record
#            whole;
#   gpunicN  N-byte UDP frames of 4096 flows, N from 64 to 1514
#            (flows64.py).
gpunic_pcap() {
	local here f
	here=$(dirname "${BASH_SOURCE[0]}")
	case $1 in
	gpunic) f=$2/mix-whole.pcap
		[ -e "$f" ] || python3 "$here/../scripts/pcap-snap.py" "$3" "$f" 262144 65472 >&2 || return 1 ;;
	gpunic[0-9]*) f=$2/flows${1#gpunic}.pcap
		[ -e "$f" ] || python3 "$here/flows64.py" "$f" "${1#gpunic}" >&2 || return 1 ;;
	*) echo "gpunic_pcap: no such source: $1" >&2; return 1 ;;
	esac
	echo "$f"
}
