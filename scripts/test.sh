#!/bin/sh
# Sets up (scripts/setup.sh), builds and runs the whole test suite. The README's test
# command and CI's .ci/run both run this.
set -eu
cd "$(dirname "$0")/.."
# Test-only weight: PyTorch for the Python library's tests and the PyTorch examples.
SIA_EXTRA_PACKAGES="python3-torch" ./scripts/setup.sh
ctest --test-dir "${SIA_BUILD_DIR:-build}" --output-on-failure -j "$(nproc 2>/dev/null || echo 2)"
