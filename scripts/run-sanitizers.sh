#!/usr/bin/env bash
# Every meson test again, built with AddressSanitizer and UBSan into
# build-asan/ (GCAP_ASAN_BUILD): memory errors, undefined behaviour and
# leaks in the host code fail the test that hit them (gpu-capture exits
# 1 on a report, 23 on a leak, so the process-level tests catch those
# too). GPU tests skip here as in the plain build; on the GPU machine
# scripts/device/asan-run.sh runs them under the same sanitizers.
# Extra arguments go to meson test.
set -euo pipefail
cd "$(dirname "$0")/.."
b=${GCAP_ASAN_BUILD:-build-asan}
if [ ! -f "$b/build.ninja" ]; then
	meson setup "$b" -Db_sanitize=address,undefined -Db_lundef=false >/dev/null
fi
ninja -C "$b" -j"$(nproc)" >/dev/null
export ASAN_OPTIONS=detect_leaks=1:halt_on_error=1
export UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1
exec meson test -C "$b" --num-processes "$(nproc)" --print-errorlogs "$@"
