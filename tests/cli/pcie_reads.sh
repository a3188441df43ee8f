#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# bench/pcie_reads.cu (the GPU's read ceiling over PCIe, docs/benchmarks.md):
# it builds with nvcc, refuses bad arguments with a message and exit 2
# before touching the GPU, exits 77 without one, and on a GPU prints a row
# for the pattern asked for and nothing else.
# Skipped (77) where there is no nvcc (NVCC, default /usr/local/cuda/bin/nvcc).
. "$(dirname "$0")/lib.sh"
nvcc_bench pcie_reads
PR=$T/pcie_reads
check_bad() { bench_refuses "$PR" "$@"; }
check_bad "--slots 5" --slots 5
check_bad "--stride 100" --stride 100
check_bad "--ms 0" --ms 0
check_bad "an unknown option" --bogus 1
check_bad "a value missing" --ms
check_bad "a pattern that does not exist" --only nope
"$PR" --slots 1024 --ms 20 --only head >"$T/out" 2>"$T/err"; rc=$?
if bench_ran $rc "--only head"; then
	python3 - "$T/out" <<'PY' || fail "--only head: $(cat "$T/out")"
import re, sys
rows = [l for l in open(sys.argv[1]) if l.startswith("| ") and not l.startswith("| pattern")]
assert len(rows) == 1, rows
m = re.match(r"\| head \| ([0-9.]+) \| ([0-9.]+) \|$", rows[0].strip())
assert m and float(m.group(1)) > 1 and float(m.group(2)) > 0, rows
PY
fi
finish
