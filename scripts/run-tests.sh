#!/usr/bin/env bash
# Install, build, and run every test (GPU tests skip without a GPU), then
# fuzz the BPF translator for a bounded time. Ends with one line:
# "tests: N passed, N failed, N skipped".
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/deps.sh
bash scripts/build.sh
log=$(mktemp)
trap 'rm -f "$log"' EXIT
rc=0
meson test -C build --num-processes "$(nproc)" --print-errorlogs "$@" 2>&1 | tee "$log" || rc=$?
# bounded fuzzing of the BPF translator and interpreter (libFuzzer, clang)
bash scripts/run-fuzz.sh "${FUZZ_SECONDS:-60}" || rc=$?
n() { sed -n "s/^$1: *\\([0-9][0-9]*\\).*/\\1/p" "$log" | tail -1; }
fails=$(( $(n Fail) + $(n Timeout) + $(n 'Unexpected Pass') ))
echo "tests: $(n Ok) passed, $fails failed, $(n Skipped) skipped"
exit $rc
