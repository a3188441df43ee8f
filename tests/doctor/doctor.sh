#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# gpu-capture --doctor against fake hosts: each case builds a sysfs/procfs
# tree (directories, files and symbolic links laid out as the kernel lays
# them out) in a temporary directory, gives it to --doctor-root, takes the
# GPUs from the fake driver library (fake_cuda.c) and checks the report's
# lines and the exit status; --json must parse and give the same verdict.
# Nothing is read from this machine's /sys or /proc.
# Arguments: GPU_CAPTURE FAKE_LIBCUDA (the word "none" in a build without
# CUDA: only the cases without a GPU run).
set -u
GC=${1:?gpu-capture path}
FAKE=${2:?fake libcuda path or none}
T=$(mktemp -d "${TMPDIR:-/tmp}/gcap-doctor.XXXXXX")
trap 'rm -rf "$T"' EXIT
nfail=0

fail() { echo "FAIL: $*" >&2; nfail=$((nfail + 1)); }

# ---- tree builders ----

# pci R HIERARCHY CLASS VENDOR DEVICE NUMA DRIVER GROUP GROUP_TYPE:
# a PCI function at /sys/devices/HIERARCHY (its last component is its
# address), linked from /sys/bus/pci/devices; DRIVER and GROUP may be "-"
pci() {
	local r=$1 h=$2 cls=$3 ven=$4 dev=$5 numa=$6 drv=$7 grp=$8 gtype=${9:-}
	local d=$r/sys/devices/$h bdf=${h##*/}

	mkdir -p "$d" "$r/sys/bus/pci/devices"
	echo "$cls" >"$d/class"
	echo "$ven" >"$d/vendor"
	echo "$dev" >"$d/device"
	echo "$numa" >"$d/numa_node"
	ln -sr "$d" "$r/sys/bus/pci/devices/$bdf"
	if [ "$drv" != - ]; then
		mkdir -p "$r/sys/bus/pci/drivers/$drv"
		ln -sr "$r/sys/bus/pci/drivers/$drv" "$d/driver"
	fi
	if [ "$grp" != - ]; then
		mkdir -p "$r/sys/kernel/iommu_groups/$grp/devices"
		[ -n "$gtype" ] && echo "$gtype" >"$r/sys/kernel/iommu_groups/$grp/type"
		ln -sr "$r/sys/kernel/iommu_groups/$grp" "$d/iommu_group"
		ln -sr "$d" "$r/sys/kernel/iommu_groups/$grp/devices/$bdf"
	fi
}

# bridges R HIERARCHY...: PCI bridges (class 0x060400) on the way down
bridges() {
	local r=$1 h

	shift
	for h in "$@"; do
		pci "$r" "$h" 0x060400 0x8086 0x2030 0 pcieport -
	done
}

# a GPU's resource file: BAR0 16 MiB, BAR1 of $2 bytes, BAR3 32 MiB
gpu_resource() {
	local d=$1 bar1=$2

	printf '0x%016x 0x%016x 0x%016x\n' 0xe0000000 0xe0ffffff 0x40200 \
		0x38000000000 $((0x38000000000 + bar1 - 1)) 0x14220c \
		0 0 0 \
		0x3a000000000 0x3a001ffffff 0x14220c \
		0 0 0 0 0 0 >"$d/resource"
}

# modules R NAME...: /proc/modules with these modules loaded
modules() {
	local r=$1 m

	shift
	: >"$r/proc/modules"
	for m in "$@"; do
		echo "$m 16384 0 - Live 0x0000000000000000" >>"$r/proc/modules"
	done
}

# hugepages R NR FREE MOUNTED(0|1)
hugepages() {
	local r=$1 h=$1/sys/kernel/mm/hugepages

	mkdir -p "$h/hugepages-2048kB" "$h/hugepages-1048576kB"
	echo "$2" >"$h/hugepages-2048kB/nr_hugepages"
	echo "$3" >"$h/hugepages-2048kB/free_hugepages"
	echo 0 >"$h/hugepages-1048576kB/nr_hugepages"
	echo 0 >"$h/hugepages-1048576kB/free_hugepages"
	printf 'MemTotal:       263856012 kB\nHugePages_Total:    %d\nHugePages_Free:     %d\nHugepagesize:       2048 kB\n' \
		"$2" "$3" >"$r/proc/meminfo"
	echo "sysfs /sys sysfs rw,nosuid,nodev,noexec,relatime 0 0" >"$r/proc/mounts"
	[ "$4" = 1 ] && echo "hugetlbfs /dev/hugepages hugetlbfs rw,relatime,pagesize=2M 0 0" \
		>>"$r/proc/mounts"
	return 0
}

# The ready host: an H200 and a ConnectX-7 under one PCIe switch (root port
# 00:01.0, switch 01:00.0 with downstream ports 02:08.0 and 02:10.0),
# nvidia-peermem loaded, the IOMMU in passthrough, 1024 hugepages of 2 MiB.
ready_tree() {
	local r=$1 sw=pci0000:00/0000:00:01.0/0000:01:00.0

	mkdir -p "$r/proc/driver/nvidia/gpus/0000:03:00.0" "$r/sys/class/iommu/dmar0" \
		"$r/dev/infiniband" "$r/usr/lib/x86_64-linux-gnu"
	bridges "$r" pci0000:00/0000:00:01.0 $sw $sw/0000:02:08.0 $sw/0000:02:10.0
	pci "$r" $sw/0000:02:08.0/0000:03:00.0 0x030200 0x10de 0x2335 0 nvidia 12 identity
	gpu_resource "$r/sys/devices/$sw/0000:02:08.0/0000:03:00.0" $((256 << 30))
	pci "$r" $sw/0000:02:10.0/0000:04:00.0 0x020000 0x15b3 0x1021 0 mlx5_core 13 identity
	mkdir -p "$r/sys/devices/$sw/0000:02:10.0/0000:04:00.0/infiniband/mlx5_0" \
		"$r/sys/devices/$sw/0000:02:10.0/0000:04:00.0/infiniband_verbs/uverbs0"
	touch "$r/dev/infiniband/uverbs0" \
		"$r/usr/lib/x86_64-linux-gnu/libibverbs.so.1" \
		"$r/usr/lib/x86_64-linux-gnu/libmlx5.so.1"
	echo "NVRM version: NVIDIA UNIX x86_64 Kernel Module  570.86.15  Thu Jan 30 2025" \
		>"$r/proc/driver/nvidia/version"
	printf 'Model: \t\t NVIDIA H200\nBus Location: \t 0000:03:00.0\n' \
		>"$r/proc/driver/nvidia/gpus/0000:03:00.0/information"
	echo "BOOT_IMAGE=/vmlinuz root=/dev/sda1 ro intel_iommu=on iommu=pt" >"$r/proc/cmdline"
	modules "$r" nvidia_peermem nvidia_uvm nvidia mlx5_ib ib_uverbs mlx5_core
	hugepages "$r" 1024 1024 1
}

H200="gpu NVIDIA H200|00000000:03:00.0|9.0|0|1|1|100|150754820096|274877906944|274810798080"
GB10="gpu NVIDIA GB10|0000000F:01:00.0|12.1|1|0|0|0|128526278656|0|0"
# cuda_conf FILE DRIVER_VERSION GPU_LINE...
cuda_conf() {
	local f=$1 v=$2 l

	shift 2
	printf 'driver %d\nnvml 570.86.15\n' "$v" >"$f"
	for l in "$@"; do
		echo "$l" >>"$f"
	done
}

# ---- running ----

# doctor CASE ROOT CUDA_CONF|- ARGS...: the report in $T/CASE.out, the exit
# status in $rc; the same with --json in $T/CASE.json, checked against it
doctor() {
	local name=$1 root=$2 conf=$3 lib=$FAKE jrc
	shift 3

	[ "$conf" = - ] && lib=$T/no-such-libcuda.so.1
	GCAP_CUDA_LIB=$lib GCAP_NVML_LIB=$lib GCAP_FAKE_CUDA=$conf \
		timeout 30 "$GC" --doctor --doctor-root "$root" "$@" \
		>"$T/$name.out" 2>"$T/$name.err"
	rc=$?
	GCAP_CUDA_LIB=$lib GCAP_NVML_LIB=$lib GCAP_FAKE_CUDA=$conf \
		timeout 30 "$GC" --doctor --json --doctor-root "$root" "$@" \
		>"$T/$name.json" 2>>"$T/$name.err"
	jrc=$?
	[ "$jrc" -eq "$rc" ] || fail "$name: --json exit $jrc, lines exit $rc"
	python3 -m json.tool "$T/$name.json" >/dev/null ||
		fail "$name: --json does not parse"
	python3 - "$T/$name.json" "$T/$name.out" "$rc" <<'EOF' || fail "$name: --json differs from the lines"
import json, sys
doc = json.load(open(sys.argv[1]))
lines = open(sys.argv[2]).read().splitlines()
tags = {"ok": "[ ok ]", "warn": "[warn]", "fail": "[FAIL]", "info": "[info]"}
assert doc["ready"] == (sys.argv[3] == "0"), "ready"
assert len(doc["checks"]) == len(lines), "count"
for c, l in zip(doc["checks"], lines):
    assert l.startswith(tags[c["status"]] + " " + c["check"] + ": " + c["found"]), l
    assert (c["fix"] is None) == ("  fix: " not in l), l
EOF
}

# expect CASE RC LINE...: exit status RC, and each LINE starts a line
expect() {
	local name=$1 want=$2 before=$nfail l
	shift 2

	[ "$rc" -eq "$want" ] || fail "$name: exit $rc, expected $want"
	for l in "$@"; do
		grep -qF -- "$l" <(cut -c1-${#l} "$T/$name.out") ||
			fail "$name: no line starting '$l'"
	done
	if [ "$nfail" -ne "$before" ]; then
		sed 's/^/  | /' "$T/$name.out" "$T/$name.err" >&2
	fi
	echo "$name: exit $rc"
}

# reject CASE PATTERN: no line matches
reject() {
	if grep -qE -- "$2" "$T/$1.out"; then
		fail "$1: unexpected line matching '$2'"
	fi
}

# ---- the cases ----

# No GPU at all: no driver library, no NVIDIA device; the other checks run
R=$T/nogpu
mkdir -p "$R/sys/class/iommu" "$R/proc"
pci "$R" pci0000:00/0000:00:03.0 0x020000 0x1af4 0x1041 -1 virtio-pci -
echo "BOOT_IMAGE=/vmlinuz root=/dev/vda1" >"$R/proc/cmdline"
modules "$R" virtio_net
hugepages "$R" 0 0 0
doctor nogpu "$R" -
expect nogpu 1 "[FAIL] cuda driver: " "[FAIL] gpus: no CUDA device" \
	"[FAIL] peermem: none of" "[ ok ] iommu: off" "[FAIL] hugepages: " \
	"[FAIL] port 0000:00:03.0 driver: virtio-pci" \
	"[FAIL] port 0000:00:03.0 --mem auto: none: no usable GPU" \
	"[FAIL] verdict: GPU-memory capture cannot work"
if [ "$FAKE" = none ]; then
	grep -q "this build has no CUDA support" "$T/nogpu.out" ||
		fail "nogpu: no 'this build has no CUDA support'"
else
	grep -q "no CUDA driver: dlopen(" "$T/nogpu.out" ||
		fail "nogpu: no 'no CUDA driver: dlopen('"
fi

# -i with a PCI address the tree does not have, and a malformed root
doctor absent "$R" - -i 0000:5e:00.0
expect absent 1 "[FAIL] port 0000:5e:00.0: no such PCI device" \
	"[FAIL] port 0000:5e:00.0 --mem auto: none: the port does not exist"
timeout 30 "$GC" --doctor --doctor-root "$T/no-such-dir" >/dev/null 2>"$T/badroot.err"
rc=$?
[ $rc -eq 1 ] && grep -q "not a directory" "$T/badroot.err" ||
	fail "bad --doctor-root: exit $rc, $(cat "$T/badroot.err")"
timeout 30 "$GC" --json -i 0000:5e:00.0 -w "$T/x.pcap" >/dev/null 2>"$T/nodoctor.err"
rc=$?
[ $rc -eq 1 ] && grep -q "need --doctor" "$T/nodoctor.err" ||
	fail "--json without --doctor: exit $rc, $(cat "$T/nodoctor.err")"

if [ "$FAKE" = none ]; then
	[ "$nfail" -eq 0 ] || { echo "$nfail failure(s)" >&2; exit 1; }
	echo "PASS (build without CUDA: the GPU cases need the fake driver)"
	exit 0
fi

# The ready host, with every NIC found and with -i (both address forms)
R=$T/ready
ready_tree "$R"
cuda_conf "$T/h200.conf" 13000 "$H200"
doctor ready "$R" "$T/h200.conf"
expect ready 0 \
	"[ ok ] nvidia driver: 570.86.15 (/proc/driver/nvidia/version)" \
	"[ ok ] gpu 0: NVIDIA H200 at 0000:03:00.0, compute capability 9.0, discrete (CU_DEVICE_ATTRIBUTE_INTEGRATED=0)" \
	"[ ok ] gpu 0 gpudirect rdma: CU_DEVICE_ATTRIBUTE_GPU_DIRECT_RDMA_SUPPORTED=1, GPU_DIRECT_RDMA_FLUSH_WRITES_OPTIONS=0x1 (host: cuFlushGPUDirectRDMAWrites), GPU_DIRECT_RDMA_WRITES_ORDERING=100 (owner)" \
	"[ ok ] gpu 0 bar1: 256.0 GiB (BAR 1 in /sys/bus/pci/devices/0000:03:00.0/resource); 255.9 GiB free of 256.0 GiB (nvmlDeviceGetBAR1MemoryInfo); VRAM 140.4 GiB (cuDeviceTotalMem, not BAR1)" \
	"[ ok ] peermem: nvidia_peermem loaded (/proc/modules)" \
	"[ ok ] iommu: passthrough" "[ ok ] hugepages: " \
	"[info] port 0000:04:00.0: PCI 0000:04:00.0, 15b3:1021, class 0x020000, NUMA node 0" \
	"[ ok ] port 0000:04:00.0 driver: mlx5_core" \
	"[ ok ] port 0000:04:00.0 path to gpu 0: PIX (one PCIe switch, common bridge 0000:01:00.0" \
	"[ ok ] port 0000:04:00.0 --mem auto: gpu on GPU 0" \
	"[ ok ] verdict: GPU-memory capture can work for 0000:04:00.0"
reject ready '^\[(FAIL|warn)\]'
# the driver's version is the fake's; ok or warn depends on this build's cuda.h
grep -qE '^\[( ok |warn)\] cuda driver: driver API loaded: cuDriverGetVersion 13000 \(CUDA 13\.0\), 1 device\(s\); this build: cuda\.h ' \
	"$T/ready.out" || fail "ready: no cuda driver line"
# the open kernel module words its version line differently (as on the
# H200 machines): the version is still found
echo "NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  580.159.04  Release Build  (dvs-builder@U22-I3-AF03-09-1)  Sun Oct 12 2025" \
	>"$R/proc/driver/nvidia/version"
doctor openmodule "$R" "$T/h200.conf"
expect openmodule 0 "[ ok ] nvidia driver: 580.159.04 (/proc/driver/nvidia/version)"
echo "NVRM version: NVIDIA UNIX x86_64 Kernel Module  570.86.15  Thu Jan 30 2025" \
	>"$R/proc/driver/nvidia/version"
# a driver older than the toolkit of the build: a warning
cuda_conf "$T/old.conf" 1000 "$H200"
doctor olddriver "$R" "$T/old.conf"
expect olddriver 0 "[warn] cuda driver: driver API loaded: cuDriverGetVersion 1000 (CUDA 1.0)"
# a BAR1 smaller than VRAM: a warning
cuda_conf "$T/smallbar.conf" 13000 "gpu NVIDIA H200|00000000:03:00.0|9.0|0|1|1|100|150754820096|268435456|201326592"
doctor smallbar "$R" "$T/smallbar.conf"
expect smallbar 0 "[warn] gpu 0 bar1: 256.0 GiB (BAR 1 in /sys/bus/pci/devices/0000:03:00.0/resource); 192.0 MiB free of 256.0 MiB (nvmlDeviceGetBAR1MemoryInfo)"
grep -q "fix: enable a large BAR1" "$T/smallbar.out" || fail "smallbar: no fix"
doctor ready_i "$R" "$T/h200.conf" -i 04:00.0
expect ready_i 0 "[ ok ] port 04:00.0 --mem auto: gpu on GPU 0" \
	"[ ok ] verdict: GPU-memory capture can work for 04:00.0"
# -i with an address the tree lacks beside one it has: not every port can
doctor ready_absent "$R" "$T/h200.conf" -i 0000:04:00.0 -i 0000:5e:00.0
expect ready_absent 1 "[ ok ] port 0000:04:00.0 --mem auto: gpu" \
	"[FAIL] port 0000:5e:00.0: no such PCI device (/sys/bus/pci/devices/0000:5e:00.0 absent)" \
	"[FAIL] verdict: GPU-memory capture cannot work for 0000:5e:00.0"
# a software port never gets GPU memory
doctor vdev "$R" "$T/h200.conf" -i net_null0
expect vdev 1 "[info] port net_null0: a DPDK virtual device" \
	"[FAIL] port net_null0 --mem auto: host on GPU 0: a software port"
# a Linux interface: net_af_packet, and the PCI device under it named
mkdir -p "$R/sys/devices/pci0000:00/0000:00:01.0/0000:01:00.0/0000:02:10.0/0000:04:00.0/net/ens1f0np0" "$R/sys/class/net"
ln -sr "$R/sys/devices/pci0000:00/0000:00:01.0/0000:01:00.0/0000:02:10.0/0000:04:00.0/net/ens1f0np0" "$R/sys/class/net/ens1f0np0"
ln -sr "$R/sys/devices/pci0000:00/0000:00:01.0/0000:01:00.0/0000:02:10.0/0000:04:00.0" "$R/sys/devices/pci0000:00/0000:00:01.0/0000:01:00.0/0000:02:10.0/0000:04:00.0/net/ens1f0np0/device"
doctor iface "$R" "$T/h200.conf" -i ens1f0np0 -i ens9
expect iface 1 "[info] port ens1f0np0: a Linux interface, opened through net_af_packet (a software port); its device is on PCI 0000:04:00.0" \
	"[FAIL] port ens1f0np0 --mem auto: host on GPU 0: a software port" \
	"[FAIL] port ens9: no such interface (/sys/class/net/ens9 absent)" \
	"[FAIL] port ens9 --mem auto: none: the port does not exist"
# the driver missing: the GPU seen in sysfs, with its model from /proc
doctor nodriver "$R" -
expect nodriver 1 "[FAIL] cuda driver: no CUDA driver: dlopen(" \
	"[FAIL] gpu 0000:03:00.0: NVIDIA H200 in /sys/bus/pci/devices (driver nvidia), not usable: no working CUDA driver" \
	"[FAIL] port 0000:04:00.0 --mem auto: none: no usable GPU"

# --gpu names the port's GPU
doctor gpuopt "$R" "$T/h200.conf" -i 0000:04:00.0 --gpu 3
expect gpuopt 1 "[FAIL] port 0000:04:00.0 --mem auto: none: --gpu 3: no such GPU"

# the other classes of path: the NIC behind a second switch (PXB), and both
# on the host bridge's bus, as in many virtual machines (PHB: a warning)
R=$T/pxb
ready_tree "$R"
rm -r "$R/sys/bus/pci/devices/0000:04:00.0" "$R/sys/devices/pci0000:00/0000:00:01.0/0000:01:00.0/0000:02:10.0/0000:04:00.0"
bridges "$R" pci0000:00/0000:00:01.0/0000:01:00.0/0000:02:10.0/0000:05:00.0 \
	pci0000:00/0000:00:01.0/0000:01:00.0/0000:02:10.0/0000:05:00.0/0000:06:01.0
pci "$R" pci0000:00/0000:00:01.0/0000:01:00.0/0000:02:10.0/0000:05:00.0/0000:06:01.0/0000:07:00.0 \
	0x020000 0x15b3 0x1021 0 mlx5_core 13 identity
mkdir -p "$R/sys/bus/pci/devices/0000:07:00.0/infiniband/mlx5_0" \
	"$R/sys/bus/pci/devices/0000:07:00.0/infiniband_verbs/uverbs0"
doctor pxb "$R" "$T/h200.conf"
expect pxb 0 "[ ok ] port 0000:07:00.0 path to gpu 0: PXB (5 PCIe bridges, common bridge 0000:01:00.0"
R=$T/phb
ready_tree "$R"
rm -r "$R/sys/bus/pci/devices" "$R/sys/devices"
pci "$R" pci0000:00/0000:00:07.0 0x030200 0x10de 0x2335 0 nvidia 12 identity
gpu_resource "$R/sys/devices/pci0000:00/0000:00:07.0" $((256 << 30))
pci "$R" pci0000:00/0000:00:08.0 0x020000 0x15b3 0x1021 0 mlx5_core 13 identity
mkdir -p "$R/sys/devices/pci0000:00/0000:00:08.0/infiniband/mlx5_0" \
	"$R/sys/devices/pci0000:00/0000:00:08.0/infiniband_verbs/uverbs0"
cuda_conf "$T/flat.conf" 13000 "gpu NVIDIA H200|00000000:00:07.0|9.0|0|1|1|100|150754820096|274877906944|274810798080"
doctor phb "$R" "$T/flat.conf"
expect phb 0 "[warn] port 0000:00:08.0 path to gpu 0: PHB (no common PCIe bridge below host bridge pci0000:00"

# nvidia-peermem not loaded
R=$T/nopeermem
ready_tree "$R"
modules "$R" nvidia_uvm nvidia mlx5_ib ib_uverbs mlx5_core
doctor nopeermem "$R" "$T/h200.conf"
expect nopeermem 1 "[FAIL] peermem: none of nvidia_peermem, nv_peer_mem, nvidia_p2p loaded" \
	"[FAIL] port 0000:04:00.0 --mem auto: host on GPU 0: mlx5 cannot register GPU memory" \
	"[FAIL] verdict: GPU-memory capture cannot work for 0000:04:00.0"
grep -q "fix: modprobe nvidia-peermem" "$T/nopeermem.out" || fail "nopeermem: no fix"
# the older module is enough
modules "$R" nv_peer_mem nvidia mlx5_ib ib_uverbs mlx5_core
doctor nvpeermem "$R" "$T/h200.conf"
expect nvpeermem 0 "[ ok ] peermem: nv_peer_mem loaded (/proc/modules)"

# the IOMMU translating DMA
R=$T/iommu
ready_tree "$R"
echo DMA-FQ >"$R/sys/kernel/iommu_groups/12/type"
echo DMA-FQ >"$R/sys/kernel/iommu_groups/13/type"
echo "BOOT_IMAGE=/vmlinuz root=/dev/sda1 ro intel_iommu=on" >"$R/proc/cmdline"
doctor iommu "$R" "$T/h200.conf"
expect iommu 1 "[FAIL] iommu: enforcing: DMA is translated (/sys/class/iommu: dmar0; 2 group(s) in /sys/kernel/iommu_groups; 0000:03:00.0: DMA-FQ" \
	"[ ok ] port 0000:04:00.0 --mem auto: gpu" \
	"[FAIL] verdict: GPU-memory capture cannot work for 0000:04:00.0: IOMMU enforcing"
grep -q "fix: boot with iommu=pt" "$T/iommu.out" || fail "iommu: no fix"
# no group type files (older kernels): the command line decides
rm "$R/sys/kernel/iommu_groups/12/type" "$R/sys/kernel/iommu_groups/13/type"
doctor iommu_cmdline "$R" "$T/h200.conf"
expect iommu_cmdline 1 "[FAIL] iommu: enforcing: an IOMMU is on and nothing says passthrough"

# the NIC on the other socket
R=$T/sys
ready_tree "$R"
rm -r "$R/sys/bus/pci/devices/0000:04:00.0" "$R/sys/devices/pci0000:00/0000:00:01.0/0000:01:00.0/0000:02:10.0/0000:04:00.0"
bridges "$R" pci0000:80/0000:80:01.0
pci "$R" pci0000:80/0000:80:01.0/0000:81:00.0 0x020000 0x15b3 0x1021 1 mlx5_core 40 identity
mkdir -p "$R/sys/devices/pci0000:80/0000:80:01.0/0000:81:00.0/infiniband/mlx5_0" \
	"$R/sys/devices/pci0000:80/0000:80:01.0/0000:81:00.0/infiniband_verbs/uverbs0"
doctor sys "$R" "$T/h200.conf"
expect sys 1 "[FAIL] port 0000:81:00.0 path to gpu 0: SYS (host bridges pci0000:80 and pci0000:00 on NUMA nodes 1 and 0: across sockets" \
	"[ ok ] port 0000:81:00.0 --mem auto: gpu on GPU 0" \
	"[FAIL] verdict: GPU-memory capture cannot work for 0000:81:00.0: NIC and GPU 0 across sockets (SYS)"
grep -q "fix: use a GPU on the NIC's NUMA node" "$T/sys.out" || fail "sys: no fix"
# the same two root complexes on one NUMA node: a warning, not a failure
echo 0 >"$R/sys/devices/pci0000:80/0000:80:01.0/0000:81:00.0/numa_node"
doctor node "$R" "$T/h200.conf"
expect node 0 "[warn] port 0000:81:00.0 path to gpu 0: NODE (host bridges pci0000:80 and pci0000:00, one NUMA node (0)" \
	"[ ok ] verdict: GPU-memory capture can work for 0000:81:00.0"

# no hugepages: none reserved, no hugetlbfs
R=$T/nohuge
ready_tree "$R"
hugepages "$R" 0 0 0
doctor nohuge "$R" "$T/h200.conf"
expect nohuge 1 "[FAIL] hugepages: 1048576kB: 0 reserved, 0 free; 2048kB: 0 reserved, 0 free" \
	"[FAIL] verdict: GPU-memory capture cannot work for 0000:04:00.0: no hugepages"
grep -q "hugetlbfs: not mounted (/proc/mounts)" "$T/nohuge.out" || fail "nohuge: mounts not named"
# reserved but not mounted
hugepages "$R" 1024 1024 0
doctor nomount "$R" "$T/h200.conf"
expect nomount 1 "[FAIL] hugepages: "
grep -q "fix: mount -t hugetlbfs" "$T/nomount.out" || fail "nomount: no fix"

# a unified-memory GPU (DGX Spark's GB10): integrated, no GPUDirect RDMA
R=$T/unified
ready_tree "$R"
rm -r "$R/sys/bus/pci/devices/0000:03:00.0" "$R/sys/devices/pci0000:00/0000:00:01.0/0000:01:00.0/0000:02:08.0/0000:03:00.0"
pci "$R" pci000f:00/000f:00:00.0/000f:01:00.0 0x030200 0x10de 0x2e12 0 nvidia -
cuda_conf "$T/gb10.conf" 13000 "$GB10"
doctor unified "$R" "$T/gb10.conf"
expect unified 1 "[ ok ] gpu 0: NVIDIA GB10 at 000f:01:00.0, compute capability 12.1, integrated (CU_DEVICE_ATTRIBUTE_INTEGRATED=1)" \
	"[FAIL] gpu 0 gpudirect rdma: CU_DEVICE_ATTRIBUTE_GPU_DIRECT_RDMA_SUPPORTED=0" \
	"[info] gpu 0 bar1: no BAR 1 size in sysfs (resource: none); none (nvmlDeviceGetBAR1MemoryInfo)" \
	"[FAIL] port 0000:04:00.0 --mem auto: host on GPU 0: GPU 0 has no GPUDirect RDMA" \
	"[FAIL] verdict: GPU-memory capture cannot work for 0000:04:00.0"
grep -q "fix: use --mem host: on a unified-memory GPU" "$T/unified.out" || fail "unified: no fix"

# NICs DPDK drives without GPU memory (vfio-pci), or cannot drive (ice)
R=$T/intel
ready_tree "$R"
pci "$R" pci0000:00/0000:00:01.0/0000:01:00.0/0000:02:10.0/0000:04:00.1 0x020000 0x8086 0x1592 0 vfio-pci 14 identity
pci "$R" pci0000:00/0000:00:01.0/0000:01:00.0/0000:02:10.0/0000:04:00.2 0x020000 0x8086 0x1592 0 ice 15 identity
mkdir -p "$R/dev/vfio"
touch "$R/dev/vfio/vfio" "$R/dev/vfio/14"
doctor intel "$R" "$T/h200.conf" -i 0000:04:00.1 -i 0000:04:00.2
expect intel 1 "[ ok ] port 0000:04:00.1 driver: vfio-pci (/sys/bus/pci/devices/0000:04:00.1/driver): DPDK drives it through VFIO: /dev/vfio/vfio, /dev/vfio/14" \
	"[FAIL] port 0000:04:00.1 --mem auto: host on GPU 0: under vfio-pci" \
	"[FAIL] port 0000:04:00.2 driver: ice" \
	"[FAIL] port 0000:04:00.2 --mem auto: none: the port cannot start"
grep -q "fix: dpdk-devbind.py --bind=vfio-pci 0000:04:00.2" "$T/intel.out" || fail "intel: no devbind fix"
# without -i, one NIC of three is enough
doctor intel_any "$R" "$T/h200.conf"
expect intel_any 0 "[ ok ] verdict: GPU-memory capture can work for 0000:04:00.0 (NICs found without -i)"

if [ "$nfail" -ne 0 ]; then
	echo "$nfail failure(s)" >&2
	exit 1
fi
echo PASS
