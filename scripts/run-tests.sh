#!/usr/bin/env bash
# Install, build, and run every test (GPU tests skip without a GPU).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/deps.sh
bash scripts/build.sh
meson test -C build --num-processes "$(nproc)" --print-errorlogs "$@"
# bounded fuzzing of the BPF translator and interpreter (libFuzzer, clang)
bash scripts/run-fuzz.sh "${FUZZ_SECONDS:-60}"
