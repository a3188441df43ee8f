#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""Wireshark extcap for gpucap: lists gpu-capture's ports as capture
interfaces (tshark -D, Wireshark's interface list), describes its options
for the capture dialog, and captures by running gpu-capture into the pipe
Wireshark reads, the capture filter compiled by gpu-capture (on the GPU
where it runs there).

Interfaces are the ports named in the files gpucap-extcap-ports (one -i
argument per line, '#' comments) under $XDG_CONFIG_HOME/gpucap (else
~/.config/gpucap) and /etc/gpucap, in $GPUCAP_EXTCAP_PORTS (';'
separated), and the PCI functions bound to vfio-pci, uio_pci_generic or
igb_uio. An interface is "gpucap-" and the port's name (a PCI address,
or a virtual device's name such as net_pcap0).
"""
import argparse
import os
import re
import shutil
import subprocess
import sys

VERSION = "@VERSION@"
# the installed gpu-capture (meson substitutes it); GPUCAP_GPU_CAPTURE
# overrides, else gpu-capture on PATH
GPU_CAPTURE = "@GPU_CAPTURE@"
PREFIX = "gpucap-"
DPDK_DRIVERS = ("vfio-pci", "uio_pci_generic", "igb_uio")
PCI_RE = re.compile(r"^[0-9a-fA-F]{4}:[0-9a-fA-F]{2}:[0-9a-fA-F]{2}\.[0-7]$")


def config_files():
    base = os.environ.get("XDG_CONFIG_HOME") or os.path.join(
        os.path.expanduser("~"), ".config")
    return [os.path.join(base, "gpucap", "gpucap-extcap-ports"),
            "/etc/gpucap/gpucap-extcap-ports"]


def port_name(spec):
    """The interface a port appears as: its PCI address or vdev name."""
    return spec.split(",", 1)[0].strip()


def ports():
    """(name, spec) of every port, configured first, each name once."""
    specs = []
    for path in config_files():
        try:
            with open(path, encoding="utf-8") as f:
                for line in f:
                    line = line.split("#", 1)[0].strip()
                    if line:
                        specs.append(line)
        except OSError:
            pass
    specs += [s.strip() for s in os.environ.get("GPUCAP_EXTCAP_PORTS", "").split(";")
              if s.strip()]
    for drv in DPDK_DRIVERS:
        d = os.path.join("/sys/bus/pci/drivers", drv)
        try:
            specs += sorted(e for e in os.listdir(d) if PCI_RE.match(e))
        except OSError:
            pass
    seen, out = set(), []
    for s in specs:
        n = port_name(s)
        if n and n not in seen:
            seen.add(n)
            out.append((n, s))
    return out


def find_port(iface):
    for n, s in ports():
        if PREFIX + n == iface:
            return s
    return None


def gpu_capture():
    exe = os.environ.get("GPUCAP_GPU_CAPTURE")
    if exe:
        return exe
    if not GPU_CAPTURE.startswith("@") and os.access(GPU_CAPTURE, os.X_OK):
        return GPU_CAPTURE
    return shutil.which("gpu-capture") or "gpu-capture"


def list_interfaces():
    print("extcap {version=%s}" % VERSION)
    for n, s in ports():
        kind = "PCI" if PCI_RE.match(n) else "virtual device"
        print("interface {value=%s%s}{display=gpucap: DPDK %s %s}" % (PREFIX, n, kind, n))


def list_dlts(iface):
    print("dlt {number=1}{name=EN10MB}{display=Ethernet}")


def list_config(iface):
    spec = find_port(iface) or ""
    args = [
        "{call=--port}{display=Port}{type=string}{default=%s}"
        "{tooltip=gpu-capture -i: a PCI address or a DPDK virtual device with its arguments}"
        "{required=true}{group=Port}" % spec.replace("}", ""),
        "{call=--queues}{display=RX queues}{type=unsigned}{default=1}{range=1,64}"
        "{tooltip=RX queues of the port (RSS)}{group=Port}",
        "{call=--backend}{display=Backend}{type=selector}"
        "{tooltip=Where the capture filter runs}{group=Processing}",
        "{call=--mem}{display=Memory mode}{type=selector}"
        "{tooltip=Where packets land for the GPU}{group=Processing}",
        "{call=--gpu}{display=GPU ordinals}{type=string}"
        "{tooltip=e.g. 0 or 0,1 (default: the GPU nearest the port)}"
        "{validation=^[0-9]+(,[0-9]+)*$}{group=Processing}",
        "{call=--snaplen}{display=Snapshot length}{type=unsigned}{default=262144}"
        "{range=1,262144}{tooltip=Bytes kept per packet}{group=Processing}",
        "{call=--eal}{display=EAL arguments}{type=string}"
        "{tooltip=Extra DPDK EAL arguments}{group=Port}",
    ]
    for i, a in enumerate(args):
        print("arg {number=%d}%s" % (i, a))
    for v, d in (("auto", "auto"), ("gpu", "GPU"), ("cpu", "CPU")):
        print("value {arg=2}{value=%s}{display=%s}%s" % (v, d, "{default=true}" if v == "auto" else ""))
    for v, d in (("auto", "auto"), ("gpu", "GPU memory"), ("host", "host memory"),
                 ("copy", "copied to the GPU")):
        print("value {arg=3}{value=%s}{display=%s}%s" % (v, d, "{default=true}" if v == "auto" else ""))


def capture_argv(a, fifo):
    argv = [gpu_capture(), "-q", "-U", "--format", "pcap", "-i", a.port, "-w", fifo,
            "--queues", str(a.queues), "--backend", a.backend]
    if a.backend != "cpu":
        argv += ["--mem", a.mem]
    if a.gpu:
        argv += ["--gpu", a.gpu]
    if a.snaplen:
        argv += ["-s", str(a.snaplen)]
    if a.eal:
        argv += ["--eal", a.eal]
    if a.extcap_capture_filter:
        argv.append(a.extcap_capture_filter)
    return argv


def check_filter(a):
    """Wireshark asks whether a capture filter is valid: gpu-capture -d
    compiles it as a capture would, and says why not."""
    r = subprocess.run([gpu_capture(), "-i", a.port, "-d", a.extcap_capture_filter],
                       stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                       check=False)
    if r.returncode != 0:
        print(r.stderr.strip().replace("gpu-capture: ", "", 1))
        return 1
    return 0


def main():
    p = argparse.ArgumentParser(description="gpucap's Wireshark extcap")
    p.add_argument("--extcap-interfaces", action="store_true")
    p.add_argument("--extcap-version")
    p.add_argument("--extcap-interface")
    p.add_argument("--extcap-dlts", action="store_true")
    p.add_argument("--extcap-config", action="store_true")
    p.add_argument("--extcap-capture-filter")
    p.add_argument("--capture", action="store_true")
    p.add_argument("--fifo")
    p.add_argument("--port")
    p.add_argument("--queues", type=int, default=1)
    p.add_argument("--backend", choices=("auto", "gpu", "cpu"), default="auto")
    p.add_argument("--mem", choices=("auto", "gpu", "host", "copy"), default="auto")
    p.add_argument("--gpu", default="")
    p.add_argument("--snaplen", type=int, default=0)
    p.add_argument("--eal", default="")
    a, unknown = p.parse_known_args()
    if unknown:  # options of a newer Wireshark (e.g. --extcap-control-in)
        print("gpucap-extcap: ignoring %s" % " ".join(unknown), file=sys.stderr)
    if a.extcap_interfaces:
        list_interfaces()
        return 0
    if not a.extcap_interface:
        p.error("--extcap-interface is required (or --extcap-interfaces)")
    if not a.extcap_interface.startswith(PREFIX):
        print("gpucap-extcap: %s is not a gpucap interface" % a.extcap_interface,
              file=sys.stderr)
        return 1
    if a.extcap_dlts:
        list_dlts(a.extcap_interface)
        return 0
    if a.extcap_config:
        list_config(a.extcap_interface)
        return 0
    if not a.port:
        a.port = find_port(a.extcap_interface)
        if a.port is None:
            print("gpucap-extcap: no port is configured for %s" % a.extcap_interface,
                  file=sys.stderr)
            return 1
    if a.extcap_capture_filter and not a.capture:
        return check_filter(a)
    if a.capture:
        if not a.fifo:
            p.error("--capture needs --fifo")
        argv = capture_argv(a, a.fifo)
        sys.stdout.flush()
        # gpu-capture takes this process' place: Wireshark's stop signal
        # reaches it directly and it closes the pipe's last record whole
        os.execvp(argv[0], argv)
    p.error("nothing to do: --extcap-interfaces, --extcap-dlts, --extcap-config or --capture")
    return 2


if __name__ == "__main__":
    sys.exit(main())
