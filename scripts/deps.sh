#!/usr/bin/env bash
# Install what gpucap needs to build and test on Debian 12 (run as root).
# CUDA is not a Debian package: where /usr/local/cuda exists the gpu backend
# is built too, else a cpu-only build is made.
set -euo pipefail
pkgs=(build-essential pkg-config meson ninja-build python3
	dpdk dpdk-dev libdpdk-dev libpcap-dev libnuma-dev libibverbs-dev
	check tcpdump tshark clang clang-format
	libmicrohttpd-dev prometheus curl python3-matplotlib
	libinih-dev libcap-ng-dev libsystemd-dev systemd
	zlib1g-dev libzstd-dev liblz4-dev libxxhash-dev zstd lz4 tabix)
missing=()
for p in "${pkgs[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
	echo "deps: installing ${missing[*]}"
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -q
	apt-get install -y -q --no-install-recommends "${missing[@]}"
fi
