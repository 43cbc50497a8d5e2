#!/bin/sh
# Installs what sia needs to build (Debian 12 packages, only those missing), then configures
# and builds it into build/. Idempotent: run it as often as you like.
#   scripts/setup.sh            install dependencies and build (Release)
#   SIA_BUILD_DIR=dir scripts/setup.sh    build elsewhere
#   SIA_SKIP_APT=1 scripts/setup.sh       do not touch packages
#   SIA_EXTRA_PACKAGES="..." scripts/setup.sh  also install these (scripts/test.sh's)
#   SIA_BUILD_TARGETS="a b" scripts/setup.sh   build only these targets (default: all)
set -eu
cd "$(dirname "$0")/.."
pkgs="build-essential cmake pkg-config libcli11-dev libglpk-dev nlohmann-json3-dev \
libtomlplusplus-dev libzmq3-dev cppzmq-dev catch2 libnlopt-dev libqhull-dev \
${SIA_EXTRA_PACKAGES:-}"
if [ "${SIA_SKIP_APT:-0}" != 1 ]; then
  missing=""
  for p in $pkgs; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing="$missing $p"
  done
  if [ -n "$missing" ]; then
    echo "setup: installing:$missing" >&2
    if [ "$(id -u)" = 0 ]; then sudo=""; else sudo="sudo"; fi
    export DEBIAN_FRONTEND=noninteractive
    $sudo apt-get update -qq >&2
    # shellcheck disable=SC2086
    $sudo apt-get install -y -qq --no-install-recommends $missing >&2
  fi
fi
build="${SIA_BUILD_DIR:-build}"
jobs="$(nproc 2>/dev/null || echo 2)"
cmake -S . -B "$build" -DCMAKE_BUILD_TYPE="${SIA_BUILD_TYPE:-Release}" >&2
# shellcheck disable=SC2086
cmake --build "$build" -j "$jobs" ${SIA_BUILD_TARGETS:+--target $SIA_BUILD_TARGETS} >&2

# The job-side Python library (python/sia, sia-torch(7)) on the path of the system's
# python3, as `pip install -e` would: a .pth file naming python/. PyTorch is the job's own
# (Debian: python3-torch); scripts/test.sh installs it for the tests. Any other Python
# (a venv, conda, pyenv) gets it with `pip install ./python` (README, sia-torch(7)).
py="${SIA_PYTHON:-/usr/bin/python3}"
if [ -x "$py" ]; then
  if [ "$(id -u)" = 0 ]; then
    site="$("$py" -c 'import sysconfig; print(sysconfig.get_path("purelib"))')"
  else
    site="$("$py" -c 'import site; print(site.getusersitepackages())')"
  fi
  mkdir -p "$site" && echo "$(pwd)/python" >"$site/sia.pth"
else
  echo "setup: no $py: the sia Python library (python/) is not installed" >&2
fi
