# shellcheck shell=bash
# Sourced by the emulated NIC's benches (gpu_capture.sh's gpunic source,
# gpunic_bench.sh's diagnosis), so that both loop over the same frames.
# gpunic_mix MIX OUT: MIX without its frames longer than a --mem gpu data
# room holds (65,472 bytes: --mem gpu would drop them as chains where the
# cpu backend copies each whole), every other record whole.
gpunic_mix() {
	python3 "$(dirname "${BASH_SOURCE[0]}")/../scripts/pcap-snap.py" "$1" "$2" 262144 65472
}
