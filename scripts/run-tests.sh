#!/usr/bin/env bash
# Install, build, and run every test (GPU tests skip without a GPU), fuzz
# for a bounded time (scripts/run-fuzz.sh), then run every test again built
# with ASan and UBSan (scripts/run-sanitizers.sh; GCAP_SANITIZERS=0 skips
# it). Ends with two lines: "tests: N passed, N failed, N skipped" and the
# same for the sanitizer build.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/deps.sh
bash scripts/build.sh
log=$(mktemp)
slog=$(mktemp)
trap 'rm -f "$log" "$slog"' EXIT
rc=0
meson test -C build --num-processes "$(nproc)" --print-errorlogs "$@" 2>&1 | tee "$log" || rc=$?
# bounded fuzzing (libFuzzer, clang): the BPF translator, the capture-file
# path, the inline kernel helpers; FUZZ_SECONDS in all
bash scripts/run-fuzz.sh "${FUZZ_SECONDS:-60}" || rc=$?
if [ "${GCAP_SANITIZERS:-1}" != 0 ]; then
	bash scripts/run-sanitizers.sh "$@" 2>&1 | tee "$slog" || rc=$?
fi
summary() { # LOG WHAT
	n() { sed -n "s/^$1: *\\([0-9][0-9]*\\).*/\\1/p" "$2" | tail -1; }
	local fails=$(( $(n Fail "$1") + $(n Timeout "$1") + $(n 'Unexpected Pass' "$1") ))
	echo "$2: $(n Ok "$1") passed, $fails failed, $(n Skipped "$1") skipped"
}
summary "$log" tests
[ -s "$slog" ] && summary "$slog" "tests under ASan/UBSan"
exit $rc
