#!/bin/sh
# Sets up (scripts/setup.sh), builds and runs the whole test suite. The README's test
# command and CI's .ci/run both run this.
set -eu
cd "$(dirname "$0")/.."
# Test-only weight: PyTorch for the Python library's tests and the PyTorch examples,
# clang-format for the formatting check, chromium to render the plot report
# (e2e/plot_browser.sh), clang and its sanitizer and libFuzzer runtimes for the fuzz smoke,
# venv and setuptools for `pip install ./python` into a fresh environment (python/install),
# slurm-wlm and munge for the e2e tests on a private Slurm (tests/e2e/lib/slurm.sh), iproute2
# for the e2e tests of separate hosts in network namespaces (tests/e2e/lib/netns.sh).
SIA_EXTRA_PACKAGES="python3-torch python3-venv python3-setuptools clang-format chromium clang libclang-rt-14-dev slurm-wlm munge iproute2" ./scripts/setup.sh
status=0
# The fuzz targets (clang, sanitizers: the library once more, minutes) build beside the
# suite at the lowest priority: most of the e2e tests' time is waiting for rounds, and a
# test must pass on a loaded machine anyway.
fuzz_build=""
if command -v clang++ >/dev/null 2>&1; then
  fuzz_log=$(mktemp)
  nice -n 19 ./scripts/fuzz.sh --build-only >"$fuzz_log" 2>&1 &
  fuzz_build=$!
fi
ctest --test-dir "${SIA_BUILD_DIR:-build}" --output-on-failure -j "$(nproc 2>/dev/null || echo 2)" ||
  status=$?
# Fuzz smoke: every fuzz target (fuzz/) for a few seconds from its seed corpus; a crash,
# leak, sanitizer report or internal error fails the test (scripts/fuzz.sh for long runs).
if [ -n "$fuzz_build" ]; then
  if ! wait "$fuzz_build"; then
    cat "$fuzz_log" >&2
    echo "test: the fuzz targets did not build (see above)" >&2
    status=1
  elif ! ./scripts/fuzz.sh --time "${SIA_FUZZ_SMOKE_SECONDS:-20}"; then
    echo "test: fuzzing found something (see above; scripts/fuzz.sh)" >&2
    status=1
  fi
  rm -f "$fuzz_log"
else
  echo "test: no clang++: fuzz targets not built or run" >&2
fi
if command -v clang-format >/dev/null 2>&1; then
  ./scripts/format.sh || { echo "test: sources not formatted (scripts/format.sh --fix)" >&2; status=1; }
else
  echo "test: no clang-format: formatting not checked" >&2
fi
exit "$status"
