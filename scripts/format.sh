#!/bin/sh
# Checks that the C++ and CUDA sources (lib/ tools/ tests/ bench/ fuzz/) follow .clang-format:
# prints every place clang-format would change and exits 1 if there is one.
#   scripts/format.sh          check (clang-format --dry-run --Werror); scripts/test.sh runs it
#   scripts/format.sh --fix    reformat the files in place
set -eu
cd "$(dirname "$0")/.."
if [ "${1:-}" = --fix ]; then mode="-i"; else mode="--dry-run --Werror"; fi
# shellcheck disable=SC2086
find lib tools tests bench fuzz -type f \( -name '*.cpp' -o -name '*.hpp' -o -name '*.cu' \) -print0 |
  sort -z | xargs -0 clang-format --style=file $mode
