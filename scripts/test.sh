#!/bin/sh
# Sets up (scripts/setup.sh), builds and runs the whole test suite. The README's test
# command and CI's .ci/run both run this.
set -eu
cd "$(dirname "$0")/.."
# Test-only weight: PyTorch for the Python library's tests and the PyTorch examples,
# clang-format for the formatting check, chromium to render the plot report (e2e/plot_browser.sh).
SIA_EXTRA_PACKAGES="python3-torch clang-format chromium" ./scripts/setup.sh
status=0
ctest --test-dir "${SIA_BUILD_DIR:-build}" --output-on-failure -j "$(nproc 2>/dev/null || echo 2)" ||
  status=$?
if command -v clang-format >/dev/null 2>&1; then
  ./scripts/format.sh || { echo "test: sources not formatted (scripts/format.sh --fix)" >&2; status=1; }
else
  echo "test: no clang-format: formatting not checked" >&2
fi
exit "$status"
