#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# tests/cli/kernel_fault.sh on the gpu backend (exit 77 without a GPU):
# an endless inline kernel ends by the watchdog, SIGTERM and --duration
# (the quit flag cannot reach a block inside it: a bounded wait, then
# the process ends without waiting for the kernel); a faulting one is
# named with CUDA's illegal address. Arguments: gpu-capture, pcap-cmp,
# the source root.
KF_BACKEND=gpu exec bash "$(dirname "$0")/../cli/kernel_fault.sh" "$@"
