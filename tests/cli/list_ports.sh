#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# tcpdump's -D, -L, -y and -i N, on a fake sysfs (--doctor-root): PCI
# NICs on a driver DPDK drives, then Linux interfaces, numbered; a link
# type the port cannot give refused before anything starts.
. "$(dirname "$0")/lib.sh"
R=$T/root
pci() { # BDF CLASS DRIVER [IFACE]
	local d=$R/sys/bus/pci/devices/$1
	mkdir -p "$d" "$R/sys/bus/pci/drivers/$3"
	echo "$2" >"$d/class"
	ln -s "../../../bus/pci/drivers/$3" "$d/driver"
	if [ -n "${4:-}" ]; then mkdir -p "$d/net/$4"; fi
}
iface() { # NAME FLAGS CARRIER OPERSTATE [BDF]
	local d=$R/sys/class/net/$1
	mkdir -p "$d"
	echo "$2" >"$d/flags"; echo "$3" >"$d/carrier"; echo "$4" >"$d/operstate"
	if [ -n "${5:-}" ]; then
		ln -s "../../../bus/pci/devices/$5" "$d/device"
	fi
}
pci 0000:3b:00.0 0x020000 mlx5_core ens1f0
pci 0000:3b:00.1 0x020000 vfio-pci
pci 0000:5e:00.0 0x020000 ixgbe eno1
pci 0000:17:00.0 0x030200 nvidia
pci 0000:af:00.0 0x020000 uio_pci_generic
iface ens1f0 0x1003 1 up 0000:3b:00.0
iface eno1 0x1002 0 down 0000:5e:00.0
iface lo 0x9 1 unknown
cat >"$T/want" <<EOW
1.0000:3b:00.0 (mlx5_core: DPDK's mlx5 PMD beside the kernel driver, interface ens1f0) [PCI]
2.0000:3b:00.1 (vfio-pci: DPDK's PMD through VFIO) [PCI]
3.0000:af:00.0 (uio_pci_generic: DPDK's PMD through UIO) [PCI]
4.eno1 (Linux interface through net_af_packet; 0000:5e:00.0, ixgbe) [Disconnected]
5.ens1f0 (Linux interface through net_af_packet; 0000:3b:00.0, mlx5_core) [Up, Running, Connected]
6.lo (Linux interface through net_af_packet) [Up, Running, Loopback]
EOW
timeout 20 "$GC" -D --doctor-root "$R" >"$T/D.out" 2>"$T/gc.err" || fail "-D: exit $?: $(cat "$T/gc.err")"
diff -u "$T/want" "$T/D.out" >&2 || fail "-D differs"
# the real host: at least its loopback, numbered from 1
timeout 20 "$GC" -D >"$T/D2.out" 2>"$T/gc.err" || fail "-D on this host: $(cat "$T/gc.err")"
grep -qE '^[0-9]+\.lo .*Loopback' "$T/D2.out" || fail "-D on this host: no lo: $(cat "$T/D2.out")"
# -i N: the Nth port of -D's list (-L shows which it took)
timeout 20 "$GC" -i 2 -L --doctor-root "$R" >"$T/L.out" 2>"$T/gc.err" || fail "-i 2 -L: $(cat "$T/gc.err")"
head -1 "$T/L.out" | grep -qF "Data link types for 0000:3b:00.1 (use option -y to set):" ||
	fail "-i 2: $(cat "$T/L.out")"
gc -i 7 -L --doctor-root "$R"; rc=$?
[ $rc -eq 1 ] && grep -q "there are 6 ports" "$T/gc.err" || fail "-i 7 of 6: exit $rc: $(cat "$T/gc.err")"
# -L as tcpdump prints it; net_pcap gives its file's link type
gc -i net_null0 -L >"$T/L.out" || fail "-L: $(cat "$T/gc.err")"
printf 'Data link types for net_null0 (use option -y to set):\n  EN10MB (Ethernet)\n' | cmp -s - "$T/L.out" ||
	fail "-L net_null0: $(cat "$T/L.out")"
gc -i "net_pcap0,rx_pcap=$DATA/raw-ip.pcap" -L >"$T/L.out" || fail "-L net_pcap: $(cat "$T/gc.err")"
grep -q "^  RAW (Raw IP)$" "$T/L.out" || fail "-L net_pcap raw-ip: $(cat "$T/L.out")"
# -y: the port's own type taken, another refused before anything starts
gc -i "net_pcap0,rx_pcap=$LIVE1" -y EN10MB -w "$T/y.pcap" --backend cpu --duration 2 ||
	fail "-y EN10MB: $(cat "$T/gc.err")"
[ "$(count "$T/y.pcap")" -eq "$(count "$LIVE1")" ] || fail "-y EN10MB: not every packet"
gc -i "net_pcap0,rx_pcap=$LIVE1" -y RAW -w "$T/y2.pcap" --duration 2; rc=$?
[ $rc -eq 1 ] && grep -q "gives EN10MB only" "$T/gc.err" || fail "-y RAW: exit $rc: $(cat "$T/gc.err")"
[ -e "$T/y2.pcap" ] && fail "-y RAW: output created"
gc -i net_null0 -y NOSUCH -w "$T/y3.pcap"; rc=$?
[ $rc -eq 1 ] && grep -q "invalid data link type NOSUCH" "$T/gc.err" || fail "-y NOSUCH: $(cat "$T/gc.err")"
gc -r "$LIVE1" -y EN10MB -w "$T/y4.pcap"; rc=$?
[ $rc -eq 1 ] || fail "-y with -r: exit $rc"
finish
