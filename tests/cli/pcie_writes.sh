#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# bench/pcie_writes.cu (the way back alone, docs/benchmarks.md): it builds
# with nvcc, refuses bad arguments with a message and exit 2 before
# touching the GPU, exits 77 without one, and on a GPU prints one row for
# the one case asked for, with a release that took some time.
# Skipped (77) where there is no nvcc (NVCC, default /usr/local/cuda/bin/nvcc).
. "$(dirname "$0")/lib.sh"
nvcc_bench pcie_writes
PW=$T/pcie_writes
check_bad() { bench_refuses "$PW" "$@"; }
check_bad "a record not a multiple of 16" --rec 100
check_bad "a record of 0" --rec 0
check_bad "a bad list" --rec 64,,128
check_bad "0 blocks" --blocks 0
check_bad "--n 10" --n 10
check_bad "--threads 48" --threads 48
check_bad "--dst elsewhere" --dst elsewhere
check_bad "--mem other" --mem other
check_bad "an unknown option" --bogus 1
check_bad "a value missing" --n
"$PW" --rec 4096 --blocks 1 --copy block16 --n 200 --gap 1 >"$T/out" 2>"$T/err"; rc=$?
if bench_ran $rc "one case"; then
	python3 - "$T/out" <<'PY' || fail "one case: $(cat "$T/out")"
import re, sys
rows = [l for l in open(sys.argv[1]) if l.startswith("| ") and not l.startswith("| copy")]
assert len(rows) == 1, rows
m = re.match(r"\| block16 \| 1 \| 4096 \| ([0-9.]+) / ([0-9.]+) \| ([0-9.]+) / ([0-9.]+) \| ([0-9.]+) \|$",
             rows[0].strip())
assert m, rows
i50, i99, r50, r99, gbs = map(float, m.groups())
assert 0 < i50 <= i99 and 0 < r50 <= r99 and gbs > 0, rows
PY
fi
finish
