#!/usr/bin/env bash
# Every C and CUDA source the repository tracks follows .clang-format
# (clang-format 14, Debian 12's). Lists the files that do not, with the
# command that fixes them; exit 1 then, 77 (skip) without clang-format.
set -uo pipefail
cd "${1:-$(dirname "$0")/..}"
cf=${CLANG_FORMAT:-clang-format}
command -v "$cf" >/dev/null || { echo "no $cf: not checked"; exit 77; }
files=$(git ls-files '*.c' '*.h' '*.cu' '*.cuh')
[ -n "$files" ] || { echo "no sources found"; exit 1; }
bad=()
for f in $files; do
	"$cf" --style=file --dry-run --Werror "$f" >/dev/null 2>&1 || bad+=("$f")
done
n=$(echo "$files" | wc -l)
if [ ${#bad[@]} -gt 0 ]; then
	echo "format: ${#bad[@]} of $n files do not follow .clang-format:"
	printf '  %s\n' "${bad[@]}"
	echo "fix: $cf -i --style=file ${bad[*]}"
	exit 1
fi
echo "format: $n files follow .clang-format"
